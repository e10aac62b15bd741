package kimi

import (
	"context"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// The live map of a context file (session.LiveMapEntry): the message
// records Kimi accepts, in file order (which is the order it sends them),
// each with the checkpoint it follows as its turn. Building it reads the
// file as History does; a search through it reads and decodes only the
// lines with a hit and their partners, each read as Kimi reads it
// (ReadLine). TestLiveMapAsHistory holds it to History.

// liveMapTag names the encoding and the rules; another is built anew.
const liveMapTag = "kimi/livemap/1"

// ReadLine implements session.LineReader: Kimi reads a line as Python
// does (Repair).
func (Home) ReadLine(l *jsonl.Line) { Repair(l) }

// buildLiveMap reads the file and encodes its live map; nil when it gets
// none. want, when set, is asked of each message line's bytes as they
// are in the file: hit says what it answered, entry by entry.
func buildLiveMap(ctx context.Context, path string, want func([]byte) bool) (b []byte, hit []bool, err error) {
	var (
		es             []session.LiveMapEntry
		holds, answers [][]string
		h              bool // want's answer for the line being read
	)
	turn := -1
	err = readRecordsRaw(ctx, path, func(l *jsonl.Line) {
		h = want != nil && l.Raw != nil && want(l.Raw) // the file's bytes, before Repair
	}, func(r *session.Record) error {
		switch {
		case r.Kind == session.KindCheckpoint:
			turn = r.CheckpointID
			return nil
		case r.Kind != session.KindMessage || !accepted(r):
			return nil
		}
		var ho, an []string
		for _, c := range r.ToolCalls {
			ho = append(ho, c.ID)
		}
		for _, res := range r.ToolResults {
			ho, an = append(ho, res.CallID), append(an, res.CallID)
		}
		// Repair leaves the line's offset and length as they are in the file
		es = append(es, session.LiveMapEntry{Line: r.Line.Num, Off: r.Line.Offset, Len: r.Line.Len, Sub: -1, Turn: turn})
		hit, holds, answers = append(hit, h), append(holds, ho), append(answers, an)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return session.EncodeLiveMapWith(liveMapTag, es, func(k int) []string { return holds[k] }, func(k int) []string { return answers[k] }), hit, nil
}

// historyByLiveMap is History with Want through the file's live map; done
// is false when there is none to go by (History reads as without one).
func (h Home) historyByLiveMap(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) (done bool, err error) {
	es, wanted, ok, err := session.LiveMapFor(ctx, path, liveMapTag, opt.LiveMaps, opt.Want, func(want func([]byte) bool) ([]byte, []bool, error) {
		return buildLiveMap(ctx, path, want)
	})
	if !ok || err != nil {
		return ok, err
	}
	return true, session.LiveMapLines(ctx, path, h, es, wanted, func(r *session.Record, turn int) error {
		if r.Kind != session.KindMessage {
			return nil // the file changed since its map
		}
		m := message(r, turn)
		return fn(&m)
	})
}
