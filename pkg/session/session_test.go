package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

const testdata = "../../testdata/sessions"

func samplesDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join("..", "..", "..", "shared", "samples")
	if _, err := os.Stat(d); err != nil {
		t.Skip("shared samples not present (../shared/samples)")
	}
	return d
}

// Every shared sample is detected as the agent whose folder holds it.
func TestDetectSharedSamples(t *testing.T) {
	dir := samplesDir(t)
	n := 0
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		var want Agent
		switch {
		case strings.HasPrefix(rel, "kimi/"):
			want = Kimi
		case strings.HasPrefix(rel, "claude/"), strings.HasPrefix(rel, "real-clients/claude-home/"):
			want = Claude
		case strings.HasPrefix(rel, "codex/"), strings.HasPrefix(rel, "real-clients/codex-home/"):
			want = Codex
		default:
			t.Errorf("%s: no expectation", rel)
			return nil
		}
		got, err := DetectFile(p)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		if got != want {
			t.Errorf("%s: detected %s, want %s", rel, got, want)
		}
		n++
		return nil
	})
	if n < 50 {
		t.Fatalf("only %d sample files seen", n)
	}
}

func decodeLine(t *testing.T, a Agent, line string) Record {
	t.Helper()
	l := jsonl.Line{Num: 1, Raw: []byte(line), Len: int64(len(line)), EOL: jsonl.LF,
		Status: jsonl.Classify([]byte(line), true)}
	l.RawControl = strings.ContainsAny(line, "\t\x01")
	return Decode(FormatFor(a), &l)
}

func TestKimiDecode(t *testing.T) {
	r := decodeLine(t, Kimi, `{"role": "_checkpoint", "id": true}`)
	if r.Kind != KindCheckpoint || r.CheckpointID != 1 {
		t.Errorf("checkpoint true: %+v (Python's isinstance(True, int) makes it id 1)", r)
	}
	r = decodeLine(t, Kimi, `{"role": "_checkpoint", "id": "3"}`)
	if r.Kind != KindUnknown {
		t.Errorf("a string id is not a checkpoint for Kimi: %v", r.Kind)
	}
	r = decodeLine(t, Kimi, `{"role": "_usage", "token_count": 9332}`)
	if r.Kind != KindUsage || r.ContextTokens != 9332 {
		t.Errorf("usage: %+v", r)
	}
	r = decodeLine(t, Kimi, `{"role":"assistant","content":[{"type":"think","think":"hmm","encrypted":null},{"type":"text","text":"Hi"}],"tool_calls":[{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\": \"ls\"}"}}]}`)
	if r.Role != RoleAssistant || r.Text != "Hi" || r.Thinking != "hmm" || len(r.ToolCalls) != 1 ||
		r.ToolCalls[0].Name != "Shell" || r.ToolCalls[0].Input != `{"command": "ls"}` {
		t.Errorf("assistant: %+v", r)
	}
	r = decodeLine(t, Kimi, "{\"role\":\"user\",\"content\":\"raw\ttab\"}")
	if !r.UserPrompt || r.Text != "raw\ttab" {
		t.Errorf("raw control characters must decode: %+v", r)
	}
	r = decodeLine(t, Kimi, `{"role":"user","content":"<system>CHECKPOINT 3</system>"}`)
	if r.UserPrompt || !r.Synthetic {
		t.Errorf("injected user message taken for a prompt: %+v", r)
	}
	r = decodeLine(t, Kimi, `{"oops": 1}`)
	if r.Kind != KindUnknown {
		t.Errorf("object without role: %v", r.Kind)
	}
}

func TestClaudeDecode(t *testing.T) {
	r := decodeLine(t, Claude, `{"parentUuid":"a","isSidechain":false,"message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":"40"}},"requestId":"req_1","type":"assistant","uuid":"b","timestamp":"2026-11-22T02:58:38.406Z"}`)
	if r.Kind != KindMessage || r.MessageID != "msg_1" || r.RequestID != "req_1" || r.Usage == nil ||
		r.Usage.Total() != 100 || len(r.ToolCalls) != 1 || r.ToolCalls[0].Input != `{"command":"ls"}` || r.ParentUUID != "a" {
		t.Errorf("assistant: %+v usage %+v", r, r.Usage)
	}
	r = decodeLine(t, Claude, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"out"}]},"uuid":"c"}`)
	if r.UserPrompt || r.Role != RoleTool || len(r.ToolResults) != 1 || r.ToolResults[0].Output != "out" {
		t.Errorf("tool result: %+v", r)
	}
	r = decodeLine(t, Claude, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<ide_opened_file>x</ide_opened_file>"},{"type":"text","text":"fix it"}]},"uuid":"d"}`)
	if !r.UserPrompt || r.Prompt != "fix it" {
		t.Errorf("prompt beside injected IDE context: %+v", r)
	}
	r = decodeLine(t, Claude, `{"type":"user","isMeta":true,"message":{"role":"user","content":"Continue from where you left off."},"uuid":"e"}`)
	if r.UserPrompt {
		t.Error("a meta message is not a prompt")
	}
	r = decodeLine(t, Claude, `{"parentUuid":null,"logicalParentUuid":"f","type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"manual","preTokens":20067,"postTokens":686},"uuid":"g"}`)
	if r.Kind != KindCompaction || r.ContextTokens != 686 || r.LogicalParentUUID != "f" {
		t.Errorf("boundary: %+v", r)
	}
	r = decodeLine(t, Claude, `{"type":"custom-title","customTitle":"My title","sessionId":"s"}`)
	if r.Title != "My title" || r.Kind != KindMetadata {
		t.Errorf("title: %+v", r)
	}
	r = decodeLine(t, Claude, `{"type":"brand-new-thing","sessionId":"s"}`)
	if r.Kind != KindUnknown || r.Type != "brand-new-thing" {
		t.Errorf("unknown type: %+v", r)
	}
}

func TestCodexDecode(t *testing.T) {
	r := decodeLine(t, Codex, `{"timestamp":"2026-11-22T02:59:33.239Z","ordinal":15,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9709,"cached_input_tokens":6796,"output_tokens":31,"reasoning_output_tokens":3,"total_tokens":9740},"last_token_usage":{"input_tokens":9709,"cached_input_tokens":6796,"output_tokens":31,"reasoning_output_tokens":3,"total_tokens":9740},"model_context_window":258400}}}`)
	if r.Kind != KindUsage || r.ContextTokens != 9740 || r.ContextWindow != 258400 || r.Usage == nil ||
		r.Usage.Input != 9709-6796 || r.Usage.CacheRead != 6796 || r.Usage.Output != 31 || r.Usage.Reasoning != 3 ||
		r.Usage.Total() != 9740 || r.CumulativeUsage == nil {
		t.Errorf("token_count: %+v %+v", r, r.Usage)
	}
	r = decodeLine(t, Codex, `{"timestamp":"2026-11-22T02:59:33.139Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}`)
	if r.UserPrompt {
		t.Error("environment context is not a user turn")
	}
	r = decodeLine(t, Codex, `{"timestamp":"2026-11-22T02:59:33.139Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}}`)
	if len(r.ToolResults) != 1 || r.ToolResults[0].CallID != "c1" || r.ToolResults[0].Output != "a\nb" {
		t.Errorf("array output: %+v", r)
	}
	r = decodeLine(t, Codex, `{"timestamp":"x","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}`)
	if r.RollbackTurns != 2 {
		t.Errorf("rollback: %+v", r)
	}
	r = decodeLine(t, Codex, `{"type":"message","role":"user","content":[{"type":"input_text","text":"old format"}]}`)
	if r.Kind != KindMessage || !r.UserPrompt || r.Text != "old format" {
		t.Errorf("pre-envelope response item: %+v", r)
	}
	r = decodeLine(t, Codex, `{"record_type":"state"}`)
	if r.Kind != KindMetadata {
		t.Errorf("legacy state line: %v", r.Kind)
	}
	r = decodeLine(t, Codex, `{"timestamp":"x","type":"future_synthetic_record","payload":{}}`)
	if r.Kind != KindUnknown {
		t.Errorf("unknown envelope: %v", r.Kind)
	}
}

func TestClawdcodeDecode(t *testing.T) {
	r := decodeLine(t, Clawdcode, `{"uuid":"WBH9BED4qntXYv7nXhaxV","parentUuid":"tI6ElijlouzPC_ikEARGc","sessionId":"N","timestamp":"2026-03-02T09:15:07.102Z","type":"tool_use","message":{"role":"assistant","content":""},"tool":{"id":"call_01","name":"Read","input":{"file_path":"src/utils.ts"}}}`)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "call_01" || r.ToolCalls[0].Name != "Read" {
		t.Errorf("tool_use: %+v", r)
	}
	r = decodeLine(t, Clawdcode, `{"uuid":"r","type":"user","isCompactSummary":true,"message":{"role":"user","content":"## Summary"},"compactMetadata":{"trigger":"auto","preTokens":104233,"postTokens":9120}}`)
	if r.Kind != KindCompaction || r.UserPrompt || r.ContextTokens != 9120 {
		t.Errorf("summary: %+v", r)
	}
}

func TestDiscoverTestdata(t *testing.T) {
	res := Discover([]Root{{Path: testdata}}, false)
	if len(res.Errors) > 0 || len(res.Unrecognized) > 0 {
		t.Fatalf("errors %v unrecognized %v", res.Errors, res.Unrecognized)
	}
	by := map[Agent]*Session{}
	for _, s := range res.Sessions {
		if by[s.Agent] != nil {
			t.Fatalf("two %s sessions", s.Agent)
		}
		by[s.Agent] = s
	}
	for _, a := range Agents {
		if by[a] == nil {
			t.Fatalf("no %s session found", a)
		}
	}
	k := by[Kimi]
	if k.ID != "3f2c9a1e-7b4d-4e8a-9c61-0d5b2e8f4a17" || k.Project != "/home/alice/src/parse" {
		t.Errorf("kimi id %q project %q (project comes from kimi.json)", k.ID, k.Project)
	}
	roles := map[FileRole]int{}
	for _, f := range k.Files {
		roles[f.Role]++
	}
	if roles[FileMain] != 1 || roles[FileRotation] != 1 || roles[FileWire] != 1 || roles[FileSide] != 1 {
		t.Errorf("kimi file roles %v", roles)
	}
	c := by[Claude]
	if len(c.FilesWithRole(FileSubagent)) != 1 || len(c.Files) != 3 || c.ID != "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f" {
		t.Errorf("claude files %+v", c.Files)
	}
	if by[Codex].ID != "01a20000-0000-7000-8000-00000000c0de" {
		t.Errorf("codex id %q", by[Codex].ID)
	}
	var size int64
	for _, f := range c.Files {
		fi, _ := os.Stat(f.Path)
		size += fi.Size()
	}
	if c.Size() != size {
		t.Errorf("size %d, files add up to %d", c.Size(), size)
	}
}

func TestSummarizeTitles(t *testing.T) {
	res := Discover([]Root{{Path: testdata}}, false)
	want := map[Agent][2]string{
		Kimi:      {"Parser modules and --verbose", "custom_title"},
		Claude:    {"Login test fix", "custom_title"},
		Codex:     {"Why is GET /users slow?", "first_prompt"},
		Clawdcode: {"重构 src/utils.ts，把重复的函数合并", "first_prompt"},
	}
	records := map[Agent]int{Kimi: 16, Claude: 15, Codex: 16, Clawdcode: 8}
	corrupt := map[Agent]int{Kimi: 0, Claude: 2, Codex: 3, Clawdcode: 1}
	for _, s := range res.Sessions {
		sum, err := Summarize(s)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[s.Agent]; sum.Title != w[0] || sum.TitleSource != w[1] {
			t.Errorf("%s: title %q (%s), want %q (%s)", s.Agent, sum.Title, sum.TitleSource, w[0], w[1])
		}
		if sum.Records != records[s.Agent] || sum.Corrupt != corrupt[s.Agent] {
			t.Errorf("%s: records %d corrupt %d, want %d %d", s.Agent, sum.Records, sum.Corrupt, records[s.Agent], corrupt[s.Agent])
		}
	}
}

func TestDiscoverFlatAgentAttachesToSession(t *testing.T) {
	dir := samplesDir(t)
	res := DiscoverPaths([]string{filepath.Join(dir, "claude", "claude-code-log", "-src-deep-manifest")})
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions, want the one with its flat agent file attached", len(res.Sessions))
	}
	if sub := res.Sessions[0].FilesWithRole(FileSubagent); len(sub) != 1 || filepath.Base(sub[0].Path) != "agent-c8d9b115.jsonl" {
		t.Fatalf("subagents %+v", sub)
	}
}

func TestDiscoverBadInput(t *testing.T) {
	dir := t.TempDir()
	// a root that does not exist
	if res := Discover([]Root{{Path: filepath.Join(dir, "nope")}}, false); len(res.Errors) != 1 {
		t.Errorf("missing root: %v", res.Errors)
	}
	if res := Discover([]Root{{Path: filepath.Join(dir, "nope")}}, true); len(res.Errors) != 0 {
		t.Errorf("missing default root must be silent: %v", res.Errors)
	}
	// a symlink loop, an empty file, binary garbage
	os.Symlink(dir, filepath.Join(dir, "loop"))
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "garbage.jsonl"), []byte("\x00\x01\xff\xfe binary"), 0o644)
	res := Discover([]Root{{Path: dir}}, false)
	if len(res.Sessions) != 0 || len(res.Unrecognized) != 2 || len(res.Errors) != 0 {
		t.Errorf("sessions %d unrecognized %v errors %v", len(res.Sessions), res.Unrecognized, res.Errors)
	}
}

func TestFind(t *testing.T) {
	ss := []*Session{{ID: "abc"}, {ID: "abcdef"}, {ID: "xyz"}}
	if f := Find(ss, "abc"); len(f) != 1 || f[0].ID != "abc" {
		t.Errorf("exact match must win: %v", f)
	}
	if f := Find(ss, "ab"); len(f) != 2 {
		t.Errorf("prefix: %v", f)
	}
	if f := Find(ss, "q"); len(f) != 0 {
		t.Errorf("none: %v", f)
	}
}

// A Claude file named on the command line brings its <id>/ folder, its
// rotations and its lock file, exactly as when its directory is searched.
func TestDiscoverExplicitClaudeFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(testdata, "claude", "projects", "-home-alice-src-web")
	id := "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"
	copyTree(t, src, dir)
	main := filepath.Join(dir, id+".jsonl")
	os.WriteFile(main+".1", []byte("{}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "."+id+".jsonl.sessctl.lock"), nil, 0o600)
	for _, p := range []string{main, main + ".1"} {
		res := DiscoverPaths([]string{p})
		if len(res.Sessions) != 1 {
			t.Fatalf("%s: %d sessions", p, len(res.Sessions))
		}
		s := res.Sessions[0]
		roles := map[FileRole]int{}
		for _, f := range s.Files {
			roles[f.Role]++
		}
		if s.Main != main || roles[FileSubagent] != 1 || roles[FileRotation] != 1 || roles[FileSide] != 2 || s.Dir == "" {
			t.Errorf("%s: main %s roles %v dir %q", p, s.Main, roles, s.Dir)
		}
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPreview(t *testing.T) {
	if got := Preview("  a\n\tb  c ", 10); got != "a b c" {
		t.Errorf("short text: %q", got)
	}
	if got := Preview("héllo wörld", 6); got != "héllo…" {
		t.Errorf("cut: %q (6 runes with the mark)", got)
	}
}
