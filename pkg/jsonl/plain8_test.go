package jsonl

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestPlain8 holds the eight-bytes-at-a-time test of validator.str to the
// byte-by-byte rule: every byte value at every position, among random
// plain and special neighbours.
func TestPlain8(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	rng := rand.New(rand.NewPCG(1, 2))
	var b [8]byte
	for round := 0; round < 200; round++ {
		for pos := 0; pos < 8; pos++ {
			for v := 0; v < 256; v++ {
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				b[pos] = byte(v)
				want := true
				for _, c := range b {
					if special(c) {
						want = false
					}
				}
				if got := plain8(binary.LittleEndian.Uint64(b[:])); got != want {
					t.Fatalf("plain8(%q) = %v, want %v", b[:], got, want)
				}
			}
		}
	}
}
