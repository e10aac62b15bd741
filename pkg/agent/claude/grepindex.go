package claude

import (
	"context"
	"encoding/binary"
	"io"
	"math"
	"slices"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// A layout is what History with Want needs of a file's structure pass,
// kept between runs (session.HistoryOptions.Layouts: the index): the live
// messages in send order, each with its line, offset, length and turn,
// and the live messages that hold a call or a result with the id of one
// of its results (its partners: decoded with it, so that show names its
// results as a read of every line would). With a layout kept, a search
// of the file reads the live messages' lines for Want, and decodes only
// those Want takes and their partners: no structure scan, no validation
// of the other lines. TestLayoutSameHits holds it to History without one.

// layoutTag names the encoding below; another one is built anew.
const layoutTag = "claude/layout/1"

type layoutEntry struct {
	line     int
	off, len int64
	turn     int
	partners []int32 // places in send order
}

// maxPartners bounds the partners of a layout (in all) to this many per
// live message: a file whose results repeat ids without end gets no
// layout, and is searched as without one.
const maxPartners = 8

// buildLayout reads the file's structure and encodes its layout; nil when
// it gets none.
func buildLayout(ctx context.Context, path string) ([]byte, error) {
	ix, err := buildIndex(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	c := ix.walk()
	turns := ix.turns(c)
	var live []int32
	for _, i := range c.order {
		if ix.nodes[i].message && c.live[i] {
			live = append(live, i)
		}
	}
	// the live messages holding each id, as a call or a result
	holders := map[uint64][]int32{}
	for k, i := range live {
		n := &ix.nodes[i]
		for _, id := range n.calls {
			holders[id] = appendOnce(holders[id], int32(k))
		}
		for _, id := range n.results {
			holders[id] = appendOnce(holders[id], int32(k))
		}
	}
	b := append([]byte(nil), layoutTag...)
	b = binary.AppendUvarint(b, uint64(len(live)))
	total := 0
	var ps []int32
	for k, i := range live {
		n := &ix.nodes[i]
		ps = ps[:0]
		for _, id := range n.results {
			for _, p := range holders[id] {
				if p != int32(k) && !slices.Contains(ps, p) {
					ps = append(ps, p)
				}
			}
		}
		if total += len(ps); total > maxPartners*len(live)+1024 {
			return nil, nil
		}
		b = binary.AppendUvarint(b, uint64(n.line))
		b = binary.AppendUvarint(b, uint64(n.off))
		b = binary.AppendUvarint(b, uint64(n.len))
		b = binary.AppendVarint(b, int64(turns.at.At(n.off)))
		b = binary.AppendUvarint(b, uint64(len(ps)))
		for _, p := range ps {
			b = binary.AppendUvarint(b, uint64(p))
		}
	}
	return b, nil
}

func appendOnce(s []int32, k int32) []int32 {
	if len(s) > 0 && s[len(s)-1] == k {
		return s
	}
	return append(s, k)
}

// decodeLayout decodes a layout; ok is false for one that is not whole.
func decodeLayout(b []byte) (es []layoutEntry, ok bool) {
	if len(b) < len(layoutTag) || string(b[:len(layoutTag)]) != layoutTag {
		return nil, false
	}
	b = b[len(layoutTag):]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	cnt, ok := next()
	if !ok || cnt > uint64(len(b)) {
		return nil, false
	}
	es = make([]layoutEntry, cnt)
	for k := range es {
		e := &es[k]
		line, ok1 := next()
		off, ok2 := next()
		ln, ok3 := next()
		turn, n := binary.Varint(b)
		if !ok1 || !ok2 || !ok3 || n <= 0 || line > math.MaxInt32 || off > math.MaxInt64/2 || ln > math.MaxInt32 || turn < -1 || turn > math.MaxInt32 {
			return nil, false
		}
		b = b[n:]
		e.line, e.off, e.len, e.turn = int(line), int64(off), int64(ln), int(turn)
		np, ok := next()
		if !ok || np > uint64(len(b)) {
			return nil, false
		}
		if np > 0 {
			e.partners = make([]int32, np)
		}
		for j := range e.partners {
			p, ok := next()
			if !ok || p >= cnt {
				return nil, false
			}
			e.partners[j] = int32(p)
		}
	}
	return es, len(b) == 0
}

// historyByLayout is History with Want through the file's layout; done is
// false when there is none to go by (History reads as without one).
func (h Home) historyByLayout(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) (done bool, err error) {
	if jsonl.IsCompressedName(path) {
		return false, nil // its offsets are not the file's
	}
	b, err := opt.Layouts.Layout(path, layoutTag, func() ([]byte, error) { return buildLayout(ctx, path) })
	if err != nil {
		return true, err
	}
	es, ok := decodeLayout(b)
	if !ok {
		return false, nil
	}
	hit, err := wantedLines(ctx, path, es, opt.Want)
	if err != nil {
		return true, err
	}
	wanted := make([]bool, len(es))
	for k, e := range es {
		if hit[k] {
			wanted[k] = true
			for _, p := range e.partners {
				wanted[p] = true
			}
		}
	}
	// rank: a wanted message's place among the wanted, in send order
	rank := make(map[int]int) // line -> rank
	var at []session.LineAt
	for k, e := range es {
		if wanted[k] {
			rank[e.line] = len(rank)
			at = append(at, session.LineAt{Num: e.line, Offset: e.off, Len: e.len})
		}
	}
	turnOf := make(map[int]int, len(at))
	for k, e := range es {
		if wanted[k] {
			turnOf[e.line] = e.turn
		}
	}
	slices.SortFunc(at, func(a, b session.LineAt) int { return int(a.Offset - b.Offset) })
	// read in file order, given in send order: a message that comes
	// before its place waits
	held := map[int]session.Message{}
	next := 0
	err = session.ReadLinesAt(ctx, path, h, at, func(r *session.Record) error {
		k, ok := rank[r.Line.Num]
		if !ok {
			return nil
		}
		m := message(r)
		m.Turn, m.State = turnOf[r.Line.Num], session.Live
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
	// changed since its layout): given in send order all the same
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

// layoutReadBuf is how much of the file wantedLines reads at a time (a
// variable for tests).
var layoutReadBuf = 1 << 20

// wantedLines asks want of the raw line of each live message, reading the
// file forward in large reads (the bytes between the lines are read too,
// but not looked at). A line past the end of the file is not taken.
func wantedLines(ctx context.Context, path string, es []layoutEntry, want func([]byte) bool) ([]bool, error) {
	f, err := jsonl.OpenRaw(path) // a regular file only: never waits on a FIFO
	if err != nil {
		return nil, err
	}
	defer f.Close()
	order := make([]int32, len(es))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(a, b int32) int { return int(es[a].off - es[b].off) })
	hit := make([]bool, len(es))
	buf := make([]byte, layoutReadBuf)
	var start int64 = -1 // the file offset of buf[0]
	have := 0
	for n, k := range order {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e := &es[k]
		if start < 0 || e.off < start || e.off+e.len > start+int64(have) {
			if e.len > int64(len(buf)) {
				buf = make([]byte, e.len)
			}
			m, err := f.ReadAt(buf, e.off)
			if err != nil && err != io.EOF {
				return nil, err
			}
			start, have = e.off, m
			if e.len > int64(have) {
				continue // the file is shorter now
			}
		}
		lo := e.off - start
		hit[k] = want(buf[lo : lo+e.len])
	}
	return hit, nil
}
