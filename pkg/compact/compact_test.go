package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

var fixedNow = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

func opts() Options {
	return Options{Force: true, Now: func() time.Time { return fixedNow }, MaxToolOutput: DefaultMaxToolOutput}
}

func writeFile(t *testing.T, path string, lines ...string) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b := []byte(strings.Join(lines, "\n") + "\n")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v: %.200s", i+1, err, l)
		}
		out = append(out, m)
	}
	return out
}

// TestKimiMatchesKimisOwnCompaction compacts the pre-compaction sample
// (context_1.jsonl, written by kimi-cli) and compares the result with the
// file Kimi itself wrote after compacting it (context.jsonl): same system
// prompt line, _checkpoint 0, the summary message shape, and the same
// preserved tail, byte for byte.
func TestKimiMatchesKimisOwnCompaction(t *testing.T) {
	dir := samples(t, "kimi", "ex2_compacted_session")
	before := mustRead(t, filepath.Join(dir, "context_1.jsonl"))
	kimiOut := readLines(t, filepath.Join(dir, "context.jsonl"))
	work := filepath.Join(t.TempDir(), "sessions", "h", "s")
	path := filepath.Join(work, "context.jsonl")
	writeFile(t, path, strings.TrimSuffix(string(before), "\n"))

	res, err := Compact(path, session.Kimi, opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Original != filepath.Join(work, "context_1.jsonl") || !bytes.Equal(mustRead(t, res.Original), before) {
		t.Fatalf("original not kept as context_1.jsonl: %q", res.Original)
	}
	got := readLines(t, path)
	if len(got) != 8 {
		t.Fatalf("%d lines, want 8:\n%s", len(got), bytes.Join(got, []byte("\n")))
	}
	if !bytes.Equal(got[0], kimiOut[0]) {
		t.Errorf("system prompt line differs")
	}
	if string(got[1]) != `{"role": "_checkpoint", "id": 0}` {
		t.Errorf("line 2 = %s", got[1])
	}
	for i := 3; i <= 6; i++ {
		if !bytes.Equal(got[i], kimiOut[i]) {
			t.Errorf("tail line %d:\n got %s\nwant %s", i+1, got[i], kimiOut[i])
		}
	}
	var sum struct {
		Role    string `json:"role"`
		Content []struct{ Type, Text string }
	}
	if err := json.Unmarshal(got[2], &sum); err != nil || sum.Role != "user" || len(sum.Content) != 2 ||
		sum.Content[0].Text != KimiSummaryPrefix || sum.Content[1].Text != res.Summary {
		t.Errorf("summary message %s (%v)", got[2], err)
	}
	if !strings.HasPrefix(string(got[2]), `{"role":"user","content":[{"type":"text","text":"<system>Previous context has been compacted. Here is the compaction output:</system>"},{"type":"text","text":"`) {
		t.Errorf("summary line is not serialised like Kimi's: %.200s", got[2])
	}
	if !strings.HasPrefix(string(got[7]), `{"role": "_usage", "token_count": `) || res.Tokens.RecordedAfter == nil {
		t.Errorf("last line %s", got[7])
	}
	kimiRestore(t, mustRead(t, path))
	if res.Tokens.RecordedBefore == nil || *res.Tokens.RecordedBefore != 215020 {
		t.Errorf("recorded before = %v, want 215020", res.Tokens.RecordedBefore)
	}
}

// kimiRestore applies kimi.md §4.1 to a file: every line a JSON object with
// a string role, _system_prompt first, checkpoint ids 0, 1, 2, ….
func kimiRestore(t *testing.T, b []byte) {
	t.Helper()
	next := 0
	for i, m := range decodeLines(t, b) {
		role, _ := m["role"].(string)
		switch {
		case i == 0 && role != "_system_prompt":
			t.Errorf("first record is %q, not _system_prompt", role)
		case role == "_checkpoint":
			if id, _ := m["id"].(float64); int(id) != next {
				t.Errorf("checkpoint id %v, want %d", m["id"], next)
			}
			next++
		case role == "":
			t.Errorf("line %d has no role", i+1)
		}
	}
}

// claudeLine builds a Claude Code 2.1.197 line.
func claudeLine(typ, uuid, parent string, message string, extra ...string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	ex := ""
	for _, e := range extra {
		ex += "," + e
	}
	return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":"%s","message":%s,"uuid":"%s","timestamp":"2026-11-22T03:00:00.000Z"%s,"userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`,
		p, typ, message, uuid, ex)
}

func userText(s string) string { return fmt.Sprintf(`{"role":"user","content":%q}`, s) }
func asst(id, block string) string {
	return fmt.Sprintf(`{"id":"%s","type":"message","role":"assistant","model":"claude-opus-4-8","content":[%s],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":5}}`, id, block)
}
func textBlock(s string) string { return fmt.Sprintf(`{"type":"text","text":%q}`, s) }
func toolUse(id, name, input string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":"%s","name":"%s","input":%s}`, id, name, input)
}
func toolResult(id, out string, isErr bool) string {
	e := ""
	if isErr {
		e = `,"is_error":true`
	}
	return fmt.Sprintf(`{"role":"user","content":[{"tool_use_id":"%s","type":"tool_result","content":%q%s}]}`, id, out, e)
}

func claudeSession(t *testing.T, dir string, bigOutput string) (string, []byte) {
	path := filepath.Join(dir, "projects", "-w", "sess-1.jsonl")
	orig := writeFile(t, path,
		`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-22T03:00:00.000Z","sessionId":"sess-1","content":"x"}`,
		claudeLine("user", "u1", "", userText("first request FOO-OLD: make the tests pass")),
		claudeLine("assistant", "a1", "u1", asst("msg_1", textBlock("I'll run the tests."))),
		claudeLine("assistant", "a2", "a1", asst("msg_1", toolUse("call1", "Bash", `{"command":"make test"}`))),
		claudeLine("user", "r1", "a2", toolResult("call1", "FAIL: boom in parse_test.go", true), `"sourceToolAssistantUUID":"a2"`),
		claudeLine("assistant", "a3", "r1", asst("msg_2", textBlock("The failure came from parse.go; I fixed the off-by-one."))),
		claudeLine("user", "u2", "a3", userText("second request: write main.go")),
		claudeLine("assistant", "a4", "u2", asst("msg_3", toolUse("call2", "Write", `{"file_path":"/w/main.go","content":"package main"}`))),
		claudeLine("user", "r2", "a4", toolResult("call2", bigOutput, false), `"toolUseResult":{"stdout":"huge"}`, `"sourceToolAssistantUUID":"a4"`),
		claudeLine("user", "r0", "r2", toolResult("call1", "late result of a compacted call", false)),
		claudeLine("assistant", "a5", "r0", asst("msg_4", toolUse("call3", "Bash", `{"command":"go vet ./..."}`))),
		claudeLine("user", "u3", "a5", userText("third request: anything else? KEEP-ME")),
	)
	return path, orig
}

func TestClaudeTail(t *testing.T) {
	big := strings.Repeat("line of build output with some words in it\n", 3000)
	path, orig := claudeSession(t, t.TempDir(), big)
	o := opts()
	o.Keep = 4 // from "second request" on
	o.MaxToolOutput = 200
	res, err := Compact(path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	after := mustRead(t, path)
	if !bytes.HasPrefix(after, orig) {
		t.Fatal("the original bytes are not kept at the start of the file")
	}
	if !bytes.Equal(mustRead(t, path+".1"), orig) || res.Original != path+".1" {
		t.Fatalf("rotation %q does not hold the original", res.Original)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	added := decodeLines(t, after[len(orig):])
	// boundary, summary, u2, a4, r2 (shortened), a5, aborted result for call3, u3; r0 dropped
	if len(added) != 8 || res.AppendedLines != 8 {
		t.Fatalf("%d lines appended, want 8", len(added))
	}
	if res.Tail.DroppedToolResults != 1 || res.Tail.AbortedToolCalls != 1 || res.Tail.TruncatedToolOutputs != 1 {
		t.Errorf("tail stats %+v", res.Tail)
	}
	rawAdded := bytes.Split(after[len(orig):], []byte("\n"))
	if !strings.HasPrefix(string(rawAdded[0]), `{"parentUuid":null,"logicalParentUuid":"u3","isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-11-22T05:00:00.000Z","uuid":"`) ||
		!strings.HasSuffix(string(rawAdded[0]), `,"userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`) {
		t.Errorf("boundary line %s", rawAdded[0])
	}
	if !strings.Contains(string(rawAdded[0]), `"level":"info","compactMetadata":{"trigger":"manual","preTokens":`) {
		t.Errorf("boundary metadata %s", rawAdded[0])
	}
	b, s := added[0], added[1]
	if s["parentUuid"] != b["uuid"] || s["isCompactSummary"] != true || s["isVisibleInTranscriptOnly"] != true {
		t.Errorf("summary line not linked to the boundary: %v", s)
	}
	if !strings.Contains(string(rawAdded[1]), `"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":"`) {
		t.Errorf("summary key order %s", rawAdded[1])
	}
	text := s["message"].(map[string]any)["content"].(string)
	for _, want := range []string{"This session is being continued", "first request FOO-OLD", "FAIL: boom", "make test", "parse.go", path} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	// the copies are chained from the summary, with new uuids
	parent := s["uuid"]
	for i, m := range added[2:] {
		if m["parentUuid"] != parent {
			t.Errorf("copy %d parent %v, want %v", i, m["parentUuid"], parent)
		}
		parent = m["uuid"]
		if u := m["uuid"].(string); len(u) != 36 {
			t.Errorf("copy %d uuid %q", i, u)
		}
	}
	r2 := string(rawAdded[4])
	if !strings.Contains(r2, "tokens truncated…") || strings.Contains(r2, "toolUseResult") || len(r2) > 4000 {
		t.Errorf("big output not shortened: %d bytes", len(r2))
	}
	if added[4]["sourceToolAssistantUUID"] != added[3]["uuid"] {
		t.Errorf("sourceToolAssistantUUID not remapped")
	}
	// the copies have their own message and tool ids, and zero usage
	// (Claude Code merges lines by message.id and keeps the first result
	// of a tool id; ccusage must not count a response twice)
	a5 := string(rawAdded[5])
	if strings.Contains(a5, `"msg_4"`) || strings.Contains(a5, `"call3"`) || !strings.Contains(a5, `"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}`) {
		t.Errorf("assistant copy %s", a5)
	}
	newCall := added[5]["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["id"].(string)
	ab := string(rawAdded[6])
	if !strings.HasPrefix(newCall, "toolu_") || !strings.Contains(ab, `"content":[{"tool_use_id":"`+newCall+`","type":"tool_result","content":"aborted","is_error":true}]`) {
		t.Errorf("aborted result %s (call %s)", ab, newCall)
	}
	r2call := added[3]["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["id"]
	if !strings.Contains(string(rawAdded[4]), fmt.Sprintf(`"tool_use_id":"%s"`, r2call)) {
		t.Errorf("result copy not paired with its call copy %v", r2call)
	}
	if strings.Contains(string(after[len(orig):]), "late result of a compacted call") {
		t.Error("the orphan tool result was kept")
	}
	if !strings.Contains(string(rawAdded[7]), "KEEP-ME") {
		t.Errorf("last copy %s", rawAdded[7])
	}
	// sessctl reads the result: no corrupt line
	if err := session.ReadFile(path, session.FormatFor(session.Claude), func(r *session.Record) error {
		if r.Line.Status != jsonl.OK {
			return fmt.Errorf("line %d: %v", r.Line.Num, r.Line.Status)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if res.Tokens.Before <= res.Tokens.After || res.Tokens.SavedPercent <= 0 {
		t.Errorf("tokens %+v", res.Tokens)
	}
	// compacting again starts from the new boundary
	res2, err := Compact(path, session.Claude, Options{Force: true, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res2.ActiveStartLine != 13 || res2.Messages != 5 {
		t.Errorf("second compaction: live context from line %d with %d messages", res2.ActiveStartLine, res2.Messages)
	}
	// the context recorded before it is the first compaction's postTokens,
	// not the zero usage of the copies
	if res2.Tokens.RecordedBefore == nil || *res2.Tokens.RecordedBefore != int64(res.Tokens.After) {
		t.Errorf("recorded before the second compaction: %v, want %d", res2.Tokens.RecordedBefore, res.Tokens.After)
	}
}

func TestTooShortWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := writeFile(t, path,
		claudeLine("user", "u1", "", userText("hi")),
		claudeLine("assistant", "a1", "u1", asst("msg_1", textBlock("hello"))))
	_, err := Compact(path, session.Claude, opts())
	var short *TooShortError
	if !errors.As(err, &short) || !errors.Is(err, ErrTooShort) || short.Messages != 2 {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 { // the file and its lock sidecar
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v", names)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path, orig := claudeSession(t, dir, "small")
	o := opts()
	o.DryRun = true
	res, err := Compact(path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Written || res.Summary == "" || res.SplitLine != 11 {
		t.Errorf("dry run result: written %v, split line %d", res.Written, res.SplitLine)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
	if _, err := os.Stat(path + ".1"); err == nil {
		t.Error("a rotation was made")
	}
}

func TestLiveSessionRefused(t *testing.T) {
	path, orig := claudeSession(t, t.TempDir(), "small")
	o := opts()
	o.Force, o.Now = false, time.Now // the file was just written
	if _, err := Compact(path, session.Claude, o); !errors.Is(err, safety.ErrLive) {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
}

func TestSummarizer(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.md")
	cases := []struct {
		name, cmd string
		fallback  bool
		errPart   string
	}{
		{"ok", "cat > " + in + "; echo '  SUMMARY FROM THE MODEL  '", false, ""},
		{"crash", "echo oops >&2; exit 3", true, "exit status 3: oops"},
		{"silent", "cat >/dev/null", true, "printed nothing"},
		{"hang", "sleep 30", true, "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, _ := claudeSession(t, t.TempDir(), "small")
			o := opts()
			o.Summarizer, o.SummarizerTimeout = c.cmd, 300*time.Millisecond
			if c.name == "ok" {
				o.SummarizerTimeout = 10 * time.Second
			}
			start := time.Now()
			res, err := Compact(path, session.Claude, o)
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(start) > 8*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			if res.Summarizer.Fallback != c.fallback || !strings.Contains(res.Summarizer.Error, c.errPart) {
				t.Errorf("summarizer %+v", res.Summarizer)
			}
			file := string(mustRead(t, path))
			if c.fallback {
				if res.Summarizer.Kind != "extractive" || !strings.Contains(res.Summary, "The external summarizer failed") ||
					!strings.Contains(file, "The external summarizer failed") {
					t.Errorf("fallback not said in the summary record: %q", res.Summary)
				}
				return
			}
			if res.Summary != "SUMMARY FROM THE MODEL" || res.Summarizer.Kind != "command" {
				t.Errorf("summary %q", res.Summary)
			}
			h := string(mustRead(t, in))
			if !strings.HasPrefix(h, "## Message 1\nRole: user\nContent:\nfirst request FOO-OLD") ||
				!strings.Contains(h, "## Message 2\nRole: assistant\nContent:\nI'll run the tests.\n") ||
				!strings.Contains(h, "## Instructions\n") || strings.Contains(h, "KEEP-ME") {
				t.Errorf("history given to the summarizer:\n%s", h)
			}
		})
	}
}

func TestCorruptLinesInCompactedPart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := writeFile(t, path,
		claudeLine("user", "u1", "", userText("one")),
		`{"type":"assistant","message": GARBAGE`,
		claudeLine("assistant", "a1", "u1", asst("msg_1", textBlock("two"))),
		"\x00\x00\x00",
		claudeLine("user", "u2", "a1", userText("three")),
		claudeLine("assistant", "a2", "u2", asst("msg_2", textBlock("four"))))
	res, err := Compact(path, session.Claude, opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.CorruptCompacted != 2 {
		t.Errorf("corrupt lines in the compacted part: %d, want 2", res.CorruptCompacted)
	}
	if !bytes.HasPrefix(mustRead(t, path), orig) || !bytes.Equal(mustRead(t, res.Original), orig) {
		t.Error("corrupt lines not kept")
	}
}

func TestTornLastLineIsTerminated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	lines := []string{
		claudeLine("user", "u1", "", userText("one")),
		claudeLine("assistant", "a1", "u1", asst("msg_1", textBlock("two"))),
		claudeLine("user", "u2", "a1", userText("three")),
		claudeLine("assistant", "a2", "u2", asst("msg_2", textBlock("four"))),
	}
	torn := strings.Join(lines, "\n") + "\n" + `{"parentUuid":"a2","isSid`
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Compact(path, session.Claude, opts()); err != nil {
		t.Fatal(err)
	}
	b := mustRead(t, path)
	if !bytes.HasPrefix(b, []byte(torn+"\n{")) {
		t.Errorf("the torn line was not terminated before the new lines")
	}
}

func TestNoUserMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path,
		claudeLine("assistant", "a1", "", asst("msg_1", textBlock("one"))),
		claudeLine("assistant", "a2", "a1", asst("msg_2", textBlock("two"))),
		claudeLine("assistant", "a3", "a2", asst("msg_3", textBlock("three"))))
	res, err := Compact(path, session.Claude, opts())
	if err != nil {
		t.Fatal(err)
	}
	if !res.NoUserMessage || !strings.Contains(res.Summary, "No user request in the compacted messages") {
		t.Errorf("no-user session: %v\n%s", res.NoUserMessage, res.Summary)
	}
}

func TestSummaryBudget(t *testing.T) {
	var lines []string
	parent := ""
	for i := 0; i < 300; i++ {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		lines = append(lines,
			claudeLine("user", u, parent, userText(fmt.Sprintf("request %d: %s", i, strings.Repeat("please refactor the parser module ", 20)))),
			claudeLine("assistant", a, u, asst(fmt.Sprintf("msg_%d", i), textBlock(strings.Repeat("done with the refactoring step ", 20)))))
		parent = a
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, path, lines...)
	o := opts()
	o.SummaryTokens = 500
	o.DryRun = true
	res, err := Compact(path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.SummaryTokens > 500 || res.SummaryTokens < 250 {
		t.Errorf("summary has %d tokens, budget 500", res.SummaryTokens)
	}
	if !strings.Contains(res.Summary, "request 298") || !strings.Contains(res.Summary, "earlier requests not listed") {
		t.Errorf("budget should drop the oldest requests first:\n%s", res.Summary)
	}
}

func mustCounter(t *testing.T) *tokens.Counter {
	t.Helper()
	c, err := tokens.NewCounter(tokens.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTruncator(t *testing.T) {
	c := mustCounter(t)
	tr := &truncator{count: c, max: 100}
	s := strings.Repeat("alpha beta gamma delta ", 200) + "THE END"
	out, ok := tr.shorten(s)
	if !ok || !strings.HasPrefix(out, "alpha") || !strings.HasSuffix(out, "THE END") || !strings.Contains(out, " tokens truncated…") {
		t.Fatalf("shorten: %q", out)
	}
	if n := c.Count(out); n > 115 {
		t.Errorf("shortened text has %d tokens", n)
	}
	if _, ok := tr.shorten("short"); ok {
		t.Error("short text shortened")
	}
	// multi-byte text is cut on rune boundaries
	out, _ = tr.shorten(strings.Repeat("上下文压缩边界", 300))
	if !json.Valid([]byte(fmt.Sprintf("%q", out))) || strings.ContainsRune(out, '\uFFFD') {
		t.Errorf("bad cut: %q", out)
	}
}

func TestCodexCompacted(t *testing.T) {
	dir := samples(t, "real-clients", "codex-home", "codex", "sessions", "2026", "11", "22")
	src := filepath.Join(dir, "rollout-2026-11-22T02-59-33-01a20131-d660-7d01-9c2a-095cf6a93b50.jsonl")
	orig := mustRead(t, src)
	path := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Compact(path, session.Codex, opts())
	if err != nil {
		t.Fatal(err)
	}
	after := mustRead(t, path)
	if !bytes.HasPrefix(after, orig) {
		t.Fatal("original bytes changed")
	}
	origLines := decodeLines(t, orig)
	lastOrdinal := origLines[len(origLines)-1]["ordinal"].(float64)
	rawAdded := bytes.Split(bytes.TrimSuffix(after[len(orig):], []byte("\n")), []byte("\n"))
	if len(rawAdded) != 2 {
		t.Fatalf("%d lines appended, want compacted + token_count", len(rawAdded))
	}
	wantHead := fmt.Sprintf(`{"timestamp":"2026-11-22T05:00:00.000Z","ordinal":%d,"type":"compacted","payload":{"message":"Another language model started`, int(lastOrdinal)+1)
	if !strings.HasPrefix(string(rawAdded[0]), wantHead) {
		t.Errorf("compacted line starts %.200s\nwant %s", rawAdded[0], wantHead)
	}
	var c struct {
		Payload struct {
			Message            string
			ReplacementHistory []json.RawMessage `json:"replacement_history"`
		}
	}
	if err := json.Unmarshal(rawAdded[0], &c); err != nil {
		t.Fatal(err)
	}
	if c.Payload.Message != CodexSummaryPrefix+"\n"+res.Summary {
		t.Errorf("message is not the fixed prefix + summary")
	}
	// every kept response item is in the history verbatim, after the summary
	var summaryAt = -1
	for i, it := range c.Payload.ReplacementHistory {
		if bytes.Contains(it, []byte("Another language model started")) {
			summaryAt = i
		}
	}
	if summaryAt < 0 {
		t.Fatal("no summary message in replacement_history")
	}
	for _, l := range bytes.Split(orig, []byte("\n"))[res.SplitLine-1:] {
		var env struct {
			Type    string
			Payload json.RawMessage
		}
		if json.Unmarshal(l, &env) != nil || env.Type != "response_item" {
			continue
		}
		if !bytes.Contains(rawAdded[0], env.Payload) {
			t.Errorf("kept item missing from replacement_history: %.120s", env.Payload)
		}
	}
	var tc struct {
		Ordinal int
		Payload struct {
			Info struct {
				Last map[string]int64 `json:"last_token_usage"`
			}
		}
	}
	if err := json.Unmarshal(rawAdded[1], &tc); err != nil || tc.Ordinal != int(lastOrdinal)+2 ||
		tc.Payload.Info.Last["total_tokens"] != int64(res.Tokens.After) || tc.Payload.Info.Last["input_tokens"] != 0 {
		t.Errorf("token_count line %s", rawAdded[1])
	}
	// the compacted-away first prompt is only inside the summary
	if n := bytes.Count(rawAdded[0], []byte("Please list the files here")); n != 2 { // message + the summary item
		t.Errorf("the first prompt appears %d times", n)
	}
}

func TestClawdcodePair(t *testing.T) {
	line := func(uuid, parent, typ, rest string) string {
		return fmt.Sprintf(`{"uuid":"%s","parentUuid":"%s","sessionId":"N-jKgMMEsFVxfvZ5q6lVM","timestamp":"2026-03-02T09:15:04.512Z","type":"%s","cwd":"/home/alice/app","gitBranch":"main","version":"0.1.0",%s}`, uuid, parent, typ, rest)
	}
	path := filepath.Join(t.TempDir(), "N-jKgMMEsFVxfvZ5q6lVM.jsonl")
	orig := writeFile(t, path,
		line("lJX70lSUAJYPC_67hb51F", "", "user", `"message":{"role":"user","content":"重构 src/utils.ts"}`),
		line("tI6ElijlouzPC_ikEARGc", "lJX70lSUAJYPC_67hb51F", "assistant", `"message":{"role":"assistant","content":"Let me read it."}`),
		line("WBH9BED4qntXYv7nXhaxV", "tI6ElijlouzPC_ikEARGc", "tool_use", `"message":{"role":"assistant","content":""},"tool":{"id":"call_01","name":"Edit","input":{"file_path":"src/utils.ts"}}`),
		line("HKlon8XM2_uuKfP3-jS7S", "WBH9BED4qntXYv7nXhaxV", "tool_result", `"message":{"role":"assistant","content":""},"toolResult":{"id":"call_01","output":"ok"}`),
		line("aaaaaaaaaaaaaaaaaaaa1", "HKlon8XM2_uuKfP3-jS7S", "user", `"message":{"role":"user","content":"now the tests"}`),
		line("aaaaaaaaaaaaaaaaaaaa2", "aaaaaaaaaaaaaaaaaaaa1", "assistant", `"message":{"role":"assistant","content":"Running them."}`),
		line("aaaaaaaaaaaaaaaaaaaa3", "aaaaaaaaaaaaaaaaaaaa2", "tool_use", `"message":{"role":"assistant","content":""},"tool":{"id":"call_02","name":"Bash","input":{"command":"npm test"}}`),
	)
	res, err := Compact(path, session.Clawdcode, opts())
	if err != nil {
		t.Fatal(err)
	}
	added := bytes.Split(bytes.TrimSuffix(mustRead(t, path)[len(orig):], []byte("\n")), []byte("\n"))
	// boundary, summary, copies of u(now the tests), a, tool_use, aborted result
	if len(added) != 6 {
		t.Fatalf("%d lines appended:\n%s", len(added), bytes.Join(added, []byte("\n")))
	}
	meta := fmt.Sprintf(`"compactMetadata":{"trigger":"manual","preTokens":%d,"postTokens":%d,"filesIncluded":["src/utils.ts"]}}`, res.Tokens.Before, res.Tokens.After)
	b := string(added[0])
	if !strings.HasPrefix(b, `{"uuid":"`) || !strings.Contains(b, `","parentUuid":null,"sessionId":"N-jKgMMEsFVxfvZ5q6lVM","timestamp":"2026-11-22T05:00:00.000Z","type":"system","subtype":"compact_boundary","cwd":"/home/alice/app","gitBranch":"main","version":"0.1.0","message":{"role":"system","content":"=== 上下文压缩边界 ==="},`+meta) {
		t.Errorf("boundary %s", b)
	}
	s := string(added[1])
	if !strings.Contains(s, `","sessionId":"N-jKgMMEsFVxfvZ5q6lVM","timestamp":"2026-11-22T05:00:00.001Z","type":"user","isCompactSummary":true,"cwd":"/home/alice/app","version":"0.1.0","message":{"role":"user","content":"Offline summary`) ||
		!strings.HasSuffix(s, meta) {
		t.Errorf("summary %s", s)
	}
	var bm, sm, first map[string]any
	json.Unmarshal(added[0], &bm)
	json.Unmarshal(added[1], &sm)
	json.Unmarshal(added[2], &first)
	if sm["parentUuid"] != bm["uuid"] || first["parentUuid"] != sm["uuid"] || len(first["uuid"].(string)) != 21 {
		t.Errorf("chain: %v → %v → %v", bm["uuid"], sm["parentUuid"], first["parentUuid"])
	}
	if !strings.Contains(string(added[5]), `"type":"tool_result"`) || !strings.Contains(string(added[5]), `"toolResult":{"id":"call_02","output":"aborted","error":"aborted"}`) {
		t.Errorf("aborted result %s", added[5])
	}
}

// TestKimiSpacedMessagesWrittenCompact: message lines written in json.dumps
// style (as kimi-cli's tests do) are written back the way Kimi writes
// messages: compact, raw UTF-8.
func TestKimiSpacedMessagesWrittenCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "context.jsonl")
	writeFile(t, path,
		`{"role": "_system_prompt", "content": "sp"}`,
		`{"role": "_checkpoint", "id": 0}`,
		`{"role": "user", "content": "first"}`,
		`{"role": "assistant", "content": "second"}`,
		`{"role": "user", "content": "caf\u00e9 third"}`,
		`{"role": "assistant", "content": "fourth", "tool_calls": [{"type": "function", "id": "t1", "function": {"name": "Shell", "arguments": "{}"}}]}`)
	if _, err := Compact(path, session.Kimi, opts()); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, path)
	want := []string{
		`{"role":"user","content":"café third"}`,
		`{"role":"assistant","content":"fourth","tool_calls":[{"type":"function","id":"t1","function":{"name":"Shell","arguments":"{}"}}]}`,
		`{"role":"tool","content":"<system>ERROR: aborted (no result was recorded before the context was compacted)</system>","tool_call_id":"t1"}`,
	}
	if len(got) != 7 {
		t.Fatalf("%d lines:\n%s", len(got), bytes.Join(got, []byte("\n")))
	}
	for i, w := range want {
		if string(got[3+i]) != w {
			t.Errorf("line %d:\n got %s\nwant %s", 4+i, got[3+i], w)
		}
	}
	kimiRestore(t, mustRead(t, path))
}

// TestKimiInvalidUTF8 reads lines as Kimi does: invalid UTF-8 becomes
// U+FFFD, and the message is kept.
func TestKimiInvalidUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "context.jsonl")
	writeFile(t, path,
		`{"role": "_system_prompt", "content": "sp"}`,
		`{"role":"user","content":"first"}`,
		`{"role":"assistant","content":"second"}`,
		"{\"role\":\"user\",\"content\":\"bad \xe4\xb8 \xff\xfe bytes\"}",
		`{"role":"system","content":"a system note"}`,
		`{"role":"assistant","content":"fourth"}`)
	res, err := Compact(path, session.Kimi, opts())
	if err != nil {
		t.Fatal(err)
	}
	got := readLines(t, path)
	if res.CorruptTail != 0 || len(got) != 7 || string(got[3]) != "{\"role\":\"user\",\"content\":\"bad \uFFFD \uFFFD\uFFFD bytes\"}" ||
		string(got[4]) != `{"role":"system","content":"a system note"}` {
		t.Errorf("corrupt %d:\n%s", res.CorruptTail, bytes.Join(got, []byte("\n")))
	}
}

// TestInterrupted: a cancelled compaction (Ctrl-C) stops a hanging
// summariser at once and writes nothing.
func TestInterrupted(t *testing.T) {
	path, orig := claudeSession(t, t.TempDir(), "small")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	o := opts()
	o.Ctx, o.Summarizer, o.SummarizerTimeout = ctx, "sleep 30", time.Minute
	start := time.Now()
	_, err := Compact(path, session.Claude, o)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
	if _, err := os.Stat(path + ".1"); err == nil {
		t.Error("a rotation was made")
	}
}

func TestCodexLegacyRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout-2025-05-01T10-00-00-x.jsonl")
	orig := writeFile(t, path,
		`{"id":"x","timestamp":"2025-05-01T10:00:00.000Z","instructions":null}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"three"}]}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"four"}]}`)
	_, err := Compact(path, session.Codex, opts())
	if err == nil || !strings.Contains(err.Error(), "without session_meta") {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
}

// TestClaudePreservedSegmentIsLive: after Claude Code's own /compact the
// live context includes the segment it preserved before the boundary
// (compactMetadata.preservedSegment; the real 2.1.197 file, lines 31 and
// 36–41).
func TestClaudePreservedSegmentIsLive(t *testing.T) {
	src := filepath.Join(samples(t, "real-clients", "claude-home", "claude", "projects", "-home-dev-work-demo"), "7bd0bccd-9f75-4483-b19b-c7e227cb8be6.jsonl")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, mustRead(t, src), 0o600); err != nil {
		t.Fatal(err)
	}
	o := opts()
	o.DryRun, o.Keep = true, 1
	res, err := Compact(path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	// line 31 (the preserved reply), the summary (37), the /compact lines
	// (38–40), the synthetic pair (45–46), then four turns' messages
	if res.ActiveStartLine != 31 || res.Messages != 12 {
		t.Errorf("live context from line %d with %d messages, want line 31 and 12", res.ActiveStartLine, res.Messages)
	}
	if !strings.Contains(res.Summary, "Acknowledged (no tool needed). Turn reply #14.") {
		t.Errorf("the preserved reply is not summarised:\n%s", res.Summary)
	}
}
