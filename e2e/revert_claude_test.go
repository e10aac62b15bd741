package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRevertClaudeWithSessctl: three turns A, B, C; `sessctl revert
// --checkpoint 2` (before C); the real Claude Code resumes and sends A, B
// and the new turn D, then A, B, D, E. The original is kept as <id>.jsonl.1,
// which Claude does not take for a session.
func TestRevertClaudeWithSessctl(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := claudeABC(t, h)
	orig := h.ReadFile(path)
	wantTexts(t, "turns before the revert", checkpoints(t, path).livePreviews(),
		[]string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"})

	// --dry-run changes nothing
	out := sessctl(t, "revert", "--checkpoint", "2", "--dry-run", "--force", path)
	if !strings.Contains(out, "1 file changed, 0 insertions(+)") || !bytes.Equal(h.ReadFile(path), orig) {
		t.Fatalf("dry run changed the file or printed:\n%s", out)
	}
	// without --force the just-written session is refused as live (exit 3)
	if out, err := sessctlRun(t, "revert", "--checkpoint", "2", path); err == nil || !strings.Contains(out, "sessctl: error:") {
		t.Errorf("a session written seconds ago was not refused: %v\n%s", err, out)
	}
	out = h.Revert(path, 2)
	t.Logf("sessctl revert:\n%s", out)
	rot := path + ".1"
	if got, _ := os.ReadFile(rot); !bytes.Equal(got, orig) {
		t.Fatalf("rotation %s does not hold the original", rot)
	}
	kept := h.ReadFile(path)
	if !linesOf(orig, kept) || bytes.Contains(kept, []byte("turn C")) || kept[len(kept)-1] != '\n' {
		t.Fatalf("reverted file is not the original's lines, in order, without turn C")
	}

	mark := h.Mark()
	if d := h.ClaudeResume(id, "NOTOOL turn D"); d.Result != "ACK: NOTOOL turn D" {
		t.Errorf("turn D answered %q", d.Result)
	}
	wantTexts(t, "turn D request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"})
	h.AssertAppendOnly(path, kept)
	mark = h.Mark()
	h.ClaudeResume(id, "NOTOOL turn E")
	wantTexts(t, "turn E request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E"})

	// the rotation is not a session to Claude: --continue resumes the real one
	mark = h.Mark()
	h.ClaudePrompt("NOTOOL turn F", "--continue")
	wantTexts(t, "--continue request", h.UserTexts(h.FirstModelCallSince(mark)),
		[]string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E", "NOTOOL turn F"})
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") && e.Name() != filepath.Base(path) {
			t.Errorf("unexpected session file %s next to the session", e.Name())
		}
	}
}

// TestRevertClaudeToolTurn: turn A makes a tool call (Bash), B and C are
// text; reverting to before B keeps A with its tool_use and tool_result.
func TestRevertClaudeToolTurn(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	a := h.ClaudePrompt("Please list the files here")
	id := a.SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	h.ClaudeResume(id, "NOTOOL turn C")
	path := h.ClaudeSessionFile(id)
	h.Revert(path, 1)
	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn D")
	req := h.FirstModelCallSince(mark)
	wantTexts(t, "turn D request", h.UserTexts(req), []string{"Please list the files here", "NOTOOL turn D"})
	body := string(req.Body)
	if !strings.Contains(body, `"type":"tool_use"`) || !strings.Contains(body, `"type":"tool_result"`) {
		t.Errorf("turn A's tool_use/tool_result are not in the resumed history")
	}
	if strings.Contains(body, "turn B") || strings.Contains(body, "turn C") {
		t.Errorf("reverted turns came back")
	}
}

// linesOf reports whether every line of kept is a line of orig, in the
// same order: a revert cuts the file and keeps, after the cut, only whole
// lines of the original (2.1.330's newest cost-state).
func linesOf(orig, kept []byte) bool {
	rest := orig
	for _, l := range bytes.SplitAfter(kept, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		i := bytes.Index(rest, l)
		if i < 0 || i > 0 && rest[i-1] != '\n' {
			return false
		}
		rest = rest[i+len(l):]
	}
	return true
}
