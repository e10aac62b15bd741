package claude

import (
	"cmp"
	"context"
	"slices"

	"github.com/sessctl/sessctl/pkg/session"
)

// The live map of a transcript (session.LiveMapEntry): its live messages
// in send order, from the structure pass (buildIndex, walk, turns).
// TestLiveMapSameHistory holds History through it to History without one.

// liveMapTag names the encoding and the rules; another is built anew.
const liveMapTag = "claude/livemap/1"

// buildLiveMap reads the file's structure and encodes its live map; nil
// when it gets none. want, when set, is asked of the live messages' lines
// on the way: hit says what it answered, entry by entry.
func buildLiveMap(ctx context.Context, path string, want func([]byte) bool) (b []byte, hit []bool, err error) {
	ix, err := buildIndex(ctx, path, want)
	if err != nil {
		return nil, nil, err
	}
	c := ix.walk()
	turns := ix.turns(c)
	var live []int32
	for _, i := range c.order {
		if ix.nodes[i].message && c.live[i] {
			live = append(live, i)
		}
	}
	es := make([]session.LiveMapEntry, len(live))
	hit = make([]bool, len(live))
	for k, i := range live {
		n := &ix.nodes[i]
		es[k] = session.LiveMapEntry{Line: n.line, Off: n.off, Len: n.len, Turn: turns.at.At(n.off)}
		hit[k] = n.hit
	}
	holds := func(k int) []uint64 {
		n := &ix.nodes[live[k]]
		return append(ix.calls(n), ix.results(n)...)
	}
	answers := func(k int) []uint64 { return ix.results(&ix.nodes[live[k]]) }
	return session.EncodeLiveMapWith(liveMapTag, es, holds, answers), hit, nil
}

// historyByLiveMap is History with Want through the file's live map; done is
// false when there is none to go by (History reads as without one).
func (h Home) historyByLiveMap(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) (done bool, err error) {
	es, wanted, ok, err := session.LiveMapFor(ctx, path, liveMapTag, opt.LiveMaps, opt.Want, func(want func([]byte) bool) ([]byte, []bool, error) {
		return buildLiveMap(ctx, path, want)
	})
	if !ok || err != nil {
		return ok, err
	}
	// a wanted message's place among the wanted, in send order, and its
	// turn, by its line
	type place struct{ rank, turn int }
	of := map[int]place{}
	var at []session.LineAt
	for k, e := range es {
		if wanted[k] {
			of[e.Line] = place{len(at), e.Turn}
			at = append(at, session.LineAt{Num: e.Line, Offset: e.Off, Len: e.Len})
		}
	}
	slices.SortFunc(at, func(a, b session.LineAt) int { return cmp.Compare(a.Offset, b.Offset) })
	// read in file order, given in send order: a message that comes
	// before its place waits
	held := map[int]session.Message{}
	next := 0
	err = session.ReadLinesAt(ctx, path, h, at, func(r *session.Record) error {
		p, ok := of[r.Line.Num]
		if !ok {
			return nil
		}
		k := p.rank
		m := message(r)
		m.Turn, m.State = p.turn, session.Live
		if k != next {
			held[k] = cloneMessage(&m)
			return nil
		}
		if err := fn(&m); err != nil {
			return err
		}
		for next++; ; next++ {
			hm, ok := held[next]
			if !ok {
				return nil
			}
			delete(held, next)
			if err := fn(&hm); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return true, err
	}
	// what is still held waited for a line that did not come (the file
	// changed since its live map): given in send order all the same
	rest := make([]int, 0, len(held))
	for k := range held {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		m := held[k]
		if err := fn(&m); err != nil {
			return true, err
		}
	}
	return true, nil
}
