package search

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode"

	"github.com/sessctl/sessctl/internal/livemaptest"
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
	lay := &livemaptest.Memory{}
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
			// through the file's live map: made by the first search of
			// it, kept for the next
			for k := 0; k < 2; k++ {
				if got := hitsWith(t, ctx, s, opt, false, lay); !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %+v: through the live map (search %d) gave\n%+v\ndecoding all\n%+v", s.Main, opt, k, got, want)
				}
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
	if lay.Builds < 5 || lay.Uses < 2*lay.Builds {
		t.Fatalf("live maps made %d times, used %d times: the searches did not go through them", lay.Builds, lay.Uses)
	}
	t.Logf("%d sessions, %d hits compared", sessions, compared)
}

func hits(t *testing.T, ctx context.Context, s *session.Session, opt Options, decodeAll bool) []Hit {
	return hitsWith(t, ctx, s, opt, decodeAll, nil)
}

func hitsWith(t *testing.T, ctx context.Context, s *session.Session, opt Options, decodeAll bool, lay session.LiveMapCache) []Hit {
	m, err := Compile(opt)
	if err != nil {
		t.Fatal(err)
	}
	m.decodeAll = decodeAll
	if lay != nil {
		m.WithLiveMaps(lay)
	}
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

// TestEnsureASCIIWriters: Kimi CLI writes non-ASCII characters as \uXXXX
// escapes (Python's ensure_ascii); the raw scans look for that form too, so
// a non-ASCII pattern still finds its hits there.
func TestEnsureASCIIWriters(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "sessions", "kimi")
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	ctxs, _ := filepath.Glob(filepath.Join(root, "sessions", "*", "*", "context.jsonl"))
	if len(ctxs) != 1 {
		t.Fatalf("context files %v", ctxs)
	}
	f, err := os.OpenFile(ctxs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	// as Python's json.dumps writes "Café ☕ 😀 done"
	f.WriteString(`{"role": "user", "content": "Caf\u00e9 \u2615 \ud83d\ude00 done"}` + "\n")
	f.Close()
	res := session.DiscoverPaths([]string{root})
	if len(res.Sessions) != 1 {
		t.Fatalf("sessions %d", len(res.Sessions))
	}
	for _, p := range []string{"Café", "☕", "😀 done", "é \u2615"} {
		m, err := Compile(Options{Pattern: p})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = m.Session(context.Background(), res.Sessions[0], false, func(h *Hit) error {
			n++
			if h.Snippet[h.MatchStart:h.MatchEnd] != p {
				t.Errorf("%q: hit %q", p, h.Snippet)
			}
			return nil
		})
		if err != nil || n != 1 {
			t.Errorf("%q: %d hits (%v), want 1", p, n, err)
		}
	}
}

// TestWantedLinesNames: the names of tool results when only the lines
// that hold the pattern are decoded. Neither call line holds it; one call
// is answered twice (the client names a result after its call only once:
// show.Items forgets the name), and the first answer, without the
// pattern, must be decoded for the second to come out unnamed, as it does
// when every line is decoded.
func TestWantedLinesNames(t *testing.T) {
	const id = "9d0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"
	dir := filepath.Join(t.TempDir(), "projects", "-home-alice-src-web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(n int, typ, content string) string {
		parent := "null"
		if n > 1 {
			parent = fmt.Sprintf(`"1b000000-0000-4000-8000-%012d"`, n-1)
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,"message":{"role":%q,"content":%s},"uuid":"1b000000-0000-4000-8000-%012d","timestamp":"2026-11-01T10:00:%02d.000Z","sessionId":%q,"version":"2.1.197","cwd":"/home/alice/src/web"}`+"\n",
			parent, typ, typ, content, n, n, id)
	}
	use := func(id, name string) string {
		return fmt.Sprintf(`[{"type":"tool_use","id":%q,"name":%q,"input":{"command":"ls"}}]`, id, name)
	}
	result := func(id, out string) string {
		return fmt.Sprintf(`[{"type":"tool_result","tool_use_id":%q,"content":%q}]`, id, out)
	}
	file := line(1, "user", `"look around"`) +
		line(2, "assistant", use("toolu_A", "Bash")) +
		line(3, "user", result("toolu_A", "first output")) +
		line(4, "assistant", use("toolu_B", "Read")) +
		line(5, "user", result("toolu_A", "a needle again")) +
		line(6, "user", result("toolu_B", "the needle here")) +
		line(7, "assistant", `[{"type":"text","text":"done"}]`)
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	res := session.DiscoverPaths([]string{filepath.Dir(filepath.Dir(dir))})
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	ctx := context.Background()
	opt := Options{Pattern: "needle"}
	want := hits(t, ctx, res.Sessions[0], opt, true)
	var names []string
	for _, h := range want {
		names = append(names, fmt.Sprintf("%d %s %q", h.Line, h.Type, h.Name))
	}
	if fmt.Sprint(names) != `[5 tool_result "" 6 tool_result "Read"]` {
		t.Fatalf("decoding every line: %v", names)
	}
	if got := hits(t, ctx, res.Sessions[0], opt, false); !reflect.DeepEqual(got, want) {
		t.Errorf("decoding the lines with the pattern gave\n%+v\ndecoding all\n%+v", got, want)
	}
	lay := &livemaptest.Memory{}
	for k := 0; k < 2; k++ {
		if got := hitsWith(t, ctx, res.Sessions[0], opt, false, lay); !reflect.DeepEqual(got, want) {
			t.Errorf("through the live map (search %d) gave\n%+v\ndecoding all\n%+v", k, got, want)
		}
	}
	if lay.Builds != 1 || lay.Uses != 1 {
		t.Fatalf("live map made %d times, used %d times", lay.Builds, lay.Uses)
	}
}
