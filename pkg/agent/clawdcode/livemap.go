package clawdcode

import (
	"context"

	"github.com/sessctl/sessctl/pkg/session"
)

// The live map of a clawdcode transcript (session.LiveMapEntry): its
// messages after the last compact_boundary, in file order (the order
// clawdcode loads them), each with its turn. Building it is the structure
// pass History makes anyway (scanFile); a search through it reads and
// decodes only the lines with a hit and their partners.
// TestLiveMapAsHistory holds it to History.

// liveMapTag names the encoding and the rules; another is built anew.
const liveMapTag = "clawdcode/livemap/1"

// buildLiveMap reads the file and encodes its live map; want, when set, is
// asked of each message line on the way: hit says what it answered, entry
// by entry.
func buildLiveMap(ctx context.Context, path string, want func([]byte) bool) (b []byte, hit []bool, err error) {
	type cand struct {
		e              session.LiveMapEntry
		hit            bool
		holds, answers []string
	}
	var cands []cand
	sc, err := scanFileEach(ctx, path, func(r *session.Record) {
		if !conversational(r) {
			return
		}
		c := cand{e: session.LiveMapEntry{Line: r.Line.Num, Off: r.Line.Offset, Len: r.Line.Len, Sub: -1},
			hit: want != nil && want(r.Line.Raw)}
		for _, tc := range r.ToolCalls {
			c.holds = append(c.holds, tc.ID)
		}
		for _, tr := range r.ToolResults {
			c.holds, c.answers = append(c.holds, tr.CallID), append(c.answers, tr.CallID)
		}
		cands = append(cands, c)
	})
	if err != nil {
		return nil, nil, err
	}
	var (
		es             []session.LiveMapEntry
		holds, answers [][]string
	)
	for _, c := range cands {
		if c.e.Off < sc.boundary {
			continue // compacted
		}
		c.e.Turn = sc.at.At(c.e.Off)
		es, hit = append(es, c.e), append(hit, c.hit)
		holds, answers = append(holds, c.holds), append(answers, c.answers)
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
		if !conversational(r) {
			return nil // the file changed since its map
		}
		m := message(r, turn)
		return fn(&m)
	})
}
