// Package diff compares two session files record by record.
//
// Records are aligned by identity: the record's uuid where the format has
// one (Claude Code, clawdcode), the exact line otherwise. A record present
// on both sides with different bytes is "changed" (for formats without
// uuids, a removed and an added record of the same type at the same place
// are paired as changed). Inside changed messages, Text diffs the message
// text with github.com/sergi/go-diff.
//
// Compare streams each file once and keeps only a few hashes and offsets
// per line (about 40 bytes), never parsed records; the records to show are
// re-read by offset afterwards. Two 100 MB files are compared in bounded
// memory.
package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"sort"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Op is what happened to a record.
type Op uint8

// Operations.
const (
	Same Op = iota
	Removed
	Added
	Changed
)

var opNames = [...]string{Same: "same", Removed: "removed", Added: "added", Changed: "changed"}

func (o Op) String() string { return opNames[o] }

// MarshalText makes Op a JSON string.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// line is what Compare keeps of one line.
type line struct {
	off  int64
	n    int32 // length without the terminator
	typ  uint16
	uuid bool   // key is a uuid
	key  uint64 // identity: hash of the uuid, or of the line
	sum  uint64 // hash of the line's bytes
}

// Side is one scanned file.
type Side struct {
	Path  string
	Agent session.Agent
	lines []line
	types []string
}

// Records is the number of non-blank lines.
func (s *Side) Records() int { return len(s.lines) }

// Entry is one step of the alignment: record A of file A and/or record B
// of file B (indexes, -1 when absent) and their 1-based line numbers (0
// when absent; filled in by LineNumbers).
type Entry struct {
	Op           Op
	A, B         int32
	ALine, BLine int32
}

// Result is an alignment.
type Result struct {
	A, B    *Side
	Entries []Entry // every removed, added and changed record, in order
	Counts  map[Op]int
}

// Scan reads a file and keeps its per-line hashes. agent selects how
// identity is taken (session.Unknown: exact lines).
func Scan(path string, agent session.Agent, seed maphash.Seed) (*Side, error) {
	f, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Side{Path: path, Agent: agent}
	typeIndex := map[string]uint16{}
	rd := jsonl.NewReader(f)
	useUUID := session.HomeOf(agent) != nil // a record's own uuid is its identity (Claude Code, clawdcode)
	var h maphash.Hash
	h.SetSeed(seed)
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if l.Status == jsonl.Blank {
			continue
		}
		ln := line{off: l.Offset, n: int32(l.Len)}
		h.Reset()
		h.Write(l.Raw)
		ln.sum = h.Sum64()
		if l.Status == jsonl.TooLong {
			// its bytes were not kept: hash its offset and length instead
			h.Reset()
			fmt.Fprintf(&h, "toolong:%d:%d", l.Offset, l.Len)
			ln.sum = h.Sum64()
		}
		ln.key = ln.sum
		typ := "(corrupt)"
		if l.Status == jsonl.OK {
			var probe struct {
				Type    string `json:"type"`
				Role    string `json:"role"`
				UUID    string `json:"uuid"`
				Payload struct {
					Type string `json:"type"`
				} `json:"payload"`
			}
			obj := l.Raw
			if l.RawControl {
				obj = jsonl.Strict(l.Raw)
			}
			if json.Unmarshal(obj, &probe) == nil {
				switch {
				case probe.Type != "" && probe.Payload.Type != "":
					typ = probe.Type + "/" + probe.Payload.Type
				case probe.Type != "":
					typ = probe.Type
				case probe.Role != "":
					typ = probe.Role
				default:
					typ = "(object)"
				}
				if useUUID && probe.UUID != "" {
					h.Reset()
					h.WriteString("uuid:")
					h.WriteString(probe.UUID)
					ln.key = h.Sum64()
					ln.uuid = true
				}
			}
		}
		ti, ok := typeIndex[typ]
		if !ok {
			ti = uint16(len(s.types))
			if len(s.types) < 1<<16-1 {
				s.types = append(s.types, typ)
				typeIndex[typ] = ti
			} else {
				ti = 0
			}
		}
		ln.typ = ti
		s.lines = append(s.lines, ln)
	}
	s.lines = slices.Clip(s.lines)
	return s, nil
}

// Type is the record type of record i.
func (s *Side) Type(i int) string { return s.types[s.lines[i].typ] }

// Offset returns the byte offset and length (without terminator) of record i.
func (s *Side) Offset(i int) (int64, int) { return s.lines[i].off, int(s.lines[i].n) }

// Compare scans both files and aligns them.
func Compare(pathA string, agentA session.Agent, pathB string, agentB session.Agent) (*Result, error) {
	seed := maphash.MakeSeed()
	a, err := Scan(pathA, agentA, seed)
	if err != nil {
		return nil, err
	}
	b, err := Scan(pathB, agentB, seed)
	if err != nil {
		return nil, err
	}
	return Align(a, b), nil
}

// Align aligns two scanned sides: the common prefix and suffix first, then
// a greedy in-order match by identity in between (each record of A takes the
// first not yet passed record of B with the same identity). This is linear
// (plus a sort) and exact for the usual session edits: appends, cuts,
// rewrites of a tail, lines edited in place.
func Align(a, b *Side) *Result {
	r := &Result{A: a, B: b, Counts: map[Op]int{}}
	na, nb := len(a.lines), len(b.lines)
	pre := 0
	for pre < na && pre < nb && a.lines[pre].sum == b.lines[pre].sum && a.lines[pre].key == b.lines[pre].key {
		pre++
	}
	suf := 0
	for suf < na-pre && suf < nb-pre && a.lines[na-1-suf].sum == b.lines[nb-1-suf].sum && a.lines[na-1-suf].key == b.lines[nb-1-suf].key {
		suf++
	}
	for i := 0; i < pre; i++ {
		r.add(Same, i, i)
	}
	r.alignMiddle(pre, na-suf, pre, nb-suf)
	for k := suf; k > 0; k-- {
		r.add(Same, na-k, nb-k)
	}
	return r
}

// add records one step; unchanged records are only counted.
func (r *Result) add(op Op, a, b int) {
	r.Counts[op]++
	if op != Same {
		r.Entries = append(r.Entries, Entry{Op: op, A: int32(a), B: int32(b)})
	}
}

type keyIdx struct {
	key uint64
	idx int32
}

func (r *Result) alignMiddle(a0, a1, b0, b1 int) {
	a, b := r.A, r.B
	// B's records of the middle, sorted by identity then position
	idx := make([]keyIdx, 0, b1-b0)
	for j := b0; j < b1; j++ {
		idx = append(idx, keyIdx{b.lines[j].key, int32(j)})
	}
	sort.Slice(idx, func(x, y int) bool {
		if idx[x].key != idx[y].key {
			return idx[x].key < idx[y].key
		}
		return idx[x].idx < idx[y].idx
	})
	match := make([]int32, a1-a0) // A index → B index, -1
	last := int32(b0 - 1)
	for i := a0; i < a1; i++ {
		match[i-a0] = -1
		k := a.lines[i].key
		lo := sort.Search(len(idx), func(x int) bool {
			return idx[x].key > k || idx[x].key == k && idx[x].idx > last
		})
		if lo < len(idx) && idx[lo].key == k {
			match[i-a0] = idx[lo].idx
			last = idx[lo].idx
		}
	}
	idx = nil
	// walk both sides; between matches, pair removed and added records of the
	// same type when the gap has as many of each (an edit in place)
	i, j := a0, b0
	flushGap := func(i0, i1, j0, j1 int) {
		if i1-i0 == j1-j0 {
			for k := 0; k < i1-i0; k++ {
				ai, bj := i0+k, j0+k
				if a.Type(ai) == b.Type(bj) && !a.lines[ai].uuid && !b.lines[bj].uuid {
					r.add(Changed, ai, bj)
				} else {
					r.add(Removed, ai, -1)
					r.add(Added, -1, bj)
				}
			}
			return
		}
		for k := i0; k < i1; k++ {
			r.add(Removed, k, -1)
		}
		for k := j0; k < j1; k++ {
			r.add(Added, -1, k)
		}
	}
	for i < a1 || j < b1 {
		// next matched pair at or after i
		ni := i
		for ni < a1 && match[ni-a0] < 0 {
			ni++
		}
		nj := b1
		if ni < a1 {
			nj = int(match[ni-a0])
		}
		flushGap(i, ni, j, nj)
		if ni >= a1 {
			break
		}
		op := Same
		if a.lines[ni].sum != b.lines[nj].sum {
			op = Changed
		}
		r.add(op, ni, nj)
		i, j = ni+1, nj+1
	}
}

// ReadRecord returns the bytes of record i of a side (re-read from the file
// by offset; f must be the side's file).
func ReadRecord(f io.ReaderAt, s *Side, i int) ([]byte, error) {
	off, n := s.Offset(i)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// LineNumbers fills in the 1-based line numbers of the entries (one more
// streaming pass over each file, counting newlines up to each offset).
func (r *Result) LineNumbers() error {
	for _, side := range []struct {
		s   *Side
		get func(*Entry) (int32, *int32)
	}{
		{r.A, func(e *Entry) (int32, *int32) { return e.A, &e.ALine }},
		{r.B, func(e *Entry) (int32, *int32) { return e.B, &e.BLine }},
	} {
		nums, err := lineNumbers(side.s)
		if err != nil {
			return err
		}
		for k := range r.Entries {
			if i, dst := side.get(&r.Entries[k]); i >= 0 {
				*dst = nums[i]
			}
		}
	}
	return nil
}

// lineNumbers returns the 1-based line number of each record of s.
func lineNumbers(s *Side) ([]int32, error) {
	f, err := jsonl.Open(s.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([]int32, len(s.lines))
	buf := make([]byte, 256<<10)
	var pos int64
	line := int32(1)
	k := 0
	for k < len(s.lines) {
		n, err := f.Read(buf)
		chunk := buf[:n]
		c := 0
		for k < len(s.lines) && s.lines[k].off < pos+int64(n) {
			t := int(s.lines[k].off - pos)
			line += int32(bytes.Count(chunk[c:t], []byte{'\n'}))
			c = t
			out[k] = line
			k++
		}
		line += int32(bytes.Count(chunk[c:], []byte{'\n'}))
		pos += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
