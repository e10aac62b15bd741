package search

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestMatchSnippet(t *testing.T) {
	m, err := Compile(Options{Pattern: "login", IgnoreCase: true, Context: 5})
	if err != nil {
		t.Fatal(err)
	}
	h, ok := m.Match("Fix the failing\nLOGIN test and the login page")
	if !ok {
		t.Fatal("no match")
	}
	if h.Snippet != "ling LOGIN test" || h.Snippet[h.MatchStart:h.MatchEnd] != "LOGIN" || !h.Before || !h.After || h.Matches != 2 {
		t.Errorf("hit %+v", h)
	}
	if _, ok := m.Match("log in"); ok {
		t.Error("matched log in")
	}
	// a multi-byte text: the snippet is cut at rune boundaries
	h, _ = m.Match("ééééééé login ééééééé")
	if h.Snippet != "éééé login éééé" {
		t.Errorf("snippet %q", h.Snippet)
	}
}

func TestRegexpAndEmptyMatches(t *testing.T) {
	m, err := Compile(Options{Pattern: `x*`, Regexp: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Match("abc"); ok {
		t.Error("an empty match counted as a hit")
	}
	if h, ok := m.Match("abxxc"); !ok || h.Snippet[h.MatchStart:h.MatchEnd] != "xx" {
		t.Errorf("hit %+v %v", h, ok)
	}
	if _, err := Compile(Options{Pattern: `(`, Regexp: true}); err == nil {
		t.Error("a bad regexp compiled")
	}
	if _, err := Compile(Options{Pattern: ``}); err == nil {
		t.Error("an empty pattern compiled")
	}
	// a literal pattern is not a regexp
	m, _ = Compile(Options{Pattern: `a.c`})
	if _, ok := m.Match("abc"); ok {
		t.Error("a literal dot matched any character")
	}
}

// TestMayMatch: the raw scan finds a pattern across the boundary of its
// reads, folds ASCII case, and is skipped (true) for patterns a client
// escapes in JSON.
func TestMayMatch(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("a"), scanBuf-3)
	data = append(data, []byte("NEEDLE")...)
	data = append(data, bytes.Repeat([]byte("b"), 100)...)
	for _, c := range []struct {
		opt  Options
		want bool
	}{
		{Options{Pattern: "NEEDLE"}, true},
		{Options{Pattern: "needle"}, false},
		{Options{Pattern: "needle", IgnoreCase: true}, true},
		{Options{Pattern: "haystack"}, false},
		{Options{Pattern: `say "hi"`}, true},         // quotes are escaped in JSON: not scanned
		{Options{Pattern: "a+", Regexp: true}, true}, // regexps are not scanned
		{Options{Pattern: "É", IgnoreCase: true}, true},
	} {
		m, err := Compile(c.opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.mayMatch(ctx, bytes.NewReader(data))
		if err != nil || got != c.want {
			t.Errorf("%+v: MayMatch %v (%v), want %v", c.opt, got, err, c.want)
		}
		if m.lit == nil && !c.want {
			t.Errorf("%+v: not scanned, yet expected a miss", c.opt)
		}
	}
	if !strings.Contains(string(data), "NEEDLE") {
		t.Fatal("test data")
	}
}
