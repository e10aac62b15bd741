package session_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestFileSummaryContinues holds ReadFileSummary's promise: the summary of
// a file that grew, continued from the state it returned for the shorter
// file, is the summary of the whole file read at once. Every transcript of
// the test sessions (four agents, a subagent, a rotation) is cut at every
// line end, one byte before and one after, with a torn last line at the
// end.
func TestFileSummaryContinues(t *testing.T) {
	res := session.DiscoverPaths([]string{"../../testdata/sessions"})
	if len(res.Sessions) < 4 {
		t.Fatalf("found %d sessions", len(res.Sessions))
	}
	dir := t.TempDir()
	checked := 0
	for _, s := range res.Sessions {
		for _, f := range s.Files {
			if f.Dir || !strings.HasSuffix(f.Path, ".jsonl") {
				continue
			}
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			// a trailing line without its newline as well
			b = append(b, `{"type":"user","message":{"role":"user","content":"tail`...)
			for _, mode := range []session.SummaryMode{session.MainSummary, session.CorruptOnly} {
				whole := filepath.Join(dir, "whole.jsonl")
				os.WriteFile(whole, b, 0o600)
				want, _, _, err := session.ReadFileSummary(s.Agent, whole, mode, session.FileSummary{}, 0)
				if err != nil {
					t.Fatal(err)
				}
				// around every line end: the line's newline missing, the
				// next line just begun
				var cuts []int
				for i, c := range b {
					if c == '\n' {
						cuts = append(cuts, i, i+1, min(i+2, len(b)))
					}
				}
				for _, cut := range append(cuts, 0, len(b)) {
					p := filepath.Join(dir, "grown.jsonl")
					os.WriteFile(p, b[:cut], 0o600)
					_, state, at, err := session.ReadFileSummary(s.Agent, p, mode, session.FileSummary{}, 0)
					if err != nil {
						t.Fatal(err)
					}
					if at > int64(cut) {
						t.Fatalf("%s cut at %d: resume point %d past the end", f.Path, cut, at)
					}
					os.WriteFile(p, b, 0o600)
					got, _, _, err := session.ReadFileSummary(s.Agent, p, mode, state, at)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s (%s, mode %d) cut at byte %d, continued from %d:\n got %+v\nwant %+v", f.Path, s.Agent, mode, cut, at, got, want)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d cuts checked", checked)
}

func TestOneLineFastPathAgrees(t *testing.T) {
	for _, s := range []string{"", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "a\nb", "日本語 テスト", "a\u00a0b", "a\u2028b",
		"a\u0085b", "x\u3000y", "é è", "a\rb", "\x00", "a \u00a0", strings.Repeat("ab ", 100) + "c"} {
		want := strings.Join(strings.Fields(s), " ")
		if got := session.OneLine(s); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", s, got, want)
		}
	}
}

// OneLine is strings.Fields joined by single spaces, for every kind of
// white space Unicode has (its quick check decodes only the bytes that can
// start one) and for the letters that share their first byte.
func TestOneLineEveryWhiteSpace(t *testing.T) {
	var spaces []string
	for r := rune(0); r < 0x3100; r++ {
		if unicode.IsSpace(r) {
			spaces = append(spaces, string(r))
		}
	}
	others := []string{"a", "é", "\u00a1", "\u1681", "\u2010", "\u205e", "\u3001", "日", "\xc2", "\xe2\x80", "\xff", "\u2060"}
	for _, sp := range spaces {
		for _, o := range others {
			for _, s := range []string{sp, o + sp, sp + o, o + sp + o, o + " " + o + sp, o + o, o + " " + o} {
				if got, want := session.OneLine(s), strings.Join(strings.Fields(s), " "); got != want {
					t.Errorf("OneLine(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}

// FuzzOneLine holds OneLine to strings.Fields joined by single spaces on
// any bytes.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", " a  b ", "a\u00a0\u3000b\n", "\xff \xc2", "x\u0085y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := session.OneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", s, got, want)
		}
	})
}
