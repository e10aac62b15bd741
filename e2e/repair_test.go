package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/agent/claude"
)

// Damage as clients leave it, mended by `sessctl repair`, resumed by the
// real client. Every resume runs the oracle (ClaudeResume, CodexResume):
// the model must receive exactly what `sessctl show` predicts of the
// repaired file. docs/repair.md says what each repair does.

// cutAfter truncates path just after the last line holding marker (the
// client killed right after it wrote that line), returning the bytes kept.
func cutAfter(t *testing.T, h *Harness, path, marker string) []byte {
	t.Helper()
	b := h.ReadFile(path)
	i := bytes.LastIndex(b, []byte(marker))
	if i < 0 {
		t.Fatalf("no %s in %s", marker, path)
	}
	end := i + bytes.IndexByte(b[i:], '\n') + 1
	h.Truncate(path, int64(end))
	return b[:end]
}

// tear cuts path inside its last line (a crash mid-write): the last line
// keeps n bytes and has no newline.
func tear(t *testing.T, path string, n int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
	if start+n >= len(b)-1 {
		t.Fatalf("last line of %s is shorter than %d bytes", path, n)
	}
	if err := os.Truncate(path, int64(start+n)); err != nil {
		t.Fatal(err)
	}
}

// repairClean runs `sessctl repair --force` (the session was written
// seconds ago) and then `sessctl check`, which must pass.
func repairClean(t *testing.T, h *Harness, path string, wantKinds ...string) string {
	t.Helper()
	out := h.Sessctl("repair", "--force", path)
	t.Logf("sessctl repair:\n%s", out)
	for _, k := range wantKinds {
		if !strings.Contains(out, ": "+k+": ") {
			t.Errorf("repair did not report %s:\n%s", k, out)
		}
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Errorf("no rotation holds the original: %v", err)
	}
	if out, err := h.SessctlRun("check", path); err != nil {
		t.Errorf("check fails after repair: %v\n%s", err, out)
	}
	if again := h.Sessctl("repair", "--force", path); !strings.Contains(again, "nothing to repair") {
		t.Errorf("a second repair finds more:\n%s", again)
	}
	return out
}

// TestRepairClaudeCutAfterToolCall: Claude Code is killed after it wrote a
// tool call and before the result. Repair answers the call as Claude Code
// answers a tool use it interrupted; the resumed model sees the call and
// its answer, and every earlier turn.
func TestRepairClaudeCutAfterToolCall(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	a := h.ClaudePrompt("NOTOOL turn A")
	id := a.SessionID
	h.ClaudeResume(id, "Please list the files here")
	path := h.ClaudeSessionFile(id)
	cutAfter(t, h, path, `"type":"tool_use"`)
	repairClean(t, h, path, "dangling_tool_call")

	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn C")
	req := h.FirstModelCallSince(mark)
	hasTexts(t, "turn C request", h.UserTexts(req), "NOTOOL turn A", "Please list the files here", "NOTOOL turn C")
	if !h.Claude330OrLater() {
		// the chain ends with a tool result: 2.1.197 adds "Continue from
		// where you left off." before the new prompt (2.1.330 writes an
		// assistant "No response requested." instead; the oracle checked
		// either)
		hasTexts(t, "turn C request", h.UserTexts(req), "Continue from where you left off.")
	}
	if !bytes.Contains(req.Body, []byte(interruptedText(h))) || !bytes.Contains(req.Body, []byte(`"tool_use"`)) {
		t.Errorf("the resumed request does not carry the call with its interrupted answer")
	}
}

// TestRepairClaudeTornThenGlued: a crash tears the last line; the next
// resume appends its first record onto the torn one (Claude Code 2.1.197
// does not look at the last byte; 2.1.330 starts a new line). Repair keeps
// the glued record and drops the torn head (or drops the torn line); the
// next resume sends every intact turn.
func TestRepairClaudeTornThenGlued(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := claudeABC(t, h)
	tear(t, path, 60)
	h.ClaudeResume(id, "NOTOOL turn D") // 2.1.197 appends onto the torn line
	// 2.1.330 ends the torn line with a newline before it appends: the torn
	// record is then a corrupt line of its own
	kind := "glued_record"
	if h.Claude330OrLater() {
		kind = "corrupt_line"
	}
	repairClean(t, h, path, kind)

	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn E")
	got := h.UserTexts(h.FirstModelCallSince(mark))
	hasTexts(t, "turn E request", got, "NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E")
}

// TestRepairCodexCutAfterCall: Codex is killed after it wrote a function
// call. Repair answers it as Codex answers a call it aborted; the resumed
// turn carries the call, the "aborted" output and every earlier turn.
func TestRepairCodexCutAfterCall(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("NOTOOL turn A")
	h.CodexResume(id, "Please list the files here")
	path := h.CodexSessionFile(id)
	cutAfter(t, h, path, `"type":"function_call"`)
	repairClean(t, h, path, "dangling_tool_call")

	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn C")
	req := h.FirstModelCallSince(mark)
	wantTexts(t, "turn C request", h.UserTexts(req), []string{"NOTOOL turn A", "Please list the files here", "NOTOOL turn C"})
	if !bytes.Contains(req.Body, []byte(`"output":"aborted"`)) {
		t.Errorf("the resumed request does not carry the aborted output")
	}
}

// TestRepairCodexTorn: a torn last line (a crash mid-write) leaves the
// rollout; the resumed turn carries every intact turn.
func TestRepairCodexTorn(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("NOTOOL turn A")
	h.CodexResume(id, "NOTOOL turn B")
	path := h.CodexSessionFile(id)
	tear(t, path, 40)
	repairClean(t, h, path, "torn_line")

	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn C")
	got := h.UserTexts(h.FirstModelCallSince(mark))
	wantTexts(t, "turn C request", got, []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"})
}

// garble replaces the first byte of the last line holding marker with
// 'x': the line is no longer JSON (disk damage, a bad edit).
func garble(t *testing.T, h *Harness, path, marker string) {
	t.Helper()
	b := h.ReadFile(path)
	i := bytes.LastIndex(b, []byte(marker))
	if i < 0 {
		t.Fatalf("no %s in %s", marker, path)
	}
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	b[start] = 'x'
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRepairClaudeGarbledMiddle: turn B's reply is garbled. Repair drops
// it and relinks turn C's prompt, which hung from it, to the entry written
// before it; the resumed model sees A, B's prompt, C and the new turn.
func TestRepairClaudeGarbledMiddle(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := claudeABC(t, h)
	garble(t, h, path, `"ACK: NOTOOL turn B"`)
	repairClean(t, h, path, "corrupt_line", "broken_parent")

	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn D")
	got := h.UserTexts(h.FirstModelCallSince(mark))
	hasTexts(t, "turn D request", got, "NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C", "NOTOOL turn D")
}

// TestRepairClaudeOrphanResult: the assistant line with a tool call is
// lost (a cut that kept the result). Repair removes the result that
// answers nothing, and relinks what hung from it; the resumed request is
// one the API accepts (no tool_result without its tool_use) and carries
// every other turn.
func TestRepairClaudeOrphanResult(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	a := h.ClaudePrompt("NOTOOL turn A")
	id := a.SessionID
	h.ClaudeResume(id, "Please list the files here")
	h.ClaudeResume(id, "NOTOOL turn C")
	path := h.ClaudeSessionFile(id)
	b := h.ReadFile(path)
	i := bytes.Index(b, []byte(`"type":"tool_use"`))
	if i < 0 {
		t.Fatal("no tool_use line")
	}
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	end := i + bytes.IndexByte(b[i:], '\n') + 1
	if err := os.WriteFile(path, append(append([]byte{}, b[:start]...), b[end:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	repairClean(t, h, path, "orphan_tool_result")

	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn D")
	req := h.FirstModelCallSince(mark)
	if bytes.Contains(req.Body, []byte(`"tool_result"`)) {
		t.Errorf("the resumed request still carries a tool result")
	}
	got := h.UserTexts(req)
	hasTexts(t, "turn D request", got, "NOTOOL turn A", "Please list the files here", "NOTOOL turn C", "NOTOOL turn D")
}

// killDuring starts a client (bin, args) in its own process group and
// kills the group with SIGKILL as soon as file() holds marker: the client
// killed mid-turn, during a tool (SLOWTOOL makes the tool "sleep 60").
func killDuring(t *testing.T, h *Harness, bin string, args []string, file func() string, marker string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), h.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = h.Project
	cmd.Env = h.env
	killGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(h.Timeout)
	for {
		if p := file(); p != "" {
			if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(marker)) {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the client ended before it wrote %s: %v", marker, err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the client wrote no %s within %s", marker, h.Timeout)
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	t.Logf("e2e: killed %s during its tool", filepath.Base(bin))
}

// TestRepairClaudeKilledDuringTool: Claude Code is killed (SIGKILL) while
// its tool runs. Repair answers the call; the resume sends every turn with
// the call answered.
func TestRepairClaudeKilledDuringTool(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	path := h.ClaudeSessionFile(id)
	killDuring(t, h, h.claude, []string{"-p", "SLOWTOOL turn B", "--output-format", "json", "--resume", id,
		"--allowedTools", "Bash", "Read", "Agent"}, func() string { return path }, `sleep 60`)
	repairClean(t, h, path, "dangling_tool_call")

	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn C")
	req := h.FirstModelCallSince(mark)
	if !bytes.Contains(req.Body, []byte(interruptedText(h))) || !bytes.Contains(req.Body, []byte(`sleep 60`)) {
		t.Errorf("the resumed request does not carry the call with its interrupted answer")
	}
	got := h.UserTexts(req)
	hasTexts(t, "turn C request", got, "NOTOOL turn A", "SLOWTOOL turn B", "NOTOOL turn C")
}

// TestRepairCodexKilledDuringTool: the same for Codex: killed while its
// exec_command runs; repair answers "aborted"; the resume carries it.
func TestRepairCodexKilledDuringTool(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("NOTOOL turn A")
	path := h.CodexSessionFile(id)
	killDuring(t, h, h.codex, []string{"exec", "--skip-git-repo-check", "resume", id, "SLOWTOOL turn B"},
		func() string { return path }, `sleep 60`)
	out := h.Sessctl("repair", "--force", "--dry-run", path)
	t.Logf("sessctl repair --dry-run:\n%s", out)
	repairClean(t, h, path)

	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn C")
	req := h.FirstModelCallSince(mark)
	if !bytes.Contains(req.Body, []byte(`sleep 60`)) {
		t.Errorf("the resumed request does not carry the killed call")
	}
	wantTexts(t, "turn C request", h.UserTexts(req), []string{"NOTOOL turn A", "SLOWTOOL turn B", "NOTOOL turn C"})
}

// TestRepairClaudeKilledThenResumed: Claude Code is killed during its tool
// and resumed before any repair: 2.1.197 drops the unanswered call and goes
// on (2.1.330 answers it itself, in the file).
// Repair writes the answer where the client would have, before the next
// prompt, and relinks that prompt to it; the next resume sends the call,
// answered, between the turns.
func TestRepairClaudeKilledThenResumed(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	path := h.ClaudeSessionFile(id)
	killDuring(t, h, h.claude, []string{"-p", "SLOWTOOL turn B", "--output-format", "json", "--resume", id,
		"--allowedTools", "Bash", "Read", "Agent"}, func() string { return path }, `sleep 60`)
	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn C")
	if h.Claude330OrLater() {
		// 2.1.330 answers the call itself when it resumes, and writes that
		// answer into the file: nothing is left for repair, and the call
		// stays in the history, answered
		if !bytes.Contains(h.FirstModelCallSince(mark).Body, []byte(claude.InterruptedSessionEnd)) {
			t.Errorf("2.1.330 did not send the call with its own interrupted answer")
		}
		if out := h.Sessctl("repair", "--force", path); !strings.Contains(out, "nothing to repair") {
			t.Errorf("repair found something in a file 2.1.330 mended itself:\n%s", out)
		}
		if out, err := h.SessctlRun("check", path); err != nil {
			t.Errorf("check fails: %v\n%s", err, out)
		}
		return
	}
	if bytes.Contains(h.FirstModelCallSince(mark).Body, []byte("sleep 60")) {
		t.Fatalf("the client sent the unanswered call (it drops it): the premise of this test no longer holds")
	}
	out := repairClean(t, h, path, "dangling_tool_call")
	if !strings.Contains(out, "the conversation went on") {
		t.Errorf("the call was not answered in the middle:\n%s", out)
	}

	mark = h.Mark()
	h.ClaudeResume(id, "NOTOOL turn D")
	req := h.FirstModelCallSince(mark)
	if !bytes.Contains(req.Body, []byte(interruptedText(h))) || !bytes.Contains(req.Body, []byte(`sleep 60`)) {
		t.Errorf("the resumed request does not carry the call with its interrupted answer")
	}
	got := h.UserTexts(req)
	hasTexts(t, "turn D request", got, "NOTOOL turn A", "SLOWTOOL turn B", "NOTOOL turn C", "NOTOOL turn D")
}

// TestRepairCodexKilledThenResumed: Codex is killed during its tool and
// resumed before any repair: it sends the call with an "aborted" output of
// its own making, in every request, but never writes that output. Repair
// writes it where it belongs; the next resume sends the same history,
// now from the file.
func TestRepairCodexKilledThenResumed(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("NOTOOL turn A")
	path := h.CodexSessionFile(id)
	killDuring(t, h, h.codex, []string{"exec", "--skip-git-repo-check", "resume", id, "SLOWTOOL turn B"},
		func() string { return path }, `sleep 60`)
	h.CodexResume(id, "NOTOOL turn C")
	out := repairClean(t, h, path, "dangling_tool_call")
	if !strings.Contains(out, "the thread went on") {
		t.Errorf("the call was not answered in the middle:\n%s", out)
	}

	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn D")
	req := h.FirstModelCallSince(mark)
	if !bytes.Contains(req.Body, []byte(`sleep 60`)) || !bytes.Contains(req.Body, []byte(`"output":"aborted"`)) {
		t.Errorf("the resumed request does not carry the call with its aborted output")
	}
	wantTexts(t, "turn D request", h.UserTexts(req), []string{"NOTOOL turn A", "SLOWTOOL turn B", "NOTOOL turn C", "NOTOOL turn D"})
}

// hasTexts fails the test unless every one of want is among the user texts
// got (in any order; two user messages in a row are joined by the client,
// which leaves a newline at the end of the first, so texts are trimmed).
func hasTexts(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.TrimSpace(g) == w
		}
		if !found {
			t.Errorf("%s lacks %q: %q", what, w, got)
		}
	}
}

// interruptedText is the answer repair writes for an interrupted call, as
// the harness's Claude Code writes it.
func interruptedText(h *Harness) string {
	if h.Claude330OrLater() {
		return claude.InterruptedSessionEnd
	}
	return claude.InterruptedToolUse
}
