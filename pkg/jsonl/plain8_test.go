package jsonl

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestPlain8 holds the eight-bytes-at-a-time test of validator.str to the
// byte-by-byte rule: every byte value at every position, among random
// plain and special neighbours; and special8's lowest mark is the first
// special byte (where validator.str goes on byte by byte).
func TestPlain8(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80 }
	rng := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for round := 0; round < 200; round++ {
		for pos := 0; pos < 8; pos++ {
			for v := 0; v < 256; v++ {
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				b[pos] = byte(v)
				want, first := true, -1
				for i, c := range b {
					if special(c) {
						want = false
						if first < 0 {
							first = i
						}
					}
				}
				w := binary.LittleEndian.Uint64(b[:])
				if got := plain8(w); got != want {
					t.Fatalf("plain8(%q) = %v, want %v", b[:], got, want)
				}
				if m := special8(w); first >= 0 && bits.TrailingZeros64(m)>>3 != first {
					t.Fatalf("special8(%q) = %#x: its lowest mark is not byte %d, the first special one", b[:], m, first)
				}
			}
		}
	}
}
