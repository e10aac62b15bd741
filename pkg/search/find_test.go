package search

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestFinderAsIndex holds finder.index to bytes.Index: random texts and
// patterns over small alphabets (so that the rare byte is found often,
// and the fall-back to bytes.Index is taken), patterns at the ends, and
// words of a real session file.
func TestFinderAsIndex(t *testing.T) {
	check := func(s, lit []byte) {
		t.Helper()
		if got, want := newFinder(lit).index(s), bytes.Index(s, lit); got != want {
			t.Fatalf("index(%q, %q) = %d, bytes.Index says %d", s, lit, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, alpha := range []string{"ab", "abc", "eb", "e b\"", "xyzq\x00\xc3\xa9"} {
		for range 20000 {
			s := make([]byte, rng.IntN(200))
			for i := range s {
				s[i] = alpha[rng.IntN(len(alpha))]
			}
			lit := make([]byte, 1+rng.IntN(6))
			for i := range lit {
				lit[i] = alpha[rng.IntN(len(alpha))]
			}
			check(s, lit)
			if len(s) > len(lit) {
				// the pattern at the start and at the end
				check(append(bytes.Clone(lit), s...), lit)
				check(append(bytes.Clone(s), lit...), lit)
			}
		}
	}
	// many places of the rare byte before the match: the fall-back
	long := append(bytes.Repeat([]byte("eb"), 5000), "ebbq"...)
	check(long, []byte("bbq"))
	check(long, []byte("bbx"))
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sessions", "claude", "projects", "-home-alice-src-web", "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range bytes.Fields(raw) {
		check(raw, w)
		check(raw, append(w, 'Q'))
	}
}

// TestFinderRare: the place searched for is the rarest byte.
func TestFinderRare(t *testing.T) {
	for lit, want := range map[string]int{"rebase commit": 2, "e": 0, "the Quick": 4, "café": 3, "zzz": 0} {
		if got := newFinder([]byte(lit)).rare; got != want {
			t.Errorf("%q: rare %d, want %d", lit, got, want)
		}
	}
}
