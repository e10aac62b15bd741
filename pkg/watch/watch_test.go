package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// syncBuffer is an io.Writer the test can read while Follow writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls out until cond holds or d passes.
func waitFor(out *syncBuffer, d time.Duration, cond func(string) bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond(out.String()) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func kimiMsg(i int) string { return fmt.Sprintf(`{"role":"user","content":"message-%03d"}`, i) + "\n" }

func appendTo(t *testing.T, path, s string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Error(err)
	}
}

// start runs Follow in a goroutine; the returned func stops it and returns
// its error.
func start(t *testing.T, opt Options) (stop func() error, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	opt.Ready = func() { close(ready) }
	ch := make(chan error, 1)
	go func() { ch <- Follow(ctx, opt) }()
	select {
	case <-ready:
	case err := <-ch:
		t.Fatalf("Follow ended before it was ready: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Follow not ready after 5s")
	}
	return func() error { cancel(); return <-ch }, ch
}

// TestFollowAppendsSplitAndRotation is the test: records appended
// from another goroutine, one split across two writes, a Kimi rotation in
// the middle; every record printed once, in order, within 200 ms. It runs
// with fsnotify and with polling.
func TestFollowAppendsSplitAndRotation(t *testing.T) {
	for _, mode := range []struct {
		name string
		poll time.Duration
	}{{"fsnotify", 0}, {"poll", 20 * time.Millisecond}} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "context.jsonl")
			appendTo(t, path, `{"role": "_system_prompt", "content": "You are Kimi."}`+"\n"+`{"role": "_checkpoint", "id": 0}`+"\n")
			out := &syncBuffer{}
			stop, _ := start(t, Options{Path: path, Agent: session.Kimi, Poll: mode.poll, Out: &JSONPrinter{W: out}})

			const n = 12
			writer := make(chan error, 1)
			latencies := make(chan string, n)
			go func() {
				for i := 0; i < n; i++ {
					msg := kimiMsg(i)
					switch i {
					case 4: // split across two writes, 30 ms apart
						appendTo(t, path, msg[:15])
						time.Sleep(30 * time.Millisecond)
						appendTo(t, path, msg[15:])
					case 8: // Kimi's rotation: rename, then a new file
						if err := os.Rename(path, filepath.Join(dir, "context_1.jsonl")); err != nil {
							writer <- err
							return
						}
						appendTo(t, path, `{"role": "_system_prompt", "content": "You are Kimi."}`+"\n"+msg)
					default:
						appendTo(t, path, msg)
					}
					want := fmt.Sprintf("message-%03d", i)
					if !waitFor(out, 200*time.Millisecond, func(s string) bool { return strings.Contains(s, want) }) {
						latencies <- want
					}
				}
				writer <- nil
			}()
			if err := <-writer; err != nil {
				t.Fatal(err)
			}
			close(latencies)
			for m := range latencies {
				t.Errorf("%s not printed within 200ms", m)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			last := -1
			for i := 0; i < n; i++ {
				want := fmt.Sprintf(`"text":"message-%03d"`, i)
				if c := strings.Count(got, want); c != 1 {
					t.Errorf("%s printed %d times", want, c)
				}
				at := strings.Index(got, want)
				if at < last {
					t.Errorf("%s out of order", want)
				}
				last = at
			}
			if strings.Count(got, `"event":"rotated"`) != 1 || !strings.Contains(got, "context_1.jsonl") {
				t.Errorf("rotation not reported once:\n%s", got)
			}
			if strings.Contains(got, `"kind":"corrupt"`) {
				t.Errorf("the split record was read before its newline:\n%s", got)
			}
		})
	}
}

func TestFollowDeletionEndsCleanly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	appendTo(t, path, `{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,"sessionId":"s","isSidechain":false,"userType":"external","version":"2.1.197","message":{"role":"user","content":"hello"}}`+"\n")
	out := &syncBuffer{}
	_, done := start(t, Options{Path: path, Agent: session.Claude, Tail: 5, Grace: 50 * time.Millisecond, Out: &TextPrinter{W: out}})
	if !strings.Contains(out.String(), "hello") {
		t.Errorf("--tail did not print the existing record:\n%s", out.String())
	}
	os.Remove(path)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Follow after deletion: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Follow did not end after the file was deleted")
	}
	if !strings.Contains(out.String(), "-- deleted: "+path) {
		t.Errorf("deletion not reported:\n%s", out.String())
	}
}

func TestFollowReplacedByDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "context.jsonl")
	appendTo(t, path, kimiMsg(0))
	out := &syncBuffer{}
	_, done := start(t, Options{Path: path, Agent: session.Kimi, Grace: time.Second, Out: &TextPrinter{W: out}})
	os.Remove(path)
	os.Mkdir(path, 0o755)
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotFile) || !strings.Contains(err.Error(), "replaced by a directory") {
			t.Fatalf("err %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Follow did not notice the directory")
	}
	// and starting on a directory is an error too, not a panic
	if err := Follow(context.Background(), Options{Path: path, Out: &TextPrinter{W: out}}); !errors.Is(err, ErrNotFile) {
		t.Fatalf("Follow(dir) = %v", err)
	}
}

func TestFollowTruncation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "context.jsonl")
	appendTo(t, path, kimiMsg(0)+kimiMsg(1))
	out := &syncBuffer{}
	stop, _ := start(t, Options{Path: path, Agent: session.Kimi, Out: &TextPrinter{W: out}})
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, kimiMsg(2))
	if !waitFor(out, 2*time.Second, func(s string) bool { return strings.Contains(s, "message-002") }) {
		t.Fatalf("record after truncation not printed:\n%s", out.String())
	}
	stop()
	if got := out.String(); !strings.Contains(got, "-- truncated: ") || strings.Count(got, "message-002") != 1 {
		t.Errorf("output:\n%s", got)
	}
}

func TestGaugeByFormat(t *testing.T) {
	g := NewGauge(session.Kimi)
	g.Add(&session.Record{Agent: session.Kimi, Kind: session.KindUsage, ContextTokens: 9120})
	g.Add(&session.Record{Agent: session.Kimi, Kind: session.KindMessage, Role: session.RoleUser, Text: strings.Repeat("x", 400)})
	st := g.Now()
	if st.Tokens != 9220 || st.Basis != "recorded+estimate" || st.Window != 262_144 || st.CompactAt != 212_144 || st.Left != 212_144-9220 {
		t.Errorf("kimi: %+v", st)
	}
	g = NewGauge(session.Claude)
	g.Add(&session.Record{Agent: session.Claude, Kind: session.KindMessage, Role: session.RoleAssistant, Model: "claude-opus-4-8",
		Usage: &session.Usage{Input: 10, CacheRead: 185_000, CacheCreation: 500, Output: 90}, ContextTokens: -1})
	if st := g.Now(); st.Tokens != 185_600 || st.Window != 200_000 || st.Left != 160_000-185_600 {
		t.Errorf("claude: %+v", st)
	}
	if line := StatusLine(g.Now()); !strings.Contains(line, "past the compaction threshold 160,000 by 25,600") {
		t.Errorf("status line %q", line)
	}
	g = NewGauge(session.Codex)
	g.Add(&session.Record{Agent: session.Codex, Kind: session.KindUsage, ContextTokens: 9740, ContextWindow: 258_400, Usage: &session.Usage{}})
	if st := g.Now(); st.Tokens != 9740 || st.Window != 258_400 || st.WindowSource != "recorded" {
		t.Errorf("codex: %+v", st)
	}
}

// TestFollowSamples appends the real sample sessions to a copy, in odd-sized
// chunks, and checks every record comes out once, in line order, with the
// context status the file records.
func TestFollowSamples(t *testing.T) {
	samples, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "samples"))
	if _, err := os.Stat(samples); err != nil {
		t.Skip("shared samples not available")
	}
	for _, c := range []struct {
		agent session.Agent
		file  string
		name  string
	}{
		{session.Claude, "real-clients/claude-home/claude/projects/-home-dev-work-demo/fd4d4dc0-84bd-48cd-80d9-66a25014a7f4.jsonl", "s.jsonl"},
		{session.Codex, "real-clients/codex-home/codex/sessions/2026/11/22/rollout-2026-11-22T03-04-11-01a20136-17a3-7870-8d59-1ebca8f88e68.jsonl", "rollout-x.jsonl"},
		{session.Kimi, "kimi/ex1_basic_session/context.jsonl", "context.jsonl"},
	} {
		t.Run(string(c.agent), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(samples, c.file))
			if err != nil {
				t.Fatal(err)
			}
			var want []int
			session.ReadRecords(bytes.NewReader(data), session.FormatFor(c.agent), func(r *session.Record) error {
				if !skipped(r) {
					want = append(want, r.Line.Num)
				}
				return nil
			})
			path := filepath.Join(t.TempDir(), c.name)
			appendTo(t, path, "")
			out := &syncBuffer{}
			stop, _ := start(t, Options{Path: path, Agent: c.agent, Out: &JSONPrinter{W: out}})
			for off := 0; off < len(data); off += 777 {
				appendTo(t, path, string(data[off:min(off+777, len(data))]))
				time.Sleep(time.Millisecond)
			}
			lines := len(want)
			if !waitFor(out, 5*time.Second, func(s string) bool { return strings.Count(s, `"line":`) >= lines }) {
				t.Fatalf("got %d records, want %d", strings.Count(out.String(), `"line":`), lines)
			}
			stop()
			var got []int
			var lastCtx string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var v struct {
					Line    *int `json:"line"`
					Context struct {
						Tokens int64  `json:"tokens"`
						Basis  string `json:"basis"`
					} `json:"context"`
				}
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Fatalf("not JSON: %q", l)
				}
				if v.Line != nil {
					got = append(got, *v.Line)
					lastCtx = fmt.Sprint(v.Context.Tokens, v.Context.Basis)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("record lines %v, want %v", got, want)
			}
			if !strings.Contains(lastCtx, "recorded") {
				t.Errorf("last context %s: no recorded gauge", lastCtx)
			}
		})
	}
}

// TestFollowLatestSwitches: with Next (--latest), a new session that starts
// takes over, and the old one being written again does not take it back.
func TestFollowLatestSwitches(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a", "context.jsonl")
	second := filepath.Join(dir, "b", "context.jsonl")
	os.MkdirAll(filepath.Dir(first), 0o755)
	os.MkdirAll(filepath.Dir(second), 0o755)
	appendTo(t, first, kimiMsg(0))
	var mu sync.Mutex
	newest := first
	next := func() (string, session.Agent, error) {
		mu.Lock()
		defer mu.Unlock()
		return newest, session.Kimi, nil
	}
	out := &syncBuffer{}
	stop, _ := start(t, Options{Path: first, Agent: session.Kimi, Next: next, Rescan: 20 * time.Millisecond, Out: &JSONPrinter{W: out}})
	appendTo(t, second, kimiMsg(1))
	mu.Lock()
	newest = second
	mu.Unlock()
	if !waitFor(out, 2*time.Second, func(s string) bool { return strings.Contains(s, "message-001") }) {
		t.Fatalf("did not switch to the new session:\n%s", out.String())
	}
	appendTo(t, second, kimiMsg(2))
	if !waitFor(out, time.Second, func(s string) bool { return strings.Contains(s, "message-002") }) {
		t.Fatalf("did not follow the new session:\n%s", out.String())
	}
	// the first session is written again and is "newest": no switch back
	mu.Lock()
	newest = first
	mu.Unlock()
	appendTo(t, first, kimiMsg(3))
	time.Sleep(100 * time.Millisecond)
	// the second session's deletion is reported once; the watch goes on
	os.Remove(second)
	time.Sleep(1200 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "message-003") || strings.Count(got, `"event":"switched"`) != 1 || strings.Count(got, `"event":"deleted"`) != 1 {
		t.Fatalf("output:\n%s", got)
	}
}

func TestTextPrinterLines(t *testing.T) {
	var b bytes.Buffer
	p := &TextPrinter{W: &b}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.Local)
	p.Record(&session.Record{Kind: session.KindMessage, Role: session.RoleAssistant, Text: "Let me\nlook.",
		ToolCalls: []session.ToolCall{{ID: "c1", Name: "Bash", Input: `{"command":"ls -la"}`}}}, Status{}, at)
	p.Record(&session.Record{Kind: session.KindMessage, Role: session.RoleTool, Text: "a\nb",
		ToolResults: []session.ToolResult{{CallID: "c1", Output: "a\nb"}}}, Status{}, at)
	p.Status(Status{Tokens: 170_000, Window: 200_000, Percent: 85, CompactAt: 160_000, Left: -10_000, Basis: "recorded", WindowSource: "model"})
	p.Status(Status{Tokens: 170_000, Window: 200_000, Percent: 85, CompactAt: 160_000, Left: -10_000, Basis: "recorded", WindowSource: "model"})
	want := "10:00:00 assistant Let me look.\n" +
		"10:00:00 tool call Bash {\"command\":\"ls -la\"}\n" +
		"10:00:00 tool result 3 B  a b\n" +
		"  context 170,000 / 200,000 tokens (85.0%, recorded) · past the compaction threshold 160,000 by 10,000\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
