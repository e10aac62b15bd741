package search

import "bytes"

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
