package tokens

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// A Counter counts and encodes text with one encoding, exactly as tiktoken
// does (encode_ordinary: special tokens such as <|endoftext|> are plain
// text). A Counter is safe for concurrent use.
type Counter struct {
	enc   Encoding
	vocab *vocab
	split splitter
	pool  sync.Pool // *scratch, one per goroutine at a time
}

// NewCounter returns a Counter for enc. The first Counter of an encoding
// parses its embedded rank table (some tens of milliseconds); later ones
// share it.
func NewCounter(enc Encoding) (*Counter, error) {
	load, ok := vocabs[enc]
	if !ok {
		return nil, fmt.Errorf("tokens: unknown encoding %q (want %s or %s)", enc, O200kBase, Cl100kBase)
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	c := &Counter{
		enc:   enc,
		vocab: v,
		split: splitter{bmp: bmpClasses(), o2: enc == O200kBase},
	}
	c.pool.New = func() any { return new(scratch) }
	return c, nil
}

// Encoding returns the encoding c counts with.
func (c *Counter) Encoding() Encoding { return c.enc }

// Count returns the number of tokens in text. Bytes that are not valid UTF-8
// count as U+FFFD, as they do in tiktoken-go.
func (c *Counter) Count(text string) int {
	text = validUTF8(text)
	sc := c.pool.Get().(*scratch)
	n := c.count(text, sc)
	c.pool.Put(sc)
	return n
}

func (c *Counter) count(text string, sc *scratch) int {
	n := 0
	for i := 0; i < len(text); {
		j := c.split.next(text, i)
		n += c.countPiece(text[i:j], sc)
		i = j
	}
	return n
}

func (c *Counter) countPiece(p string, sc *scratch) int {
	if len(p) == 1 {
		return 1 // every byte is a token
	}
	// pieces of up to 16 bytes (most words) go through a small cache of
	// the goroutine's own first: the rank table is large enough that a
	// look-up in it is a miss of the processor's caches
	if len(p) <= 16 {
		k0, k1 := pack16(p)
		h := (k0*0x9E3779B97F4A7C15 ^ k1*0xC2B2AE3D27D4EB4F ^ uint64(len(p))) >> (64 - frontBits)
		e := &sc.front[h]
		if e.k0 == k0 && e.k1 == k1 && int(e.len) == len(p) {
			return int(e.n)
		}
		n := c.countPieceSlow(p, sc)
		*e = frontEntry{k0: k0, k1: k1, len: uint8(len(p)), n: int32(n)}
		return n
	}
	return c.countPieceSlow(p, sc)
}

// frontBits sizes scratch.front: 4096 entries of 24 bytes.
const frontBits = 12

// frontEntry is a piece of up to 16 bytes, packed, and its count.
type frontEntry struct {
	k0, k1 uint64
	len    uint8
	n      int32
}

// pack16 packs a string of 2 to 16 bytes into two words (little-endian,
// zero-padded: with its length, it is the string).
func pack16(p string) (k0, k1 uint64) {
	var b [16]byte
	copy(b[:], p)
	return binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
}

// countPieceSlow is countPiece without the small cache.
func (c *Counter) countPieceSlow(p string, sc *scratch) int {
	if _, ok := c.vocab.ranks[p]; ok {
		return 1
	}
	if n, ok := sc.counts[p]; ok {
		return int(n)
	}
	n := c.vocab.merge(p, sc, nil)
	if len(p) <= maxCachedLen {
		if sc.counts == nil || len(sc.counts) >= maxCached {
			sc.counts = make(map[string]int32, 256)
		}
		sc.counts[strings.Clone(p)] = int32(n)
	}
	return n
}

// The cache of merged pieces, per goroutine: at most maxCached pieces of up
// to maxCachedLen bytes.
const (
	maxCached    = 1 << 14
	maxCachedLen = 64
)

// Encode returns the token ids of text, as tiktoken's encode_ordinary does.
func (c *Counter) Encode(text string) []int {
	text = validUTF8(text)
	sc := c.pool.Get().(*scratch)
	defer c.pool.Put(sc)
	var ids []int
	emit := func(tok string) { ids = append(ids, int(c.vocab.ranks[tok])) }
	for i := 0; i < len(text); {
		j := c.split.next(text, i)
		p := text[i:j]
		if r, ok := c.vocab.ranks[p]; ok {
			ids = append(ids, int(r))
		} else {
			c.vocab.merge(p, sc, emit)
		}
		i = j
	}
	return ids
}

// chunkSize is the size of the pieces CountAll cuts long texts into, so that
// one long text still keeps every core busy.
const chunkSize = 256 << 10

// CountAll returns Count of each text, spreading the work over
// runtime.GOMAXPROCS(0) goroutines. Texts longer than a few hundred
// kilobytes are cut at boundaries where the splitting rules always end a
// piece, so the counts are the same as Count's.
func (c *Counter) CountAll(texts []string) []int {
	type job struct {
		doc  int
		text string
	}
	var jobs []job
	for d, t := range texts {
		t = validUTF8(t)
		for len(t) > 0 {
			k := cutPoint(t, chunkSize, c.split.bmp)
			jobs = append(jobs, job{d, t[:k]})
			t = t[k:]
		}
	}
	counts := make([]int64, len(texts))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			sc := c.pool.Get().(*scratch)
			defer c.pool.Put(sc)
			for {
				k := int(next.Add(1) - 1)
				if k >= len(jobs) {
					return
				}
				atomic.AddInt64(&counts[jobs[k].doc], int64(c.count(jobs[k].text, sc)))
			}
		})
	}
	wg.Wait()
	out := make([]int, len(texts))
	for i, n := range counts {
		out[i] = int(n)
	}
	return out
}

// cutPoint returns where to end the first chunk of t: len(t) if t is at most
// about size bytes, else the first position at or after size that holds a
// space (U+0020) following a rune that is not white space. Both encodings
// always end a piece there and start the next one afresh: no piece runs from
// a non-space across a space, and the space starts a new piece whatever came
// before it. Without such a position, t is not cut.
func cutPoint(t string, size int, bmp *[0x10000]uint8) int {
	if len(t) <= size+size/2 {
		return len(t)
	}
	for p := size; p < len(t); p++ {
		if t[p] != ' ' {
			continue
		}
		_, _, c := lastRune(t[:p], bmp)
		if c&clsSpace == 0 {
			return p
		}
	}
	return len(t)
}

func lastRune(s string, bmp *[0x10000]uint8) (rune, int, uint8) {
	r, n := utf8.DecodeLastRuneInString(s)
	if r < 0x10000 {
		return r, n, bmp[r]
	}
	return r, n, classOf(r)
}

// validUTF8 returns s with every byte that is not part of valid UTF-8
// replaced by U+FFFD, as a []rune conversion does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
