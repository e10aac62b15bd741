package e2e

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/fakemodel"
)

// claudeABC creates a session with the three text-only turns A, B and C and
// returns its id, its file, and the file's size after turn B.
func claudeABC(t *testing.T, h *Harness) (id, path string, afterB int64) {
	t.Helper()
	a := h.ClaudePrompt("NOTOOL turn A")
	if a.Result != "ACK: NOTOOL turn A" {
		t.Errorf("turn A answered %q", a.Result)
	}
	id = a.SessionID
	if b := h.ClaudeResume(id, "NOTOOL turn B"); b.Result != "ACK: NOTOOL turn B" {
		t.Errorf("turn B answered %q", b.Result)
	}
	path = h.ClaudeSessionFile(id)
	afterB = h.Size(path)
	mark := h.Mark()
	if c := h.ClaudeResume(id, "NOTOOL turn C"); c.Result != "ACK: NOTOOL turn C" {
		t.Errorf("turn C answered %q", c.Result)
	}
	req := h.FirstModelCallSince(mark)
	if got := req.Header("X-Claude-Code-Session-Id"); got != id {
		t.Errorf("X-Claude-Code-Session-Id = %q, want %q", got, id)
	}
	want := []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"}
	if got := h.UserTexts(req); !reflect.DeepEqual(got, want) {
		t.Errorf("turn C request user texts:\n got %q\nwant %q", got, want)
	}
	return id, path, afterB
}

func TestClaudeResumeSendsWholeHistory(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, afterB := claudeABC(t, h)
	content := h.ReadFile(path)
	if !bytes.Contains(content[afterB:], []byte("ACK: NOTOOL turn C")) {
		t.Errorf("turn C's answer is not after turn B's lines")
	}
	// --resume appends to the same file.
	if n := bytes.Count(content, []byte(`"sessionId":"`+id+`"`)); n < 6 {
		t.Errorf("only %d lines carry the session id", n)
	}
}

// TestClaudeToolRoundTrip: the default reply is a Bash tool call; Claude
// runs it and sends the result back in a second request.
func TestClaudeToolRoundTrip(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	mark := h.Mark()
	r := h.ClaudePrompt("Please list the files here")
	if !strings.HasPrefix(r.Result, "Done. The tool returned: ") || !strings.Contains(r.Result, "hello.txt") {
		t.Errorf("result %q", r.Result)
	}
	calls := h.ModelCallsSince(mark)
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2 (tool call, then tool result)", len(calls))
	}
	if calls[0].Reply.Tool == nil || calls[0].Reply.Tool.Name != "Bash" {
		t.Fatalf("first reply %+v", calls[0].Reply)
	}
	toolID := calls[0].Reply.Tool.ID
	if calls[1].Reply.Reason != fakemodel.ReasonToolResult {
		t.Errorf("second request answered as %q", calls[1].Reply.Reason)
	}
	// The second request carries the tool_use and its tool_result.
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(calls[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var sawUse, sawResult bool
	for _, m := range body.Messages {
		var blocks []map[string]any
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch {
			case b["type"] == "tool_use" && b["id"] == toolID && m.Role == "assistant":
				sawUse = true
			case b["type"] == "tool_result" && b["tool_use_id"] == toolID && m.Role == "user":
				sawResult = strings.Contains(string(mustJSON(t, b["content"])), "hello.txt")
			}
		}
	}
	if !sawUse || !sawResult {
		t.Errorf("second request: tool_use %v, tool_result with the ls output %v", sawUse, sawResult)
	}
	if got, want := h.UserTexts(calls[1]), []string{"Please list the files here"}; !reflect.DeepEqual(got, want) {
		t.Errorf("user texts %q, want %q (tool results are not user texts)", got, want)
	}
	file := string(h.ReadFile(h.ClaudeSessionFile(r.SessionID)))
	for _, s := range []string{`"type":"tool_use","id":"` + toolID + `","name":"Bash"`, `"tool_use_id":"` + toolID + `"`} {
		if !strings.Contains(file, s) {
			t.Errorf("session file lacks %s", s)
		}
	}
}

// TestClaudeRevertByTruncation is the mechanism `sessctl revert` will use
// for Claude Code: cut the file just after the last line of the turn to
// keep. The resumed session no longer sends the cut turn.
func TestClaudeRevertByTruncation(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, afterB := claudeABC(t, h)
	h.Truncate(path, afterB)
	kept := h.ReadFile(path)

	mark := h.Mark()
	d := h.ClaudeResume(id, "NOTOOL turn D")
	if d.Result != "ACK: NOTOOL turn D" {
		t.Errorf("turn D answered %q", d.Result)
	}
	want := []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"}
	if got := h.UserTexts(h.FirstModelCallSince(mark)); !reflect.DeepEqual(got, want) {
		t.Errorf("turn D request user texts:\n got %q\nwant %q", got, want)
	}
	h.AssertAppendOnly(path, kept)
	if bytes.Contains(h.ReadFile(path), []byte("turn C")) {
		t.Errorf("turn C came back into the file")
	}
	claudeResumeE(t, h, id)
}

// claudeResumeE checks that a revert sticks: the next resume continues
// from turn D.
func claudeResumeE(t *testing.T, h *Harness, id string) {
	t.Helper()
	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn E")
	want := []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E"}
	if got := h.UserTexts(h.FirstModelCallSince(mark)); !reflect.DeepEqual(got, want) {
		t.Errorf("turn E request user texts:\n got %q\nwant %q", got, want)
	}
}

// claudeLastAssistant returns the last assistant record before byte offset
// end, raw and decoded.
func claudeLastAssistant(t *testing.T, content []byte, end int64) (string, map[string]any) {
	t.Helper()
	var raw string
	var last map[string]any
	for _, l := range bytes.Split(bytes.TrimSuffix(content[:end], []byte("\n")), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(l, &rec); err != nil {
			t.Fatalf("unparseable line: %v: %s", err, l)
		}
		if rec["type"] == "assistant" {
			raw, last = string(l), rec
		}
	}
	if last == nil {
		t.Fatal("no assistant record")
	}
	return raw, last
}

// claudeCopyRecord returns raw with its uuid and timestamp replaced, the
// key order kept.
func claudeCopyRecord(t *testing.T, raw string, rec map[string]any, uuid string) string {
	t.Helper()
	oldUUID := `"uuid":"` + rec["uuid"].(string) + `"`
	oldTS := `"timestamp":"` + rec["timestamp"].(string) + `"`
	if strings.Count(raw, oldUUID) != 1 || strings.Count(raw, oldTS) != 1 {
		t.Fatalf("cannot rewrite uuid and timestamp of %s", raw)
	}
	out := strings.Replace(raw, oldUUID, `"uuid":"`+uuid+`"`, 1)
	return strings.Replace(out, oldTS, `"timestamp":"`+time.Now().UTC().Format("2006-01-02T15:04:05.000Z")+`"`, 1)
}

// TestClaudeRevertByBranch is the append-only alternative: Claude Code
// resumes from the leaf named by the newest last-prompt record, so
// appending a copy of turn B's last assistant record (new uuid, same
// parent) and a last-prompt pointing at the copy makes B's chain the live
// one. Turn C stays in the file as a dead branch.
func TestClaudeRevertByBranch(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, afterB := claudeABC(t, h)
	content := h.ReadFile(path)
	raw, rec := claudeLastAssistant(t, content, afterB)
	orig := rec["uuid"].(string)
	const copyUUID = "5e55c7a1-0000-4000-8000-000000000001"
	h.AppendLine(path, claudeCopyRecord(t, raw, rec, copyUUID))
	h.AppendLine(path, `{"type":"last-prompt","leafUuid":"`+copyUUID+`","sessionId":"`+id+`"}`)
	kept := h.ReadFile(path)

	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn D")
	want := []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"}
	if got := h.UserTexts(h.FirstModelCallSince(mark)); !reflect.DeepEqual(got, want) {
		t.Errorf("turn D request user texts:\n got %q\nwant %q", got, want)
	}
	h.AssertAppendOnly(path, kept)
	// 2.1.197 chained turn D to the original of the copied record (same
	// message.id), not to the copy; either is on turn B's chain.
	added := h.ReadFile(path)[len(kept):]
	if !bytes.Contains(added, []byte(`"parentUuid":"`+orig+`"`)) && !bytes.Contains(added, []byte(`"parentUuid":"`+copyUUID+`"`)) {
		t.Errorf("turn D is not chained to turn B's last record")
	}
	claudeResumeE(t, h, id)
}

// TestClaudeLeafIsNotChosenByPosition documents two appends that do NOT
// revert: a last-prompt naming turn B's assistant record (it has a child,
// turn C, so it is not a leaf), and a copied leaf without a last-prompt
// (the newest last-prompt still names turn C's leaf). Claude still sends
// turn C. If this test starts failing, Claude Code changed how it picks the
// leaf: re-check TestClaudeRevertByBranch and docs/e2e.md.
func TestClaudeLeafIsNotChosenByPosition(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, id, raw string, rec map[string]any) []string{
		"last-prompt at a non-leaf": func(t *testing.T, id, raw string, rec map[string]any) []string {
			return []string{`{"type":"last-prompt","leafUuid":"` + rec["uuid"].(string) + `","sessionId":"` + id + `"}`}
		},
		"copied leaf without last-prompt": func(t *testing.T, id, raw string, rec map[string]any) []string {
			return []string{claudeCopyRecord(t, raw, rec, "5e55c7a1-0000-4000-8000-000000000002")}
		},
	}
	for name, lines := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := NewHarness(t)
			id, path, afterB := claudeABC(t, h)
			raw, rec := claudeLastAssistant(t, h.ReadFile(path), afterB)
			for _, l := range lines(t, id, raw, rec) {
				h.AppendLine(path, l)
			}
			mark := h.Mark()
			h.ClaudeResume(id, "NOTOOL turn D")
			want := []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C", "NOTOOL turn D"}
			if got := h.UserTexts(h.FirstModelCallSince(mark)); !reflect.DeepEqual(got, want) {
				t.Errorf("turn D request user texts:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
