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

// A row kept between runs (session.Memo) decodes to what was kept, and
// one whose cells would send a control character to the terminal (a memo
// file changed behind sessctl's back) is not taken.
func TestLsFixedRoundTripAndUnsafeCells(t *testing.T) {
	fx := lsFixed{project: "p", cwd: "/home/u/p", projectCell: "/home/u/p", title: "fix the \\x1b parser…",
		projectW: 9, titleW: 20, records: 12, corrupt: 3}
	got, ok := decodeLsFixed(fx.encode())
	if !ok || got != fx {
		t.Fatalf("round trip: %+v %v, want %+v", got, ok, fx)
	}
	for _, bad := range []string{"\x1b[2J", "a\nb", "\u009b31m"} {
		tampered := fx
		tampered.title = bad
		if _, ok := decodeLsFixed(tampered.encode()); ok {
			t.Errorf("a title cell %q was taken", bad)
		}
		tampered = fx
		tampered.projectCell = bad
		if _, ok := decodeLsFixed(tampered.encode()); ok {
			t.Errorf("a project cell %q was taken", bad)
		}
	}
	if _, ok := decodeLsFixed(fx.encode()[:5]); ok {
		t.Error("a value cut short was taken")
	}
}
