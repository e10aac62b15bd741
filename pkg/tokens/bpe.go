package tokens

import "math"

// noRank marks a pair of parts that is not a token and so never merges.
const noRank = math.MaxUint32

// heapMin is the piece length from which merge uses a heap instead of
// scanning all parts for the lowest rank at every step (quadratic, but faster
// for the short pieces that make up nearly all text).
const heapMin = 64

// part is one part of a piece being merged: where it starts, and the rank of
// the token that merging it with the next part would make.
type part struct {
	start int32
	rank  uint32
}

// scratch holds the buffers of one merge. It is used by one goroutine at a
// time.
type scratch struct {
	// counts caches the token count of pieces that needed merging; it is
	// emptied when it reaches maxCached entries.
	counts map[string]int32
	// front is countPiece's small cache of short pieces
	front [1 << frontBits]frontEntry
	parts []part
	next  []int32
	prev  []int32
	rank  []uint32
	heap  []uint64
}

func (v *vocab) rankOf(b string) uint32 {
	if r, ok := v.ranks[b]; ok {
		return r
	}
	return noRank
}

// merge runs tiktoken's byte-pair merge on piece (at least two bytes, not a
// token itself): repeatedly join the adjacent pair whose union has the lowest
// rank, the leftmost on ties, until no adjacent union is a token. It calls
// emit with each resulting token's bytes, in order, and returns their number.
func (v *vocab) merge(piece string, sc *scratch, emit func(string)) int {
	if len(piece) >= heapMin {
		return v.mergeHeap(piece, sc, emit)
	}
	return v.mergeSmall(piece, sc, emit)
}

// mergeSmall is merge by scanning all parts for the lowest rank at each step.
func (v *vocab) mergeSmall(piece string, sc *scratch, emit func(string)) int {
	parts := sc.parts[:0]
	for i := range len(piece) + 1 {
		parts = append(parts, part{int32(i), noRank})
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = v.rankOf(piece[i : i+2])
	}
	for len(parts) > 2 {
		lo, at := uint32(noRank), -1
		for i, p := range parts[:len(parts)-1] {
			if p.rank < lo {
				lo, at = p.rank, i
			}
		}
		if at < 0 {
			break
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		if at+2 < len(parts) {
			parts[at].rank = v.rankOf(piece[parts[at].start:parts[at+2].start])
		} else {
			parts[at].rank = noRank
		}
		if at > 0 {
			parts[at-1].rank = v.rankOf(piece[parts[at-1].start:parts[at+1].start])
		}
	}
	sc.parts = parts
	if emit != nil {
		for i := 0; i+1 < len(parts); i++ {
			emit(piece[parts[i].start:parts[i+1].start])
		}
	}
	return len(parts) - 1
}

// mergeHeap is merge for long pieces (long runs of white space or
// punctuation): the parts form a linked list and the candidate merges sit in
// a min-heap keyed by (rank, start), which orders them exactly as the
// leftmost-lowest scan does. Stale heap entries are skipped when popped.
func (v *vocab) mergeHeap(piece string, sc *scratch, emit func(string)) int {
	n := int32(len(piece))
	next, prev, rank := grow(sc.next, int(n)), grow(sc.prev, int(n)), grow(sc.rank, int(n))
	h := sc.heap[:0]
	// Part i starts at byte i; next[i] is the start of the part after it
	// (n for the last part); rank[i] is noRank for a part already merged away.
	rankAt := func(i int32) uint32 {
		j := next[i]
		if j >= n {
			return noRank
		}
		return v.rankOf(piece[i:next[j]])
	}
	for i := range n {
		next[i], prev[i] = i+1, i-1
	}
	for i := range n {
		rank[i] = rankAt(i)
		if rank[i] != noRank {
			h = heapPush(h, uint64(rank[i])<<32|uint64(i))
		}
	}
	count := int(n)
	alive := func(i int32) bool { return i == 0 || prev[i] >= 0 }
	for len(h) > 0 {
		var top uint64
		top, h = heapPop(h)
		r, i := uint32(top>>32), int32(top)
		if !alive(i) || rank[i] != r {
			continue
		}
		j := next[i]
		next[i] = next[j]
		if next[j] < n {
			prev[next[j]] = i
		}
		prev[j] = -1
		count--
		rank[i] = rankAt(i)
		if rank[i] != noRank {
			h = heapPush(h, uint64(rank[i])<<32|uint64(i))
		}
		if i > 0 {
			p := prev[i]
			rank[p] = rankAt(p)
			if rank[p] != noRank {
				h = heapPush(h, uint64(rank[p])<<32|uint64(p))
			}
		}
	}
	sc.next, sc.prev, sc.rank, sc.heap = next, prev, rank, h
	if emit != nil {
		for i := int32(0); i < n; i = next[i] {
			emit(piece[i:next[i]])
		}
	}
	return count
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func heapPush(h []uint64, x uint64) []uint64 {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

func heapPop(h []uint64) (uint64, []uint64) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top, h
}
