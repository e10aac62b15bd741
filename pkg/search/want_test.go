package search

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode"

	_ "github.com/sessctl/sessctl/pkg/agent/all" // the agents' homes decode the test files
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/show"
)

// TestWantedLinesSameHits holds grep's shortcut (the home decodes only the
// lines that hold the pattern, and those with tool calls) to decoding every
// line: the same hits, with the same turns, states, roles and tool names,
// on every session of the test data and the shared samples, for words
// taken from each session's own file.
func TestWantedLinesSameHits(t *testing.T) {
	paths := []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "agent")}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "samples")); err == nil {
		paths = append(paths, filepath.Join("..", "..", "..", "shared", "samples"))
	}
	ctx := context.Background()
	res := session.DiscoverPaths(paths)
	sessions, compared, partial := 0, 0, 0
	for _, s := range res.Sessions {
		raw, err := os.ReadFile(s.Main)
		if err != nil || len(raw) > 1<<20 {
			continue
		}
		var text bytes.Buffer
		err = show.Show(ctx, s, show.Options{}, func(it *show.Item) error {
			text.WriteString(it.Text + "\n")
			return nil
		})
		if err != nil {
			continue // no conversation model
		}
		sessions++
		for i, w := range words(text.Bytes(), 4) {
			opt := Options{Pattern: w, IgnoreCase: i%2 == 1}
			if i%2 == 1 {
				opt.Pattern = string(bytes.ToUpper([]byte(w)))
			}
			got := hits(t, ctx, s, opt, false)
			want := hits(t, ctx, s, opt, true)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %+v: decoding the lines with the pattern gave\n%+v\ndecoding all\n%+v", s.Main, opt, got, want)
			}
			compared += len(want)
			// the shortcut mattered: some live lines had no match
			if n := bytes.Count(raw, []byte("\n")); len(want) > 0 && len(want) < n/2 {
				partial++
			}
		}
	}
	if sessions < 20 || compared < 100 || partial < 20 {
		t.Fatalf("only %d sessions, %d hits compared, %d searches where few lines matched", sessions, compared, partial)
	}
	t.Logf("%d sessions, %d hits compared", sessions, compared)
}

func hits(t *testing.T, ctx context.Context, s *session.Session, opt Options, decodeAll bool) []Hit {
	m, err := Compile(opt)
	if err != nil {
		t.Fatal(err)
	}
	m.decodeAll = decodeAll
	var hs []Hit
	err = m.Session(ctx, s, false, func(h *Hit) error {
		hs = append(hs, *h)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", s.Main, err)
	}
	return hs
}

// words picks n words of five letters or more spread over b.
func words(b []byte, n int) []string {
	var all []string
	seen := map[string]bool{}
	for _, f := range bytes.FieldsFunc(b, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(f) >= 5 && len(f) <= 20 && !seen[string(f)] {
			seen[string(f)] = true
			all = append(all, string(f))
		}
	}
	if len(all) <= n {
		return all
	}
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, all[i*len(all)/n])
	}
	return out
}
