package session

import (
	"cmp"
	"context"
	"encoding/binary"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// A live map is what History with Want needs of a file's structure, kept
// between runs (HistoryOptions.LiveMaps: the index): the live messages in
// the order the client sends them, each with its line, offset, length,
// turn, and the live messages that hold a call or a result with the id of
// one of its results (its partners: decoded with it, so that show names
// its results as a read of every line would). With a live map kept, a
// search of the file reads the live messages' lines for Want and decodes
// only those it takes and their partners: no structure pass over the
// file. A home builds its map from its own structure pass and gives the
// messages from it (the Claude Code and Codex homes).

// LiveMapEntry is one live message of a live map.
type LiveMapEntry struct {
	Line     int
	Off, Len int64 // the line's offset and length (without its terminator)
	// Sub says which of the line's messages it is, in the home's own
	// numbering (a Codex compacted line holds many)
	Sub  int
	Turn int
	// Partners are places in the map (the partners above)
	Partners []int32
	// Marks are small numbers of the home's own (Codex: the calls of the
	// message that no output answers)
	Marks []int32
	// Always: decode it whatever Want says (Codex: Codex adds an output
	// of its own after it)
	Always bool
}

// MaxLiveMapPartners bounds the partners of a live map, in all, to this
// many per live message: a file whose results repeat ids without end gets
// no map (LiveMapPartners), and is searched as without one.
const MaxLiveMapPartners = 8

// LiveMapPartners sets the partners of the map's entries: ids(k) gives the
// ids of the calls and results entry k holds, results(k) those it answers.
// It is false when there are too many (MaxLiveMapPartners).
func LiveMapPartners[K comparable](es []LiveMapEntry, holds func(k int) []K, answers func(k int) []K) bool {
	holders := map[K][]int32{}
	for k := range es {
		for _, id := range holds(k) {
			h := holders[id]
			if len(h) == 0 || h[len(h)-1] != int32(k) {
				holders[id] = append(h, int32(k))
			}
		}
	}
	// the ids are session text: the work is bounded as well as the
	// partners, and a partner already taken is known by its mark (not by
	// a search of those taken), so that no file makes this quadratic
	bound := MaxLiveMapPartners*len(es) + 1024
	mark := make([]int32, len(es)) // k+1: taken for entry k
	total, visits := 0, 0
	for k := range es {
		var ps []int32
		for _, id := range answers(k) {
			for _, p := range holders[id] {
				if visits++; visits > 8*bound {
					return false
				}
				if p != int32(k) && mark[p] != int32(k)+1 {
					mark[p] = int32(k) + 1
					ps = append(ps, p)
				}
			}
		}
		if total += len(ps); total > bound {
			return false
		}
		es[k].Partners = ps
	}
	return true
}

// EncodeLiveMapWith sets the partners of the map's entries
// (LiveMapPartners) and encodes it under tag; nil when there are too many.
func EncodeLiveMapWith[K comparable](tag string, es []LiveMapEntry, holds, answers func(k int) []K) []byte {
	if !LiveMapPartners(es, holds, answers) {
		return nil
	}
	return EncodeLiveMap(tag, es)
}

// EncodeLiveMap encodes a live map under the home's tag (which names its
// encoding and rules: a map under another tag is not taken).
func EncodeLiveMap(tag string, es []LiveMapEntry) []byte {
	b := append([]byte(nil), tag...)
	b = binary.AppendUvarint(b, uint64(len(es)))
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.Line))
		b = binary.AppendUvarint(b, uint64(e.Off))
		b = binary.AppendUvarint(b, uint64(e.Len))
		b = binary.AppendVarint(b, int64(e.Sub))
		b = binary.AppendVarint(b, int64(e.Turn))
		flags := uint64(0)
		if e.Always {
			flags = 1
		}
		b = binary.AppendUvarint(b, flags)
		for _, list := range [][]int32{e.Partners, e.Marks} {
			b = binary.AppendUvarint(b, uint64(len(list)))
			for _, p := range list {
				b = binary.AppendUvarint(b, uint64(p))
			}
		}
	}
	return b
}

// DecodeLiveMap decodes a live map encoded under tag; ok is false for one
// that is not whole, or not of tag.
func DecodeLiveMap(tag string, b []byte) (es []LiveMapEntry, ok bool) {
	if len(b) < len(tag) || string(b[:len(tag)]) != tag {
		return nil, false
	}
	b = b[len(tag):]
	bad := false
	uv := func(limit uint64) uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > limit {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	sv := func() int {
		v, n := binary.Varint(b)
		if n <= 0 || v < math.MinInt32 || v > math.MaxInt32 {
			bad = true
			return 0
		}
		b = b[n:]
		return int(v)
	}
	cnt := uv(uint64(len(b)))
	if bad {
		return nil, false
	}
	es = make([]LiveMapEntry, cnt)
	for k := range es {
		e := &es[k]
		e.Line = int(uv(math.MaxInt32))
		e.Off = int64(uv(math.MaxInt64 / 2))
		e.Len = int64(uv(math.MaxInt32))
		e.Sub, e.Turn = sv(), sv()
		e.Always = uv(1) == 1
		for _, list := range []*[]int32{&e.Partners, &e.Marks} {
			n := uv(uint64(len(b)))
			if bad {
				return nil, false
			}
			if n > 0 {
				*list = make([]int32, n)
			}
			for j := range *list {
				(*list)[j] = int32(uv(math.MaxInt32))
			}
		}
		if bad || e.Turn < -1 {
			return nil, false
		}
		for _, p := range e.Partners {
			if uint64(p) >= cnt {
				return nil, false
			}
		}
	}
	return es, len(b) == 0
}

// LiveMapWanted says which entries of a live map to decode: those whose
// line want takes (asked of each line's raw bytes, the file read forward
// in large reads: the bytes between the lines are read but not looked
// at), their partners, and those Always marks. A line past the end of the
// file is not taken. The file is opened as a regular file only.
func LiveMapWanted(ctx context.Context, path string, es []LiveMapEntry, want func([]byte) bool) ([]bool, error) {
	f, err := jsonl.OpenRaw(path) // never waits on a FIFO
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	order := make([]int32, len(es))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(es[a].Off, es[b].Off) })
	hit := make([]bool, len(es))
	bp := liveMapBufs.Get().(*[]byte)
	defer liveMapBufs.Put(bp)
	if len(*bp) != LiveMapReadBuf {
		*bp = make([]byte, LiveMapReadBuf)
	}
	buf := *bp
	var start int64 = -1 // the file offset of buf[0]
	have := 0
	for n, k := range order {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		e := &es[k]
		if n > 0 && e.Off == es[order[n-1]].Off {
			hit[k] = hit[order[n-1]] // another message of the same line
			continue
		}
		if e.Off+e.Len > size {
			continue // past the end of the file: the file is shorter now (or the map damaged)
		}
		if start < 0 || e.Off < start || e.Off+e.Len > start+int64(have) {
			if e.Len > int64(len(buf)) {
				buf = make([]byte, e.Len) // the longest line, at most the file
			}
			m, err := f.ReadAt(buf, e.Off)
			if err != nil && err != io.EOF {
				return nil, err
			}
			start, have = e.Off, m
			if e.Len > int64(have) {
				continue // the file is shorter now
			}
		}
		lo := e.Off - start
		hit[k] = want(buf[lo : lo+e.Len])
	}
	return LiveMapWantedFrom(es, hit), nil
}

// LiveMapBuild makes a file's live map (EncodeLiveMap; nil when the file
// gets none), asking want of the entries' lines on the way: hit[k] is its
// answer for entry k.
type LiveMapBuild func(want func([]byte) bool) (b []byte, hit []bool, err error)

// LiveMapFor is the first half of History with Want through a live map:
// the file's map under tag, kept in maps or made now by build, and which
// of its entries to decode (LiveMapWanted). ok is false when the file has
// none to go by (a compressed file, whose offsets are not the file's; one
// that gets no map): History then reads as without one.
func LiveMapFor(ctx context.Context, path, tag string, maps LiveMapCache, want func([]byte) bool, build LiveMapBuild) (es []LiveMapEntry, wanted []bool, ok bool, err error) {
	if jsonl.IsCompressedName(path) {
		return nil, nil, false, nil
	}
	var hit []bool // want's answers, when the map is made now
	b, err := maps.LiveMap(path, tag, func() (b []byte, err error) {
		b, hit, err = build(want)
		return b, err
	})
	if err != nil {
		return nil, nil, true, err
	}
	if es, ok = DecodeLiveMap(tag, b); !ok {
		return nil, nil, false, nil
	}
	wanted, err = LiveMapWantedMade(ctx, path, es, hit, want)
	return es, wanted, true, err
}

// LiveMapLines is the second half of History with Want through a live
// map, for a home whose entries are whole lines in file order (the order
// its client sends them): it reads and decodes the wanted lines (ReadLinesAt)
// and calls fn with each record and its entry's turn.
func LiveMapLines(ctx context.Context, path string, f Format, es []LiveMapEntry, wanted []bool, fn func(r *Record, turn int) error) error {
	turn := map[int]int{} // line -> turn, of the lines to read
	var at []LineAt
	for k, e := range es {
		if wanted[k] {
			turn[e.Line] = e.Turn
			at = append(at, LineAt{Num: e.Line, Offset: e.Off, Len: e.Len})
		}
	}
	return ReadLinesAt(ctx, path, f, at, func(r *Record) error {
		t, ok := turn[r.Line.Num]
		if !ok {
			return nil
		}
		return fn(r, t)
	})
}

// LiveMapWantedMade is LiveMapWanted of a map made by this search: hit,
// when it has an answer of want for each entry (asked while the map was
// made), spares reading the file again.
func LiveMapWantedMade(ctx context.Context, path string, es []LiveMapEntry, hit []bool, want func([]byte) bool) ([]bool, error) {
	if len(hit) == len(es) && hit != nil {
		return LiveMapWantedFrom(es, hit), nil
	}
	return LiveMapWanted(ctx, path, es, want)
}

// LiveMapWantedFrom is LiveMapWanted with the answers of want known
// (hit[k] for entry k: a home that has just read the file for its map
// asked want on the way).
func LiveMapWantedFrom(es []LiveMapEntry, hit []bool) []bool {
	wanted := make([]bool, len(es))
	for k, e := range es {
		if hit[k] || e.Always {
			wanted[k] = true
			for _, p := range e.Partners {
				wanted[p] = true
			}
		}
	}
	return wanted
}

// LiveMapReadBuf is how much of the file LiveMapWanted reads at a time (a
// variable for tests).
var LiveMapReadBuf = 1 << 20

// liveMapBufs keeps LiveMapWanted's buffers for the next files.
var liveMapBufs = sync.Pool{New: func() any { return new([]byte) }}
