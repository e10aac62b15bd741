package compact

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// clipWhole is clip as it was: trim, collapse and convert the whole text,
// then cut. clip must give the same string.
func clipWhole(s string, n int, oneLine bool) string {
	s = strings.TrimSpace(s)
	if oneLine {
		s = strings.Join(strings.Fields(s), " ")
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n])) + "…"
}

func TestClipIsTheWholeTextCut(t *testing.T) {
	parts := []string{"a", "bc ", " ", "\n\t", "世界", "\u00a0", "\u2028", "\xff", "\xe4\xb8", "é", "word ", "  x"}
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []string{"", " ", "   a   ", "abc", "abcd", "ab cd", "a\nb", "\xff\xfe"}
	for range 20000 {
		var b strings.Builder
		for k := rng.IntN(12); k > 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		for _, n := range []int{1, 2, 3, 4, 5, 8, 80} {
			for _, one := range []bool{false, true} {
				if got, want := clip(s, n, one), clipWhole(s, n, one); got != want {
					t.Fatalf("clip(%q, %d, %v) = %q, want %q", s, n, one, got, want)
				}
			}
		}
	}
}

// Clipping a 20 MB message costs about the clip, not the message several
// times over (compact --dry-run on one 20 MB line peaked at 328 MB).
func TestClipOfAHugeTextAllocatesLittle(t *testing.T) {
	s := strings.Repeat("lorem ipsum dolor sit amet,\n ", 20<<20/29)
	for _, one := range []bool{false, true} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got := clip(s, 300, one)
		runtime.ReadMemStats(&after)
		if want := clipWhole(s, 300, one); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
			t.Errorf("oneLine %v: one clip of a %d MiB text allocated %d KiB", one, len(s)>>20, n>>10)
		}
	}
}
