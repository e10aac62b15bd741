package search

import (
	"bytes"
	"strings"
)

// A literal is found by the rarest of its bytes: bytes.IndexByte (SIMD)
// looks for that byte, and each place it is found is checked in full.
// bytes.Index looks for the first byte of the pattern instead, which in a
// session file is often one of the most frequent ('r' of "rebase commit":
// 3 % of the bytes, 'b' 0.7 %): it stops every few dozen bytes. On the
// 1 GB generated Claude store the line-by-line search was about a tenth
// of the CPU time of a grep.

// byteOrder is printable ASCII from the most frequent byte to the least in
// session files (counted on the shared sample sessions, 8 MB of Claude
// Code, Codex and Kimi files, 2026-11-26).
const byteOrder = " e\"tnsaoird:lpc_,\\um-120fhg.45y63b9k8=7{}/wvTxE()UDSRC>AI[]NPZ`L<jMOzqBG*%F#YWV|'+HX;KQJ@&!~$?^"

// byteRank ranks bytes by how often they occur: higher is more frequent.
// A byte of 0x80 or more (1.2 % of the samples' bytes in all) ranks with
// 'b'; control characters and DEL rank lowest.
var byteRank = func() (r [256]int) {
	for i := 0; i < len(byteOrder); i++ {
		r[byteOrder[i]] = len(byteOrder) - i
	}
	for c := 0x80; c < 0x100; c++ {
		r[c] = r['b']
	}
	return r
}()

// finder finds one literal.
type finder struct {
	lit  []byte
	rare int // the place in lit of its rarest byte
}

func newFinder(lit []byte) *finder {
	f := &finder{lit: lit}
	for i, c := range lit {
		if byteRank[c] < byteRank[lit[f.rare]] {
			f.rare = i
		}
	}
	return f
}

// index is bytes.Index(s, f.lit).
func (f *finder) index(s []byte) int {
	n, r := len(f.lit), f.rare
	if n == 0 {
		return 0
	}
	c := f.lit[r]
	fails := 0
	for i := r; i < len(s); {
		j := bytes.IndexByte(s[i:], c)
		if j < 0 {
			return -1
		}
		i += j
		start := i - r
		if start+n > len(s) {
			return -1
		}
		if bytes.Equal(s[start:start+n], f.lit) {
			return start
		}
		i++
		// a rare byte that is not rare here: bytes.Index, which does not
		// slow down on frequent bytes, does the rest
		if fails++; fails > 16+i/8 {
			if k := bytes.Index(s[start+1:], f.lit); k >= 0 {
				return start + 1 + k
			}
			return -1
		}
	}
	return -1
}

// in is bytes.Contains(s, f.lit); a nil finder (of no literal) is found
// everywhere, as bytes.Contains finds an empty one.
func (f *finder) in(s []byte) bool { return f == nil || f.index(s) >= 0 }

// A case-insensitive literal (-i) was matched by Go's regular expression
// (?i)…, which has no literal to look for first: it stepped through every
// character of every decoded item (about 2.6 s of CPU on the 1 GB
// generated Claude store), and the raw scan lowered a copy of every byte.
// foldFinder looks for an ASCII literal with ASCII case folded instead, by
// its rarest byte in both cases.
//
// That is all (?i) does with an ASCII pattern, but for two characters:
// Go's simple case folding (unicode.SimpleFold) takes U+212A KELVIN SIGN
// to k and K, and U+017F LATIN SMALL LETTER LONG S to s and S; no other
// non-ASCII character folds to an ASCII one (TestOddFoldsAll). A text
// holding one of them, where the pattern has a k or an s, is left to the
// regular expression (foldFinder.odd, oddText, oddRaw).

// foldFinder finds an ASCII literal, ASCII case folded.
type foldFinder struct {
	lit  []byte // in lower case
	mask []byte // 0x20 where lit has a letter: s[i]|mask[i] == lit[i]
	rare int    // the place in lit of its rarest byte
	// lo and up are that byte in both cases (the same byte when it is
	// not a letter)
	lo, up byte
	// odd: lit has a k or an s, which U+212A and U+017F match too
	odd bool
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upperByte(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// newFoldFinder makes the finder of lit, which is ASCII.
func newFoldFinder(lit []byte) *foldFinder {
	f := &foldFinder{lit: make([]byte, len(lit)), mask: make([]byte, len(lit))}
	rank := func(c byte) int { return max(byteRank[lowerByte(c)], byteRank[upperByte(c)]) }
	for i, c := range lit {
		c = lowerByte(c)
		f.lit[i] = c
		if 'a' <= c && c <= 'z' {
			f.mask[i] = 0x20
		}
		if c == 'k' || c == 's' {
			f.odd = true
		}
		if rank(c) < rank(f.lit[f.rare]) {
			f.rare = i
		}
	}
	if len(lit) > 0 {
		f.lo, f.up = f.lit[f.rare], upperByte(f.lit[f.rare])
	}
	return f
}

// text is what the finders search: a decoded item's text, or raw bytes.
type text interface{ string | []byte }

// indexByteFrom is the first place at or after i of c in s, len(s) when
// there is none.
func indexByteFrom[T text](s T, i int, c byte) int {
	var j int
	switch s := any(s).(type) {
	case string:
		j = strings.IndexByte(s[i:], c)
	case []byte:
		j = bytes.IndexByte(s[i:], c)
	}
	if j < 0 {
		return len(s)
	}
	return i + j
}

// equalAt reports whether s holds f.lit at start, ASCII case folded.
func equalAt[T text](f *foldFinder, s T, start int) bool {
	for j, c := range f.lit {
		if s[start+j]|f.mask[j] != c {
			return false
		}
	}
	return true
}

// index is the first place at or after from where s holds f.lit, ASCII
// case folded, or -1: the leftmost match of (?i) with the pattern quoted,
// in a text that does not hold U+212A or U+017F (or when !f.odd).
func index[T text](f *foldFinder, s T, from int) int {
	n, r := len(f.lit), f.rare
	if n == 0 {
		return from
	}
	// nlo and nup: the next place of f.lo and f.up at or after i (len(s)
	// when there is none), below i when not looked for yet
	nlo, nup := -1, -1
	if f.lo == f.up {
		nup = len(s)
	}
	fails := 0
	for i := from + r; i < len(s); {
		if nlo < i {
			nlo = indexByteFrom(s, i, f.lo)
		}
		if nup < i {
			nup = indexByteFrom(s, i, f.up)
		}
		p := min(nlo, nup)
		start := p - r
		if start+n > len(s) {
			return -1
		}
		if equalAt(f, s, start) {
			return start
		}
		i = p + 1
		// a rare byte that is not rare here: bytes.Index over a lowered
		// copy, a window at a time, does the rest
		if fails++; fails > 16+(i-from)/8 {
			return slowIndex(f, s, start+1)
		}
	}
	return -1
}

// slowIndex is index from from by bytes.Index over lowered copies of s,
// at most 64 KiB (or twice the pattern) at a time.
func slowIndex[T text](f *foldFinder, s T, from int) int {
	n := len(f.lit)
	w := max(1<<16, 2*n)
	buf := make([]byte, min(w, len(s)-from))
	for pos := from; pos+n <= len(s); {
		end := min(len(s), pos+w)
		b := buf[:end-pos]
		for i := range b {
			b[i] = lowerByte(s[pos+i])
		}
		if k := bytes.Index(b, f.lit); k >= 0 {
			return pos + k
		}
		if end == len(s) {
			break
		}
		pos = end - (n - 1)
	}
	return -1
}

// in reports whether s holds f.lit, ASCII case folded.
func in[T text](f *foldFinder, s T) bool { return index(f, s, 0) >= 0 }

// The characters other than ASCII that Go's simple case folding takes to
// ASCII letters, as UTF-8 and as JSON escapes them (\u212a; a writer may
// write the hex digits in either case, which the fold finders take alike).
const (
	kelvin = "\u212a" // K, folds to k and K
	longS  = "\u017f" // ſ, folds to s and S
)

// kelvinEsc and longSEsc find their escapes, hex digits in either case.
var (
	kelvinEsc = newFoldFinder([]byte(`\u212a`))
	longSEsc  = newFoldFinder([]byte(`\u017f`))
)

// oddText reports whether a decoded text holds U+212A or U+017F.
func oddText(s string) bool {
	return strings.Contains(s, kelvin) || strings.Contains(s, longS)
}

// oddRaw reports whether raw JSON may hold U+212A or U+017F: as UTF-8, or
// escaped.
func oddRaw(b []byte) bool {
	return bytes.Contains(b, []byte(kelvin)) || bytes.Contains(b, []byte(longS)) || oddEsc(b)
}

// oddEsc reports whether b holds \u212a or \u017f, hex digits in either
// case. Both escapes have a 1 at [3]: one scan for it looks for both (two
// finders took 1.7 times as long on the generated Claude store).
func oddEsc(b []byte) bool {
	fails := 0
	for i := 3; i < len(b); {
		j := bytes.IndexByte(b[i:], '1')
		if j < 0 {
			return false
		}
		i += j
		s := i - 3
		if s+6 > len(b) {
			return false
		}
		if h := b[s : s+6]; h[0] == '\\' && h[1] == 'u' &&
			(h[2] == '2' && h[4] == '2' && h[5]|0x20 == 'a' || h[2] == '0' && h[4] == '7' && h[5]|0x20 == 'f') {
			return true
		}
		i++
		// a text full of 1s: the finders, which do not slow down on them
		if fails++; fails > 16+i/8 {
			return in(kelvinEsc, b[s+1:]) || in(longSEsc, b[s+1:])
		}
	}
	return false
}
