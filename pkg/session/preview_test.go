package session_test

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// previewWhole is Preview as it was: collapse the whole text, convert all
// of it to runes, cut. Preview must give the same string.
func previewWhole(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func TestPreviewIsOneLineCut(t *testing.T) {
	parts := []string{"a", "bc ", " ", "\n\t", "世界", "\u00a0", "\u2028", "\xff", "\xe4\xb8", "é", "word ", "  x"}
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []string{"", " ", "   a   ", "abc", "abcd", "ab cd", "a\nb", "\xff\xfe", strings.Repeat("x", 10)}
	for range 20000 {
		var b strings.Builder
		for k := rng.IntN(12); k > 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		for _, n := range []int{1, 2, 3, 4, 5, 8, 200} {
			if got, want := session.Preview(s, n), previewWhole(s, n); got != want {
				t.Fatalf("Preview(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// A preview of a 20 MB prompt costs about the preview, not the prompt
// several times over (it cost about 130 MB before, issue 11).
func TestPreviewOfAHugeTextAllocatesLittle(t *testing.T) {
	s := strings.Repeat("lorem ipsum dolor sit amet,\n ", 20<<20/29)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := session.Preview(s, session.PreviewLen)
	runtime.ReadMemStats(&after)
	if want := previewWhole(s, session.PreviewLen); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("one preview of a %d MiB text allocated %d KiB", len(s)>>20, n>>10)
	}
}
