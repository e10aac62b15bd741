package repair_test

import (
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// A second prompt that hangs from the tool result of a call the file no
// longer holds (compaction or a cut took the call away).
const (
	cUser2 = `{"parentUuid":"r1","isSidechain":false,"promptId":"p2","type":"user","message":{"role":"user","content":"next"},"uuid":"u2","timestamp":"2026-11-22T02:59:00.000Z","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s1","version":"2.1.197","gitBranch":"main"}`
	cUser3 = `{"parentUuid":"gone","isSidechain":false,"promptId":"p3","type":"user","message":{"role":"user","content":"more"},"uuid":"u3","timestamp":"2026-11-22T03:01:00.000Z","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s1","version":"2.1.197","gitBranch":"main"}`
)

// TestClaudeOrphanResult: a record holding only a result whose call is not
// in the file leaves it, and the prompt that hung from it hangs from its
// parent instead: every other byte stays.
func TestClaudeOrphanResult(t *testing.T) {
	in := cUser + "\n" + cRes + "\n" + cUser2 + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "orphan_tool_result,broken_parent" {
		t.Fatalf("fixes %v", kinds)
	}
	want := cUser + "\n" + strings.Replace(cUser2, `"parentUuid":"r1"`, `"parentUuid":"u1"`, 1) + "\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again(t, session.Claude, out)
}

// TestClaudeOrphanAmongResults: of two results in one record, the one whose
// call is gone is removed; the record and the other result stay as written.
func TestClaudeOrphanAmongResults(t *testing.T) {
	two := strings.Replace(cRes, `"is_error":false}]`, `"is_error":false},{"tool_use_id":"toolu_9","type":"tool_result","content":"x","is_error":false}]`, 1)
	in := cUser + "\n" + cCall + "\n" + two + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "orphan_tool_result" {
		t.Fatalf("fixes %v", kinds)
	}
	if want := cUser + "\n" + cCall + "\n" + cRes + "\n"; out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again(t, session.Claude, out)
}

// TestClaudeBrokenParent: a parent that is not in the file (a garbled line
// left it) is replaced by the entry written before; a parent written after
// its child is left alone.
func TestClaudeBrokenParent(t *testing.T) {
	in := cUser + "\n" + cCall + "\n" + cRes + "\n" + cUser3 + "\n"
	kinds, out, p := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "broken_parent" {
		t.Fatalf("fixes %v", kinds)
	}
	if f := p.Fixes[0]; f.Line != 4 || !strings.Contains(f.Reason, "relinked to r1") {
		t.Errorf("fix %+v", f)
	}
	want := cUser + "\n" + cCall + "\n" + cRes + "\n" + strings.Replace(cUser3, `"parentUuid":"gone"`, `"parentUuid":"r1"`, 1) + "\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again(t, session.Claude, out)

	later := cUser + "\n" + cRes + "\n" + cCall + "\n" // result before its call and parent
	if kinds, out, _ := run(t, session.Claude, later); len(kinds) != 0 || out != later {
		t.Errorf("out of order but whole: fixes %v", kinds)
	}
}

// TestClawdcodeTree: clawdcode's tool_result line whose tool_use is gone
// leaves the file; its child is relinked to its parent.
func TestClawdcodeTree(t *testing.T) {
	const (
		u  = `{"uuid":"a","parentUuid":null,"sessionId":"S","timestamp":"2026-03-02T09:15:04.512Z","type":"user","cwd":"/w","version":"0.1.0","message":{"role":"user","content":"hi"}}`
		r  = `{"uuid":"b","parentUuid":"a","sessionId":"S","timestamp":"2026-03-02T09:15:05.512Z","type":"tool_result","cwd":"/w","version":"0.1.0","toolResult":{"id":"t1","output":"x"}}`
		as = `{"uuid":"c","parentUuid":"b","sessionId":"S","timestamp":"2026-03-02T09:15:06.512Z","type":"assistant","cwd":"/w","version":"0.1.0","message":{"role":"assistant","content":"done"}}`
	)
	kinds, out, _ := run(t, session.Clawdcode, u+"\n"+r+"\n"+as+"\n")
	if strings.Join(kinds, ",") != "orphan_tool_result,broken_parent" {
		t.Fatalf("fixes %v", kinds)
	}
	if want := u + "\n" + strings.Replace(as, `"parentUuid":"b"`, `"parentUuid":"a"`, 1) + "\n"; out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again(t, session.Clawdcode, out)
}

const (
	kSys   = `{"role": "_system_prompt", "content": "sys"}`
	kCk0   = `{"role": "_checkpoint", "id": 0}`
	kCk1   = `{"role": "_checkpoint", "id": 1}`
	kUser  = `{"role":"user","content":"fix it"}`
	kCall  = `{"role":"assistant","content":[],"tool_calls":[{"type":"function","id":"tool_A","function":{"name":"Shell","arguments":"{\"command\": \"ls\"}"}},{"type":"function","id":"tool_B","function":{"name":"Shell","arguments":"{\"command\": \"pwd\"}"}}]}`
	kResA  = `{"role":"tool","content":"<system>Tool output is empty.</system>","tool_call_id":"tool_A"}`
	kUsage = `{"role": "_usage", "token_count": 120}`
	kAns   = `{"role":"assistant","content":"done"}`
	kMark  = `{"role":"user","content":"<system>CHECKPOINT 0</system>"}`
)

// TestKimiCheckpointSequence: kimi-cli numbers checkpoints 0, 1, 2… in file
// order and finds them by id; a repeated id is renumbered, and so is the
// CHECKPOINT message written with it.
func TestKimiCheckpointSequence(t *testing.T) {
	in := kSys + "\n" + kCk0 + "\n" + kUser + "\n" + kAns + "\n" + kCk0 + "\n" + kMark + "\n" + kUser + "\n"
	kinds, out, _ := run(t, session.Kimi, in)
	if strings.Join(kinds, ",") != "checkpoint_sequence,checkpoint_sequence" {
		t.Fatalf("fixes %v", kinds)
	}
	want := kSys + "\n" + kCk0 + "\n" + kUser + "\n" + kAns + "\n" + kCk1 + "\n" + `{"role":"user","content":"<system>CHECKPOINT 1</system>"}` + "\n" + kUser + "\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again(t, session.Kimi, out)
}

// TestKimiDanglingCall: a call without its tool message before the next
// message is answered right after the results that were written (and the
// _usage line); one still open at the end is answered at the end.
func TestKimiDanglingCall(t *testing.T) {
	ans := func(id string) string {
		return `{"role":"tool","content":"<system>ERROR: Interrupted: the session stopped before this tool call finished, and no result was saved.</system>","tool_call_id":"` + id + `"}`
	}
	in := kCk0 + "\n" + kUser + "\n" + kCall + "\n" + kUsage + "\n" + kResA + "\n" + kCk1 + "\n" + kUser + "\n" + kCall + "\n"
	kinds, out, _ := run(t, session.Kimi, in)
	if strings.Join(kinds, ",") != "dangling_tool_call,dangling_tool_call" {
		t.Fatalf("fixes %v", kinds)
	}
	want := kCk0 + "\n" + kUser + "\n" + kCall + "\n" + kUsage + "\n" + kResA + "\n" + ans("tool_B") + "\n" + kCk1 + "\n" + kUser + "\n" + kCall + "\n" +
		ans("tool_A") + "\n" + ans("tool_B") + "\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	again(t, session.Kimi, out)
}

// TestClaudeParallelResultsLate: parallel calls whose results come after
// an attachment (seen in a real 2.x file): the conversation went on from
// the calls before their results were written, but every call is answered
// in the end. Nothing to repair.
func TestClaudeParallelResultsLate(t *testing.T) {
	a2 := strings.NewReplacer(`"parentUuid":"u1"`, `"parentUuid":"a1"`, `"toolu_1"`, `"toolu_2"`, `"uuid":"a1"`, `"uuid":"a2"`).Replace(cCall)
	r2 := strings.NewReplacer(`"parentUuid":"a1"`, `"parentUuid":"a2"`, `"toolu_1"`, `"toolu_2"`, `"uuid":"r1"`, `"uuid":"r2"`).Replace(cRes)
	att := `{"parentUuid":"r2","isSidechain":false,"attachment":{"type":"todo_reminder"},"type":"attachment","uuid":"at1","timestamp":"2026-11-22T02:58:33.000Z","sessionId":"s1"}`
	in := cUser + "\n" + cCall + "\n" + a2 + "\n" + r2 + "\n" + att + "\n" + cRes + "\n"
	if kinds, out, _ := run(t, session.Claude, in); len(kinds) != 0 || out != in {
		t.Errorf("fixes %v", kinds)
	}
	// without the late result, the call is answered where the conversation
	// went on from it: before the attachment
	in = cUser + "\n" + cCall + "\n" + a2 + "\n" + r2 + "\n" + att + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "dangling_tool_call,broken_parent" {
		t.Fatalf("fixes %v", kinds)
	}
	// the answer goes on from the tip the attachment went on from (r2), so
	// the chain keeps every line
	if lines := strings.Split(out, "\n"); len(lines) != 7 || !strings.Contains(lines[4], `"tool_use_id":"toolu_1"`) ||
		!strings.HasPrefix(lines[4], `{"parentUuid":"r2",`) {
		t.Errorf("got\n%s", out)
	}
	again(t, session.Claude, out)
}

// TestClaude330DanglingCall: in a file Claude Code 2.1.330 wrote, the
// answer is the record 2.1.330 itself writes on resume for a call the
// session ended during (its key order, its text, toolUseResult and
// toolDenialKind), as the e2e harness saw it.
func TestClaude330DanglingCall(t *testing.T) {
	v330 := func(s string) string { return strings.Replace(s, `"version":"2.1.197"`, `"version":"2.1.330"`, 1) }
	in := v330(cUser) + "\n" + v330(cCall) + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "dangling_tool_call" {
		t.Fatalf("fixes %v", kinds)
	}
	added := strings.TrimSuffix(strings.TrimPrefix(out, in), "\n")
	text := "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]"
	want := `{"parentUuid":"a1","isSidechain":false,"promptId":"p1","type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"` + text +
		`","is_error":true,"tool_use_id":"toolu_1"}]},"uuid":"`
	if !strings.HasPrefix(added, want) {
		t.Fatalf("written record:\n%s\nwant it to start\n%s", added, want)
	}
	rest := added[len(want)+36:] // after the uuid
	wantRest := `","timestamp":"2026-11-25T01:02:03.000Z","toolUseResult":"` + text + `","toolDenialKind":"interrupted","sourceToolAssistantUUID":"a1","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s1","version":"2.1.330","gitBranch":"main"}`
	if rest != wantRest {
		t.Errorf("written record ends\n%s\nwant\n%s", rest, wantRest)
	}
	again(t, session.Claude, out)
}

// TestClaudeSubagentTranscriptDanglingCall: in a transcript of sidechain
// entries only (a subagent's own file) the sidechain is the chain: a call
// left open at its end is answered there, as a sidechain record with the
// subagent's agentId.
func TestClaudeSubagentTranscriptDanglingCall(t *testing.T) {
	side := func(s string) string {
		return strings.Replace(s, `"isSidechain":false,`, `"isSidechain":true,"agentId":"a1b2",`, 1)
	}
	in := side(cUser) + "\n" + side(cCall) + "\n"
	kinds, out, _ := run(t, session.Claude, in)
	if strings.Join(kinds, ",") != "dangling_tool_call" {
		t.Fatalf("fixes %v", kinds)
	}
	added := strings.TrimPrefix(out, in)
	if !strings.HasPrefix(added, `{"parentUuid":"a1","isSidechain":true,"promptId":"p1","agentId":"a1b2","type":"user",`) {
		t.Errorf("written record: %s", added)
	}
	again(t, session.Claude, out)
}
