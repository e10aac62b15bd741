package repair_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

var now = time.Date(2026, 11, 25, 1, 2, 3, 0, time.UTC)

// run plans and writes the repair of in; it returns the kinds of the fixes,
// the new file, and the plan.
func run(t *testing.T, agent session.Agent, in string) ([]string, string, *repair.Plan) {
	t.Helper()
	p, err := repair.ScanReader(context.Background(), strings.NewReader(in), "f.jsonl", agent, now)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range p.Fixes {
		kinds = append(kinds, f.Kind)
	}
	var out bytes.Buffer
	if err := p.Write(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	return kinds, out.String(), p
}

// again checks that a repaired file needs no more repair.
func again(t *testing.T, agent session.Agent, out string) {
	t.Helper()
	p, err := repair.ScanReader(context.Background(), strings.NewReader(out), "f.jsonl", agent, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Fixes) != 0 {
		t.Errorf("a second repair finds %d fixes: %+v", len(p.Fixes), p.Fixes)
	}
}

const (
	cUser  = `{"parentUuid":null,"isSidechain":false,"promptId":"p1","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-11-22T02:58:30.000Z","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s1","version":"2.1.197","gitBranch":"main"}`
	cCall  = `{"parentUuid":"u1","isSidechain":false,"message":{"model":"claude-x","id":"msg_1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}},"requestId":"req_1","type":"assistant","uuid":"a1","timestamp":"2026-11-22T02:58:31.000Z","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s1","version":"2.1.197","gitBranch":"main"}`
	cRes   = `{"parentUuid":"a1","isSidechain":false,"promptId":"p1","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"a b","is_error":false}]},"uuid":"r1","timestamp":"2026-11-22T02:58:32.000Z","sourceToolAssistantUUID":"a1","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s1","version":"2.1.197","gitBranch":"main"}`
	cQueue = `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-22T03:00:00.000Z","sessionId":"s1"}`
)

func TestClean(t *testing.T) {
	in := cUser + "\n" + cCall + "\n" + cRes + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if len(kinds) != 0 || out != in {
		t.Errorf("a clean file: fixes %v, changed: %v", kinds, out != in)
	}
}

func TestTornLastLine(t *testing.T) {
	in := cUser + "\n" + cCall + "\n" + cRes + "\n" + cRes[:70]
	kinds, out, p := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "torn_line" {
		t.Fatalf("fixes %v", kinds)
	}
	if want := cUser + "\n" + cCall + "\n" + cRes + "\n"; out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if f := p.Fixes[0]; f.Line != 4 || f.RemovedBytes != 70 {
		t.Errorf("fix at line %d removing %d bytes, want line 4, 70 bytes", f.Line, f.RemovedBytes)
	}
	again(t, session.Claude, out)
}

// TestGluedRecord: Claude Code appends its next record onto a torn line;
// the complete record stays, the torn head leaves.
func TestGluedRecord(t *testing.T) {
	in := cUser + "\n" + cCall[:90] + cQueue + "\n" + cRes + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	// the call was in the torn part: its result answers nothing now
	if strings.Join(kinds, ",") != "glued_record,orphan_tool_result" {
		t.Fatalf("fixes %v", kinds)
	}
	if want := cUser + "\n" + cQueue + "\n"; out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again(t, session.Claude, out)
}

func TestCorruptMiddleLine(t *testing.T) {
	in := cUser + "\n" + "\x00\x00garbage\n" + "[1,2]\n" + cCall + "\n" + cRes + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "corrupt_line,corrupt_line" {
		t.Fatalf("fixes %v", kinds)
	}
	if want := cUser + "\n" + cCall + "\n" + cRes + "\n"; out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestDuplicateLine: the same uuid written twice with the same bytes is
// one record; the same uuid with other bytes is left for the client.
func TestDuplicateLine(t *testing.T) {
	in := cUser + "\n" + cCall + "\n" + cCall + "\n" + cRes + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "duplicate_line" {
		t.Fatalf("fixes %v", kinds)
	}
	if want := cUser + "\n" + cCall + "\n" + cRes + "\n"; out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	changed := strings.Replace(cCall, `"ls"`, `"ls -l"`, 1)
	if kinds, _, _ := run(t, session.Claude, cUser+"\n"+cCall+"\n"+changed+"\n"+cRes+"\n"); len(kinds) != 0 {
		t.Errorf("same uuid, other bytes: fixes %v, want none", kinds)
	}
	// Codex: two equal token_count lines are normal
	tc := `{"timestamp":"2026-11-22T03:05:24.390Z","type":"event_msg","payload":{"type":"token_count","info":null}}`
	if kinds, _, _ := run(t, session.Codex, tc+"\n"+tc+"\n"); len(kinds) != 0 {
		t.Errorf("codex token_count twice: fixes %v, want none", kinds)
	}
}

// TestClaudeDanglingCall: a file that ends on an unanswered tool call gets
// the is_error result Claude Code writes for an interrupted tool use,
// chained after the leaf.
func TestClaudeDanglingCall(t *testing.T) {
	in := cUser + "\n" + cCall + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "dangling_tool_call" {
		t.Fatalf("fixes %v", kinds)
	}
	if !strings.HasPrefix(out, in) {
		t.Fatalf("the file's lines changed:\n%s", out)
	}
	added := strings.TrimSuffix(strings.TrimPrefix(out, in), "\n")
	var v struct {
		ParentUUID string `json:"parentUuid"`
		Type       string `json:"type"`
		PromptID   string `json:"promptId"`
		UUID       string `json:"uuid"`
		Timestamp  string `json:"timestamp"`
		Source     string `json:"sourceToolAssistantUUID"`
		SessionID  string `json:"sessionId"`
		Message    struct {
			Role    string `json:"role"`
			Content []struct {
				ToolUseID string `json:"tool_use_id"`
				Type      string `json:"type"`
				Content   string `json:"content"`
				IsError   bool   `json:"is_error"`
			} `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(added), &v); err != nil {
		t.Fatalf("%v: %s", err, added)
	}
	c := v.Message.Content
	if v.ParentUUID != "a1" || v.Type != "user" || v.PromptID != "p1" || v.UUID == "" || v.Source != "a1" || v.SessionID != "s1" ||
		v.Timestamp != "2026-11-25T01:02:03.000Z" || len(c) != 1 || c[0].ToolUseID != "toolu_1" || c[0].Type != "tool_result" ||
		c[0].Content != "[Request interrupted by user for tool use]" || !c[0].IsError {
		t.Errorf("written record: %s", added)
	}
	again(t, session.Claude, out)
	// answered, or followed by a prompt on another branch, from before the
	// call's turn (a rewind): nothing to do
	root := strings.Replace(cUser, `"u1"`, `"u0"`, 1)
	branch := root + "\n" + strings.Replace(cUser, `null`, `"u0"`, 1) + "\n" + cCall + "\n" +
		strings.Replace(strings.Replace(cUser, `"u1"`, `"u2"`, 1), `null`, `"u0"`, 1) + "\n"
	for _, in := range []string{in + cRes + "\n", branch} {
		if kinds, _, _ := run(t, session.Claude, in); len(kinds) != 0 {
			t.Errorf("fixes %v, want none", kinds)
		}
	}
}

// TestClaudeDanglingCallMidFile: the client was resumed after a crash
// during the tool and went on from the call (it drops the call when it
// loads the chain). The answer is written where the client would have
// written it, before the next prompt, which is relinked to it: the call
// stays in the history, answered.
func TestClaudeDanglingCallMidFile(t *testing.T) {
	next := strings.Replace(strings.Replace(cUser, `"u1"`, `"u2"`, 1), `"parentUuid":null`, `"parentUuid":"a1"`, 1)
	in := cUser + "\n" + cCall + "\n" + next + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "dangling_tool_call,broken_parent" {
		t.Fatalf("fixes %v", kinds)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || lines[0] != cUser || lines[1] != cCall {
		t.Fatalf("got\n%s", out)
	}
	var ans struct {
		ParentUUID string `json:"parentUuid"`
		UUID       string `json:"uuid"`
		Timestamp  string `json:"timestamp"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &ans); err != nil || ans.ParentUUID != "a1" || !strings.Contains(lines[2], `"tool_use_id":"toolu_1"`) ||
		ans.Timestamp != "2026-11-22T02:58:29.999Z" {
		t.Fatalf("answer %s (%v)", lines[2], err)
	}
	if want := strings.Replace(next, `"parentUuid":"a1"`, `"parentUuid":"`+ans.UUID+`"`, 1); lines[3] != want {
		t.Errorf("next prompt\n%s\nwant\n%s", lines[3], want)
	}
	again(t, session.Claude, out)
}

const (
	xMeta = `{"timestamp":"2026-11-22T03:05:20.000Z","ordinal":0,"type":"session_meta","payload":{"id":"01a20137-32a6-77c1-b56b-38215cfaf5be","cwd":"/w"}}`
	xUser = `{"timestamp":"2026-11-22T03:05:21.000Z","ordinal":1,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list"}]}}`
	xCall = `{"timestamp":"2026-11-22T03:05:22.000Z","ordinal":2,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_9"}}`
	xTok  = `{"timestamp":"2026-11-22T03:05:23.000Z","ordinal":3,"type":"event_msg","payload":{"type":"token_count","info":null}}`
	xMsg  = `{"timestamp":"2026-11-22T03:05:24.000Z","ordinal":4,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`
)

// TestCodexDanglingCall: a rollout that ends during a call gets the
// "aborted" output Codex gives such a call, with the next ordinal.
func TestCodexDanglingCall(t *testing.T) {
	in := xMeta + "\n" + xUser + "\n" + xCall + "\n" + xTok + "\n"
	kinds, out, _ := run(t, session.Codex, in)
	if strings.Join(kinds, ",") != "dangling_tool_call" {
		t.Fatalf("fixes %v", kinds)
	}
	added := strings.TrimPrefix(out, in)
	var v struct {
		Timestamp string `json:"timestamp"`
		Ordinal   int    `json:"ordinal"`
		Type      string `json:"type"`
		Payload   struct {
			Type   string `json:"type"`
			ID     string `json:"id"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		} `json:"payload"`
	}
	if err := json.Unmarshal([]byte(added), &v); err != nil {
		t.Fatalf("%v: %q", err, added)
	}
	if v.Ordinal != 4 || v.Type != "response_item" || v.Payload.Type != "function_call_output" || v.Payload.CallID != "call_9" ||
		v.Payload.Output != "aborted" || !strings.HasPrefix(v.Payload.ID, "fco_") || v.Timestamp != "2026-11-25T01:02:03.000Z" ||
		!strings.HasPrefix(added, `{"timestamp":"2026-11-25T01:02:03.000Z","ordinal":4,"type":"response_item","payload":{"type":"function_call_output","id":"fco_`) {
		t.Errorf("written record: %s", added)
	}
	again(t, session.Codex, out)

	// followed by a message (Codex was resumed and went on): the output
	// goes right before it, with the ordinal of the line before it (Codex
	// reuses ordinals without complaint) and the message's timestamp
	kinds, out, _ = run(t, session.Codex, in+xMsg+"\n")
	if strings.Join(kinds, ",") != "dangling_tool_call" {
		t.Fatalf("call followed by a message: fixes %v", kinds)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 || lines[3] != xTok || lines[5] != xMsg ||
		!strings.HasPrefix(lines[4], `{"timestamp":"2026-11-22T03:05:24.000Z","ordinal":3,"type":"response_item","payload":{"type":"function_call_output","id":"fco_`) ||
		!strings.HasSuffix(lines[4], `"call_id":"call_9","output":"aborted"}}`) {
		t.Errorf("got\n%s", out)
	}
	again(t, session.Codex, out)
}

// TestInvalidUTF8: Kimi's and Claude's readers replace bytes that are not
// UTF-8; the line is written as they read it. Codex cannot read it.
func TestInvalidUTF8(t *testing.T) {
	kimi := `{"role":"user","content":"caf` + "\xe9" + `"}`
	kinds, out, _ := run(t, session.Kimi, kimi+"\n")
	if strings.Join(kinds, ",") != "invalid_utf8" || out != `{"role":"user","content":"caf`+"\ufffd"+`"}`+"\n" {
		t.Errorf("kimi: fixes %v, out %q", kinds, out)
	}
	codex := xMeta + "\n" + `{"timestamp":"2026-11-22T03:05:21.000Z","type":"event_msg","payload":{"type":"agent_message","message":"caf` + "\xe9" + `"}}` + "\n"
	kinds, out, _ = run(t, session.Codex, codex)
	if strings.Join(kinds, ",") != "corrupt_line" || out != xMeta+"\n" {
		t.Errorf("codex: fixes %v, out %q", kinds, out)
	}
}
