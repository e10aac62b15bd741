package usage

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// Sorter puts requests in the order of Less, holding at most its budget
// of them in memory: past it, each budget's worth is sorted and written to
// disk as a run, and Each merges the runs. Requests that Less does not
// order stay in the order they were added, as sort.SliceStable keeps them.
type Sorter struct {
	Less func(a, b *Request) bool
	// Budget is how many requests it holds in memory (0: MemoryBudget()).
	Budget int

	buf    []Request
	sorted bool
	dir    spillDir
	f      *spillFile
	runs   []int64 // run i is [runs[i], runs[i+1]) of f
	err    error
}

// Adopt takes list as the requests added so far, without copying it: the
// sorter sorts it in place.
func (s *Sorter) Adopt(list []Request) {
	s.buf = list
	s.sorted = false
}

func (s *Sorter) budget() int {
	if s.Budget > 0 {
		return s.Budget
	}
	return MemoryBudget()
}

// Add adds a copy of r.
func (s *Sorter) Add(r *Request) error {
	if s.err != nil {
		return s.err
	}
	if s.buf == nil {
		// the whole budget at once: growing by appends would leave
		// as much again as garbage
		s.buf = make([]Request, 0, s.budget())
	}
	s.buf = append(s.buf, *r)
	s.sorted = false
	if len(s.buf) >= s.budget() {
		s.err = s.writeRun()
	}
	return s.err
}

func (s *Sorter) sort() {
	if !s.sorted {
		sort.SliceStable(s.buf, func(i, j int) bool { return s.Less(&s.buf[i], &s.buf[j]) })
		s.sorted = true
	}
}

// writeRun writes the requests held, sorted, as the next run.
func (s *Sorter) writeRun() error {
	if s.f == nil {
		f, err := newSpillFile(&s.dir, 64<<10)
		if err != nil {
			return err
		}
		s.f = f
	}
	s.sort()
	s.runs = append(s.runs, s.f.off)
	var b [requestSize]byte
	for i := range s.buf {
		encodeRequest(b[:], &s.buf[i])
		if err := s.f.write(b[:]); err != nil {
			return err
		}
	}
	s.buf = s.buf[:0]
	return s.f.flush()
}

// Spilled reports whether the sorter wrote runs to disk.
func (s *Sorter) Spilled() bool { return s.f != nil }

// Each calls fn with every request added, in order. It may be called
// again; Add may not be called after it.
func (s *Sorter) Each(fn func(r *Request) error) error {
	if s.err != nil {
		return s.err
	}
	if s.f == nil {
		s.sort()
		for i := range s.buf {
			if err := fn(&s.buf[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if len(s.buf) > 0 {
		if s.err = s.writeRun(); s.err != nil {
			return s.err
		}
		s.buf = nil
	}
	h := sortHeap{less: s.Less}
	for i, from := range s.runs {
		to := s.f.off
		if i+1 < len(s.runs) {
			to = s.runs[i+1]
		}
		sr := &sortRun{rd: s.f.section(from, to, readBuf(len(s.runs))), n: i}
		ok, err := sr.next()
		if err != nil {
			return err
		}
		if ok {
			h.runs = append(h.runs, sr)
		}
	}
	return drain(&h, func() *sortRun { return h.runs[0] }, func(sr *sortRun) *Request { return &sr.r }, fn)
}

// Close frees the sorter's files.
func (s *Sorter) Close() error {
	s.buf = nil
	return s.dir.close()
}

type sortRun struct {
	rd  io.Reader
	n   int // the run's number: among equals, the earlier run first
	buf [requestSize]byte
	r   Request
}

func (sr *sortRun) next() (bool, error) {
	if _, err := io.ReadFull(sr.rd, sr.buf[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		return false, fmt.Errorf("reading spilled usage back: %w", err)
	}
	decodeRequest(sr.buf[:], &sr.r)
	return true, nil
}

type sortHeap struct {
	runs []*sortRun
	less func(a, b *Request) bool
}

func (h *sortHeap) Len() int { return len(h.runs) }
func (h *sortHeap) Less(i, j int) bool {
	a, b := h.runs[i], h.runs[j]
	if h.less(&a.r, &b.r) {
		return true
	}
	if h.less(&b.r, &a.r) {
		return false
	}
	return a.n < b.n
}
func (h *sortHeap) Swap(i, j int) { h.runs[i], h.runs[j] = h.runs[j], h.runs[i] }
func (h *sortHeap) Push(x any)    { h.runs = append(h.runs, x.(*sortRun)) }
func (h *sortHeap) Pop() any {
	x := h.runs[len(h.runs)-1]
	h.runs = h.runs[:len(h.runs)-1]
	return x
}
