package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

var compactNow = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

func compactOpts() compact.Options {
	return compact.Options{Force: true, Now: func() time.Time { return compactNow }, MaxToolOutput: compact.DefaultMaxToolOutput}
}

func writeSession(t *testing.T, path string, lines ...string) []byte {
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

// line builds a Claude Code 2.1.197 line.
func line(typ, uuid, parent, ts, message string, extra ...string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	ex := ""
	for _, e := range extra {
		ex += "," + e
	}
	return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":"%s","message":%s,"uuid":"%s","timestamp":"%s"%s,"userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`,
		p, typ, message, uuid, ts, ex)
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

var long = strings.Repeat("The parser handles nested blocks now. ", 30)

func tailSession(t *testing.T, dir string, bigOutput string) (string, []byte) {
	path := filepath.Join(dir, "projects", "-w", "sess-1.jsonl")
	orig := writeSession(t, path,
		`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-22T03:00:00.000Z","sessionId":"sess-1","content":"x"}`,
		line("user", "u1", "", "2026-11-22T03:00:01.000Z", userText("first request FOO-OLD: make the tests pass")),
		line("assistant", "a1", "u1", "2026-11-22T03:00:02.000Z", asst("msg_1", textBlock("I'll run the tests. "+long))),
		line("assistant", "a2", "a1", "2026-11-22T03:00:03.000Z", asst("msg_1", toolUse("call1", "Bash", `{"command":"make test"}`))),
		line("user", "r1", "a2", "2026-11-22T03:00:04.000Z", toolResult("call1", "FAIL: boom in parse_test.go", true), `"sourceToolAssistantUUID":"a2"`),
		line("assistant", "a3", "r1", "2026-11-22T03:00:05.000Z", asst("msg_2", textBlock("The failure came from parse.go; I fixed the off-by-one. "+long))),
		line("user", "u2", "a3", "2026-11-22T03:00:06.000Z", userText("second request: write main.go")),
		line("assistant", "a4", "u2", "2026-11-22T03:00:07.000Z", asst("msg_3", toolUse("call2", "Write", `{"file_path":"/w/main.go","content":"package main"}`))),
		line("user", "r2", "a4", "2026-11-22T03:00:08.000Z", toolResult("call2", bigOutput, false), `"toolUseResult":{"stdout":"huge"}`, `"sourceToolAssistantUUID":"a4"`),
		line("user", "r0", "r2", "2026-11-22T03:00:09.000Z", toolResult("call1", "late result of a compacted call", false)),
		line("assistant", "a5", "r0", "2026-11-22T03:00:10.000Z", asst("msg_4", toolUse("call3", "Bash", `{"command":"go vet ./..."}`))),
		line("user", "u3", "a5", "2026-11-22T03:00:11.000Z", userText("third request: anything else? KEEP-ME")),
	)
	return path, orig
}

// TestCompactCopiesTail: a kept tail that must change (an output to
// shorten, an orphan result to drop) is copied after the summary: new ids,
// zero usage, the original times. The assistant line whose tool call was
// never answered (a5) is not in the history Claude Code rebuilds
// (docs/formats/claude-code.md), so it is not kept either: --keep 4 counts
// back from u3 over u2's turn to a3.
func TestCompactCopiesTail(t *testing.T) {
	big := strings.Repeat("line of build output with some words in it\n", 3000)
	path, orig := tailSession(t, t.TempDir(), big)
	o := compactOpts()
	o.Keep = 4 // from "second request" on
	o.MaxToolOutput = 200
	res, err := compact.Compact(context.Background(), path, Agent, o)
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
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	added := decodeLines(t, after[len(orig):])
	// boundary, summary, a3, u2, a4, r2 (shortened), u3 (r0 dropped, a5
	// not in the history); no last-prompt (the file has none)
	if len(added) != 7 || res.AppendedLines != 7 {
		t.Fatalf("%d lines appended, want 7", len(added))
	}
	if res.Tail.DroppedToolResults != 1 || res.Tail.AbortedToolCalls != 0 || res.Tail.TruncatedToolOutputs != 1 {
		t.Errorf("tail stats %+v", res.Tail)
	}
	rawAdded := bytes.Split(after[len(orig):], []byte("\n"))
	if !strings.HasPrefix(string(rawAdded[0]), `{"parentUuid":null,"logicalParentUuid":"u3","isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-11-22T05:00:00.000Z","uuid":"`) ||
		!strings.HasSuffix(string(rawAdded[0]), `,"userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`) {
		t.Errorf("boundary line %s", rawAdded[0])
	}
	if !strings.Contains(string(rawAdded[0]), `"level":"info","compactMetadata":{"trigger":"manual","preTokens":`) || strings.Contains(string(rawAdded[0]), "preservedSegment") {
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
	for _, want := range []string{"This session is being continued", "first request FOO-OLD", "FAIL: boom", "make test", path} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	// the copies are chained from the summary, with new uuids and their
	// original times
	parent := s["uuid"]
	times := []string{"2026-11-22T03:00:05.000Z", "2026-11-22T03:00:06.000Z", "2026-11-22T03:00:07.000Z", "2026-11-22T03:00:08.000Z", "2026-11-22T03:00:11.000Z"}
	for i, m := range added[2:] {
		if m["parentUuid"] != parent {
			t.Errorf("copy %d parent %v, want %v", i, m["parentUuid"], parent)
		}
		parent = m["uuid"]
		if u := m["uuid"].(string); len(u) != 36 {
			t.Errorf("copy %d uuid %q", i, u)
		}
		if m["timestamp"] != times[i] {
			t.Errorf("copy %d time %v, want %s", i, m["timestamp"], times[i])
		}
	}
	r2 := string(rawAdded[5])
	if !strings.Contains(r2, "tokens truncated…") || strings.Contains(r2, "toolUseResult") || len(r2) > 4000 {
		t.Errorf("big output not shortened: %d bytes", len(r2))
	}
	if added[5]["sourceToolAssistantUUID"] != added[4]["uuid"] {
		t.Errorf("sourceToolAssistantUUID not remapped")
	}
	if strings.Contains(string(after[len(orig):]), `"call3"`) || strings.Contains(string(after[len(orig):]), `"aborted"`) {
		t.Error("the unanswered call a5 was kept, or answered")
	}
	r2call := added[4]["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["id"]
	if !strings.Contains(string(rawAdded[5]), fmt.Sprintf(`"tool_use_id":"%s"`, r2call)) {
		t.Errorf("result copy not paired with its call copy %v", r2call)
	}
	if strings.Contains(string(after[len(orig):]), "late result of a compacted call") {
		t.Error("the orphan tool result was kept")
	}
	if !strings.Contains(string(rawAdded[6]), "KEEP-ME") {
		t.Errorf("last copy %s", rawAdded[6])
	}
	if err := session.ReadFile(path, Home{}, func(r *session.Record) error {
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
	// the history now starts with the summary, then the copies
	var got []string
	Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		got = append(got, m.ID)
		return nil
	})
	if len(got) != 6 || got[0] != s["uuid"] || got[5] != added[6]["uuid"] {
		t.Errorf("history after the compaction: %q", got)
	}
	// compacting again starts from the new boundary; the context recorded
	// before it is this compaction's postTokens, not the copies' zero usage
	o.Keep = 1
	res2, err := compact.Compact(context.Background(), path, Agent, o)
	if err != nil {
		t.Fatal(err)
	}
	if res2.ActiveStartLine != 14 || res2.Messages != 5 {
		t.Errorf("second compaction: live context from line %d with %d messages", res2.ActiveStartLine, res2.Messages)
	}
	if res2.Tokens.RecordedBefore == nil || *res2.Tokens.RecordedBefore != int64(res.Tokens.After) {
		t.Errorf("recorded before the second compaction: %v, want %d", res2.Tokens.RecordedBefore, res.Tokens.After)
	}
}

// TestCompactByReference: when nothing kept must change and the kept
// messages are one piece of the chain, they stay where they are and the
// boundary names them (compactMetadata.preservedSegment), as Claude Code's
// own /compact does; a last-prompt names the summary as the leaf.
func TestCompactByReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	orig := writeSession(t, path,
		line("user", "u1", "", "2026-11-22T03:00:00.000Z", userText("one "+long)),
		line("assistant", "a1", "u1", "2026-11-22T03:00:01.000Z", asst("msg_1", textBlock("two "+long))),
		`{"type":"last-prompt","lastPrompt":"one","leafUuid":"a1","sessionId":"sess-1"}`,
		line("user", "u2", "a1", "2026-11-22T03:00:02.000Z", userText("three")),
		`{"parentUuid":"u2","isSidechain":false,"attachment":{"type":"x"},"type":"attachment","uuid":"at","timestamp":"2026-11-22T03:00:02.500Z","userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`,
		line("assistant", "a2", "at", "2026-11-22T03:00:03.000Z", asst("msg_2", textBlock("four"))),
		`{"type":"last-prompt","lastPrompt":"three","leafUuid":"a2","sessionId":"sess-1"}`,
	)
	before, err := Home{}.Turns(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compact.Compact(context.Background(), path, Agent, compactOpts())
	if err != nil {
		t.Fatal(err)
	}
	added := decodeLines(t, mustRead(t, path)[len(orig):])
	if len(added) != 3 || res.AppendedLines != 3 {
		t.Fatalf("%d lines appended, want boundary, summary, last-prompt", len(added))
	}
	meta := added[0]["compactMetadata"].(map[string]any)
	seg, _ := meta["preservedSegment"].(map[string]any)
	if seg == nil || seg["headUuid"] != "u2" || seg["tailUuid"] != "a2" || seg["anchorUuid"] != added[1]["uuid"] || added[0]["logicalParentUuid"] != "a2" {
		t.Errorf("boundary %v", added[0])
	}
	if added[2]["type"] != "last-prompt" || added[2]["leafUuid"] != added[1]["uuid"] || added[2]["sessionId"] != "sess-1" || len(added[2]) != 3 {
		t.Errorf("last-prompt %v", added[2])
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "by reference") {
		t.Errorf("notes %q", res.Notes)
	}
	// what the client resumes: the summary, then the kept messages
	var got []string
	Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		got = append(got, m.ID)
		return nil
	})
	if strings.Join(got, " ") != fmt.Sprintf("%s u2 a2", added[1]["uuid"]) {
		t.Errorf("history after the compaction: %q", got)
	}
	after, err := Home{}.Turns(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || after[1].Line != before[1].Line || after[1].N != 1 {
		t.Errorf("turns before %+v\nafter %+v", before, after)
	}
}

// TestCompactAfterOwnCompact: after Claude Code's own /compact (the real
// 2.1.197 file) the live context holds the summary and the reply Claude
// preserved; the injected /compact echoes do not count for --keep.
func TestCompactAfterOwnCompact(t *testing.T) {
	src := filepath.Join("..", "..", "..", "..", "shared", "samples", "real-clients", "claude-home", "claude", "projects", "-home-dev-work-demo", "7bd0bccd-9f75-4483-b19b-c7e227cb8be6.jsonl")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Skip("shared samples not present")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	o := compactOpts()
	o.DryRun, o.Keep = true, 1
	res, err := compact.Compact(context.Background(), path, Agent, o)
	if err != nil {
		t.Fatal(err)
	}
	// the live context: the summary (37), the preserved reply (31), the
	// /compact echoes and the synthetic pair (injected: not counted),
	// then two turns (47–49, 53–57)
	if res.ActiveStartLine != 31 || res.Messages != 7 || res.SplitLine != 57 {
		t.Errorf("live context from line %d with %d messages, split at %d", res.ActiveStartLine, res.Messages, res.SplitLine)
	}
	if !strings.Contains(res.Summary, "Acknowledged (no tool needed). Turn reply #14.") {
		t.Errorf("the preserved reply is not summarised:\n%s", res.Summary)
	}
	// keeping the two turns after the /compact: one piece of the chain
	o.Keep = 5
	if res, err = compact.Compact(context.Background(), path, Agent, o); err != nil {
		t.Fatal(err)
	}
	if res.SplitLine != 47 || !strings.Contains(strings.Join(res.Notes, "\n"), "by reference") {
		t.Errorf("split at %d, notes %q", res.SplitLine, res.Notes)
	}
}

// TestCompactCopiesWhenNotOnePiece: kept messages that are not one piece
// of the chain (the end of the segment Claude's own /compact preserved,
// then the turn after its summary) are copied.
func TestCompactCopiesWhenNotOnePiece(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	orig := writeSession(t, path,
		line("user", "u1", "", "2026-11-22T03:00:00.000Z", userText("one "+long)),
		line("assistant", "a1", "u1", "2026-11-22T03:00:01.000Z", asst("msg_1", textBlock("two "+long))),
		line("user", "u2", "a1", "2026-11-22T03:00:02.000Z", userText("three "+long+long+long+long)),
		line("assistant", "a2", "u2", "2026-11-22T03:00:03.000Z", asst("msg_2", textBlock("four"))),
		`{"parentUuid":null,"logicalParentUuid":"a2","isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-11-22T03:00:04.000Z","uuid":"bd","level":"info","compactMetadata":{"trigger":"manual","preTokens":900,"preservedSegment":{"headUuid":"u2","anchorUuid":"sm","tailUuid":"a2"},"postTokens":100},"userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`,
		line("user", "sm", "bd", "2026-11-22T03:00:04.000Z", userText(SummaryHead+"an earlier summary"), `"isVisibleInTranscriptOnly":true`, `"isCompactSummary":true`),
		line("user", "u3", "sm", "2026-11-22T03:00:05.000Z", userText("five")),
		line("assistant", "a3", "u3", "2026-11-22T03:00:06.000Z", asst("msg_3", textBlock("six"))),
	)
	o := compactOpts()
	o.Keep = 3 // a2, u3, a3
	res, err := compact.Compact(context.Background(), path, Agent, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.SplitLine != 4 || !strings.Contains(strings.Join(res.Notes, "\n"), "copied") {
		t.Errorf("split at %d, notes %q", res.SplitLine, res.Notes)
	}
	added := decodeLines(t, mustRead(t, path)[len(orig):])
	if len(added) != 5 || added[2]["timestamp"] != "2026-11-22T03:00:03.000Z" || added[4]["parentUuid"] != added[3]["uuid"] {
		t.Errorf("appended %v", added)
	}
}

// TestCompact330Summary: on a Claude Code 2.1.330 file the summary is
// written as 2.1.330 writes its own: the tools of the newest tools-used
// record that the kept messages do not call (Bash and Read: the kept turn
// calls none), sorted and joined with ", ", in a system-reminder before
// "Summary:", and the note on the kept messages after the tail. A file
// without those records keeps 2.1.197's form.
func TestCompact330Summary(t *testing.T) {
	b, err := os.ReadFile(v330)
	if err != nil {
		t.Fatal(err)
	}
	l := &compactLayout{ctx: context.Background(), src: memSource(b)}
	c := &layout.Compaction{Summary: "S", Path: "p", Tail: []*layout.Item{{Role: session.RoleUser, Text: "third: bye"}}}
	summary := l.SummaryText(c)
	want := "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n" +
		"<system-reminder>\n<tools-used-before-summary>Bash, Read</tools-used-before-summary>\n</system-reminder>\nSummary:\nS" +
		fmt.Sprintf(summaryTail, "p") + keptNote330
	if summary != want {
		t.Errorf("summary:\n%s\nwant:\n%s", summary, want)
	}
	if got := (&compactLayout{}).EarlierSummary(summary); got != "S" {
		t.Errorf("the earlier summary, for the next compaction: %q", got)
	}

	// the kept turn calls Bash: only Read is named
	l = &compactLayout{scanned: true, v330: true, tools: []string{"Read", "Bash", "Bash", "bad name"}}
	c = &layout.Compaction{Summary: "S", Path: "p", Tail: []*layout.Item{{Calls: []session.ToolCall{{Name: "Bash"}}}}}
	if got := l.SummaryText(c); !strings.Contains(got, "<tools-used-before-summary>Read, unreadable-tools-used-before-summary</tools-used-before-summary>") {
		t.Errorf("tools: %s", got)
	}
	// a 2.1.197 file: no reminder, no note
	l = &compactLayout{scanned: true}
	if got := l.SummaryText(c); got != SummaryHead+"S"+fmt.Sprintf(summaryTail, "p") {
		t.Errorf("2.1.197 summary: %s", got)
	}
}

// memSource is a layout.Source over a file's bytes (Backward only).
type memSource []byte

func (m memSource) Path() string                     { return "mem.jsonl" }
func (m memSource) LineAt(off int64) ([]byte, error) { panic("not used") }
func (m memSource) Forward(context.Context, int64, func(*jsonl.Line) error) error {
	panic("not used")
}
func (m memSource) Backward(_ context.Context, fn func(off int64, raw []byte) (bool, error)) error {
	lines := bytes.SplitAfter(m, []byte("\n"))
	off := int64(len(m))
	for i := len(lines) - 1; i >= 0; i-- {
		off -= int64(len(lines[i]))
		if len(lines[i]) == 0 {
			continue
		}
		if stop, err := fn(off, bytes.TrimSuffix(lines[i], []byte("\n"))); stop || err != nil {
			return err
		}
	}
	return nil
}

// toolName is the regexp it replaces, byte for byte.
func TestToolNameIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,256}$`)
	cases := []string{"", "Read", "mcp__srv__tool", "a.b:c-d_e", "with space", "Bash\n", "\nBash", "é", "a/b", "x\x00",
		strings.Repeat("a", 256), strings.Repeat("a", 257), strings.Repeat("é", 100)}
	for c := byte(0); c < 255; c++ {
		cases = append(cases, string([]byte{c}), "T"+string([]byte{c})+"z")
	}
	for _, s := range cases {
		if got, want := toolName(s), re.MatchString(s); got != want {
			t.Errorf("toolName(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}
