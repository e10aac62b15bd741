package main

import (
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"math/rand/v2"
	"strings"
	"testing"
)

// lineCut must give what ellipsis(line(s), n) gives, whatever s holds:
// controls, escapes, wide and combining characters, bytes that are not
// UTF-8 (alone, or a rune cut short) at and around the cut.
func TestLineCutIsEllipsisOfLine(t *testing.T) {
	pieces := []string{"a", " ", "  ", "\x1b", "\n", "\t", "\x7f", "é", "日本語", "e\u0301", "\u202e", "\u0085",
		"\xff", "\xe6\x97", "\xe6", "\x97", "\xf0\x9f\x98\x80", "\xf0\x9f", "…", "\u2028"}
	r := rand.New(rand.NewPCG(1, 2))
	check := func(s string, n int) {
		t.Helper()
		if got, want := lineCut(s, n), ellipsis(line(s), n); got != want {
			t.Fatalf("lineCut(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
	for _, n := range []int{0, 1, 2, 3, 5, 40, 48} {
		check("", n)
		for _, p := range pieces {
			for k := 0; k < 60; k++ {
				check(strings.Repeat(p, k), n)
				check(strings.Repeat("x", k)+p+strings.Repeat("y", 3), n)
			}
		}
		for range 3000 {
			var b strings.Builder
			for range r.IntN(70) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			check(b.String(), n)
		}
	}
}

// cellWidth is twwidth's width, whatever the cell holds.
func TestCellWidth(t *testing.T) {
	for _, c := range []string{"", "abc", "日本語", "\x1b[31m12\x1b[0m", "…ab", "e\u0301", "a b~"} {
		if got, want := cellWidth(c), twwidthOf(c); got != want {
			t.Errorf("cellWidth(%q) = %d, want %d", c, got, want)
		}
	}
}

func twwidthOf(c string) int { return twwidth.Width(c) }
