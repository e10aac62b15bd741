package kimicode

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// store is the Kimi Code store the real client wrote in the e2e harness
// (testdata/kimi-code-2.1.0/README.md).
const store = "../../../testdata/kimi-code-2.1.0"

const sessionID = "session_048c46c3-fb71-4a63-bbe8-e8748a3e8605"

func wirePath(t *testing.T) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(store, "sessions", "wd_*", sessionID, "agents", "main", "wire.jsonl"))
	if err != nil || len(m) != 1 {
		t.Fatalf("fixture wire: %v %v", m, err)
	}
	return m[0]
}

// rawLines decodes every line of a file with encoding/json, independently
// of the home.
func rawLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestDecodeRealWire: every record of the real wire is of a known type and
// none is unknown or corrupt.
func TestDecodeRealWire(t *testing.T) {
	path := wirePath(t)
	n := 0
	err := session.ReadFile(path, Home{}, func(r *session.Record) error {
		n++
		if r.Kind == session.KindUnknown || r.Kind == session.KindCorrupt || !(Home{}).KnownType(r.Type) {
			t.Errorf("line %d: %s record %q", r.Line.Num, r.Kind, r.Type)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("%d records, %v", n, err)
	}
	// an unknown type is reported as such, never dropped
	r := session.Record{Line: session.Record{}.Line}
	(Home{}).Decode([]byte(`{"type":"brand.new","agentId":"main","time":1}`), &r)
	if r.Kind != session.KindUnknown || r.Type != "brand.new" {
		t.Errorf("unknown type decoded as %s %q", r.Kind, r.Type)
	}
	r = session.Record{}
	(Home{}).Decode([]byte(`{"type":"context.append_loop_event","event":{"type":"step.teleport"}}`), &r)
	if r.Kind != session.KindUnknown || (Home{}).KnownType(r.Type) {
		t.Errorf("unknown loop event decoded as %s %q", r.Kind, r.Type)
	}
}

// TestDetection: the wire is Kimi Code's by its lines and by its path.
func TestDetection(t *testing.T) {
	path := wirePath(t)
	a, err := session.DetectFile(path)
	if err != nil || a != Agent {
		t.Errorf("DetectFile = %s, %v", a, err)
	}
	if (Home{}).PathVote(path) != session.Sure {
		t.Error("PathVote of a wire in a session directory is not Sure")
	}
	if (Home{}).PathVote("/x/.kimi/sessions/abc/def/wire.jsonl") != session.NoVote {
		t.Error("a Kimi CLI wire voted Kimi Code")
	}
}

// TestDiscoverStore: the store lists one session, the directory as a
// whole, with the work directory state.json names; without state.json the
// session still lists.
func TestDiscoverStore(t *testing.T) {
	res := session.Discover([]session.Root{{Path: store}}, false)
	if len(res.Sessions) != 1 || len(res.Errors) != 0 || len(res.Unrecognized) != 0 {
		t.Fatalf("sessions %v, errors %v, unrecognized %v", res.Sessions, res.Errors, res.Unrecognized)
	}
	s := res.Sessions[0]
	if s.Agent != Agent || s.ID != sessionID || filepath.Base(s.Dir) != sessionID ||
		!strings.HasSuffix(s.Main, filepath.Join("agents", "main", "wire.jsonl")) ||
		!strings.HasSuffix(s.Project, "/project") {
		t.Errorf("session %+v", s)
	}
	if len(s.Files) != 3 {
		t.Errorf("files %v, want the wire, state.json and notify/state.json", s.Files)
	}

	// a copy without state.json
	dir := t.TempDir()
	src := s.Dir
	dst := filepath.Join(dir, "sessions", "wd_project_52a9de1c21fd", sessionID)
	if err := os.MkdirAll(filepath.Join(dst, "agents", "main"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "agents", "main", "wire.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "agents", "main", "wire.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res = session.Discover([]session.Root{{Path: dir}}, false)
	if len(res.Sessions) != 1 || res.Sessions[0].ID != sessionID || res.Sessions[0].Project != "wd_project_52a9de1c21fd" {
		t.Fatalf("without state.json: %+v (errors %v)", res.Sessions, res.Errors)
	}
	// the wire named on its own brings its session directory
	res = session.DiscoverPaths([]string{filepath.Join(dst, "agents", "main", "wire.jsonl")})
	if len(res.Sessions) != 1 || res.Sessions[0].Dir != dst {
		t.Fatalf("explicit wire: %+v (errors %v)", res.Sessions, res.Errors)
	}
}

// TestUsageScanner: the scanner counts every usage.record once, with the
// provider's model id, and nothing else (step.end repeats the usage).
func TestUsageScanner(t *testing.T) {
	path := wirePath(t)
	var want session.Usage
	records := 0
	for _, m := range rawLines(t, path) {
		if m["type"] != "usage.record" {
			continue
		}
		records++
		u := m["usage"].(map[string]any)
		want = want.Add(session.Usage{Input: int64(u["inputOther"].(float64)), Output: int64(u["output"].(float64)),
			CacheRead: int64(u["inputCacheRead"].(float64)), CacheCreation: int64(u["inputCacheCreation"].(float64))})
	}
	fu, err := new(usage.Reader).ReadFile(context.Background(), path, Home{}, usage.Carries|usage.Gauge)
	if err != nil {
		t.Fatal(err)
	}
	var got session.Usage
	for i, r := range fu.Requests {
		got = got.Add(r.Usage)
		if m := fu.Model(&fu.Requests[i]); m != "gpt-5" {
			t.Errorf("request %d: model %q, want the provider's gpt-5 (the alias is fake)", i, m)
		}
	}
	if records == 0 || len(fu.Requests) != records || got != want {
		t.Errorf("scanner: %d requests %+v; the file has %d usage.record lines %+v", len(fu.Requests), got, records, want)
	}
	if fu.Window != 200000 || fu.Context <= 0 {
		t.Errorf("window %d, context %d (%s)", fu.Window, fu.Context, fu.ContextSource)
	}
}

// TestHistoryAndTurns: the live history of the real wire, item by item
// (the e2e oracle proved Kimi Code sends exactly this on resume; the fake
// model's answers quote the tool results as they were sent, with their
// wall-time header, which the wire itself keeps only as durationMs), and its
// four turns, each cut at its turn.prompt record.
func TestHistoryAndTurns(t *testing.T) {
	path := wirePath(t)
	var got []string
	err := Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		s := string(m.Role)
		if m.Injected {
			s += " injected"
		}
		if m.Prompt {
			s += " prompt"
		}
		if m.Thinking != "" {
			s += " thinking"
		}
		for _, c := range m.ToolCalls {
			s += " call:" + c.Name + c.Input
		}
		t := m.Text
		if i := strings.IndexByte(t, '\n'); i >= 0 {
			t = t[:i]
		}
		got = append(got, s+" "+t)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"user prompt Please list the files here",
		"user injected <system-reminder>",
		"user injected <system-reminder>",
		`assistant call:Bash{"command":"ls"} Let me list the files.`,
		"tool Wall time: 0.045 seconds",
		"assistant Done. The tool returned: Wall time: 0.045 seconds hello.txt main.go",
		"user prompt NOTOOL turn B",
		"user injected <system-reminder>",
		"assistant ACK: NOTOOL turn B",
		"user prompt THINK then list the files",
		"user injected <system-reminder>",
		`assistant thinking call:Bash{"command":"ls"} Let me list the files.`,
		"tool Wall time: 0.028 seconds",
		"assistant thinking Done. The tool returned: Wall time: 0.028 seconds hello.txt main.go",
		"user prompt NOTOOL turn D",
		"user injected <system-reminder>",
		"assistant ACK: NOTOOL turn D",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	turns, err := Home{}.Turns(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	lines := rawLines(t, path)
	var prompts []int // 0-based indexes of turn.prompt lines
	for i, m := range lines {
		if m["type"] == "turn.prompt" {
			prompts = append(prompts, i)
		}
	}
	if len(turns) != 4 || len(prompts) != 4 {
		t.Fatalf("turns %+v, turn.prompt lines %v", turns, prompts)
	}
	for i, tn := range turns {
		if tn.N != i || tn.Line != prompts[i]+2 || tn.Cut >= tn.Offset {
			t.Errorf("turn %d: %+v (turn.prompt on line %d)", i, tn, prompts[i]+1)
		}
	}
}

// TestRenderToolResult: Kimi Code's renderToolResultForModel.
func TestRenderToolResult(t *testing.T) {
	ms := 1234.0
	for _, c := range []struct {
		out  string
		err  bool
		note string
		dur  *float64
		want string
	}{
		{"a\n", false, "", &ms, "Wall time: 1.234 seconds\na\n"},
		{"", false, "", nil, toolEmptyStatus},
		{"  Tool output is empty. ", false, "", nil, toolEmptyStatus},
		{"", true, "", nil, toolEmptyErrorStatus},
		{"boom", true, "n", nil, toolErrorStatus + "\nboom\nn"},
	} {
		if got := renderToolResult(c.out, c.err, c.note, c.dur); got != c.want {
			t.Errorf("render(%q, %v, %q) = %q, want %q", c.out, c.err, c.note, got, c.want)
		}
	}
}

// TestFoldUndoAndInterrupted: context.undo removes the last prompts and
// what followed; a step whose calls were never answered gets Kimi Code's
// interrupted result.
func TestFoldUndoAndInterrupted(t *testing.T) {
	lines := []string{
		`{"type":"turn.prompt","turnId":0,"time":1}`,
		`{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"one"}],"id":"p1","toolCalls":[],"origin":{"kind":"user"}},"time":2}`,
		`{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"s1","turnId":"0","step":1},"time":3}`,
		`{"type":"context.append_loop_event","event":{"type":"content.part","stepUuid":"s1","part":{"type":"text","text":"hi"}},"time":4}`,
		`{"type":"context.append_loop_event","event":{"type":"step.end","uuid":"s1","finishReason":"end_turn"},"time":5}`,
		`{"type":"turn.prompt","turnId":1,"time":6}`,
		`{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"two"}],"id":"p2","toolCalls":[],"origin":{"kind":"user"}},"time":7}`,
		`{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"s2","turnId":"1","step":1},"time":8}`,
		`{"type":"context.append_loop_event","event":{"type":"tool.call","stepUuid":"s2","toolCallId":"c1","name":"Bash","args":{"command":"ls"}},"time":9}`,
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "wire.jsonl")
	write := func(ls []string) {
		if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	texts := func() []string {
		var out []string
		Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
			out = append(out, string(m.Role)+":"+m.Text)
			return nil
		})
		return out
	}
	write(lines)
	got := strings.Join(texts(), "|")
	if want := "user:one|assistant:hi|user:two|assistant:|tool:" + interruptedOutput; got != want {
		t.Errorf("interrupted:\n got %s\nwant %s", got, want)
	}
	write(append(lines, `{"type":"context.undo","count":1,"time":10}`))
	if got := strings.Join(texts(), "|"); got != "user:one|assistant:hi" {
		t.Errorf("after undo 1: %s", got)
	}
	write(append(lines, `{"type":"context.undo","count":3,"time":10}`))
	if got := strings.Join(texts(), "|"); !strings.HasPrefix(got, "user:one|assistant:hi|user:two") {
		t.Errorf("an undo of more turns than there are changes nothing: %s", got)
	}
}

// TestHistoryAfterCompaction: the live history of a wire Kimi Code
// compacted on its own: the prompts kept (sent as one message), the
// summary, the continuation reminder, then what followed; the turns
// before the compaction are marked compacted.
func TestHistoryAfterCompaction(t *testing.T) {
	path := "testdata/compacted.wire.jsonl"
	var got []string
	err := Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		s := string(m.Role)
		for _, f := range []struct {
			on   bool
			name string
		}{{m.Prompt, "prompt"}, {m.Summary, "summary"}, {m.Injected, "injected"}} {
			if f.on {
				s += " " + f.name
			}
		}
		text := m.Text
		if len(text) > 60 {
			text = text[:60]
		}
		got = append(got, s+" "+strings.ReplaceAll(text, "\n", `\n`))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`user prompt NOTOOL turn A\n\nBIGUSAGE then list the files`,
		`user summary The conversation so far has been compacted to free up contex`,
		`user injected <system-reminder>\nContext compaction is complete — continu`,
		`user injected <system-reminder>\nToday's date is 2026-11-26. The current da`,
		`user injected <system-reminder>\nAuto permission mode is active. Tool appro`,
		`assistant ACK: The conversation so far has been compact`,
		`user prompt NOTOOL turn C`,
		`user injected <system-reminder>\nAuto permission mode is active. Tool appro`,
		`assistant ACK: NOTOOL turn C`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	turns, err := Home{}.Turns(context.Background(), path)
	if err != nil || len(turns) != 3 {
		t.Fatalf("turns %+v %v", turns, err)
	}
	for i, tn := range turns {
		if (i < 2) != (tn.State == session.Compacted && tn.CompactedAfter) {
			t.Errorf("turn %d: state %s, compacted after %v", i, tn.State, tn.CompactedAfter)
		}
	}
	// with --all, every message once, in file order, the compacted ones so
	// marked
	states := map[session.State]int{}
	Home{}.History(context.Background(), path, session.HistoryOptions{All: true}, func(m *session.Message) error {
		states[m.State]++
		return nil
	})
	if states[session.Compacted] == 0 || states[session.Live] < len(want) {
		t.Errorf("--all states %v", states)
	}
}
