package codex

import (
	"context"

	"github.com/sessctl/sessctl/pkg/session"
)

// The live map of a rollout (session.LiveMapEntry): the items of the
// history Codex rebuilds, in file order (which is the order it sends
// them), each a line or an item of a compacted line's replacement history
// (Sub, as entryKey.sub), without the outputs Codex leaves out of every
// request; Marks are the calls no live output answers (Codex adds its own
// "aborted" after each, so the message is always decoded). Building it
// reads the file as History does; a search through it reads only the
// lines with a hit, their partners and those calls. TestLiveMapAsHistory
// holds it to History.

// liveMapTag names the encoding and the rules; another is built anew.
const liveMapTag = "codex/livemap/1"

// buildLiveMap replays the file and encodes its live map; nil when it
// gets none. The replay's history is the map: its entries are in file
// order and know their calls and results, so the file is read once.
//
// want, when set, is asked of the entries' lines on the way: hit says
// what it answered, entry by entry.
func buildLiveMap(ctx context.Context, path string, want func([]byte) bool) (b []byte, hit []bool, err error) {
	rp, err := replayWith(ctx, path, replayHome{}, want)
	if err != nil {
		return nil, nil, err
	}
	var (
		es             []session.LiveMapEntry
		holds, answers [][]string
	)
	for k, h := range rp.hist {
		if k > 0 && h.off < rp.hist[k-1].off {
			// not in file order: the search gives the messages in the
			// order it reads them, so it reads as without a map
			return nil, nil, nil
		}
		if len(h.results) > 0 && len(h.calls) == 0 && !anyID(h.results, rp.called) {
			continue // left out of every request (History: Dropped)
		}
		e := session.LiveMapEntry{Line: h.line, Off: h.off, Len: h.len, Sub: h.sub, Turn: rp.at.At(h.off)}
		for i, id := range h.calls {
			if id != "" && !rp.answered[id] {
				e.Marks, e.Always = append(e.Marks, int32(i)), true
			}
		}
		es, hit = append(es, e), append(hit, h.hit)
		holds, answers = append(holds, append(h.calls[:len(h.calls):len(h.calls)], h.results...)), append(answers, h.results)
	}
	return session.EncodeLiveMapWith(liveMapTag, es, func(k int) []string { return holds[k] }, func(k int) []string { return answers[k] }), hit, nil
}

func anyID(ids []string, in map[string]bool) bool {
	for _, id := range ids {
		if in[id] {
			return true
		}
	}
	return false
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
	// the lines to read, once each, in file order (the map's order), and
	// where each line's entries start
	var at []session.LineAt
	first := map[int]int{}
	for k, e := range es {
		if !wanted[k] {
			continue
		}
		if _, ok := first[e.Line]; !ok {
			first[e.Line] = k
			at = append(at, session.LineAt{Num: e.Line, Offset: e.Off, Len: e.Len})
		}
	}
	return true, session.ReadLinesAt(ctx, path, h, at, func(r *session.Record) error {
		k0, ok := first[r.Line.Num]
		if !ok {
			return nil
		}
		var items []replItem
		if r.Type == "compacted" {
			items = replacement(r.Line.Raw)
		}
		for k := k0; k < len(es) && es[k].Line == r.Line.Num; k++ {
			e := &es[k]
			if !wanted[k] {
				continue
			}
			rec := *r
			switch {
			case r.Type != "compacted":
				if e.Sub != -1 || !historyItem(r) {
					continue // the file changed since its map
				}
			case e.Sub == legacySub:
				rec = legacySummary(r)
			case e.Sub >= 0 && e.Sub < len(items):
				rec = items[e.Sub].record(r)
			default:
				continue
			}
			m := message(&rec)
			m.Turn, m.State = e.Turn, session.Live
			if err := fn(&m); err != nil {
				return err
			}
			for _, i := range e.Marks {
				if int(i) >= len(m.ToolCalls) {
					continue
				}
				if err := fn(abortedOutput(&m, m.ToolCalls[i].ID)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
