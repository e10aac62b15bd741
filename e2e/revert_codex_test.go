package e2e

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestRevertCodexWithSessctl: three turns A, B, C; `sessctl revert
// --checkpoint 2` appends Codex's own thread_rolled_back (every earlier
// byte stays); the real Codex resumes and sends A, B, D, then A, B, D, E.
// A second revert to turn 1 then drops B, D and E.
func TestRevertCodexWithSessctl(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := codexABC(t, h)
	orig := h.ReadFile(path)
	out := h.Revert(path, 2)
	t.Logf("sessctl revert:\n%s", out)
	if !strings.Contains(out, "thread_rolled_back") {
		t.Errorf("mechanism: %s", out)
	}
	after := h.ReadFile(path)
	if !bytes.HasPrefix(after, orig) || !bytes.Contains(after[len(orig):], []byte(`"type":"thread_rolled_back","num_turns":1`)) {
		t.Fatalf("the rollout was not appended to: %q", after[len(orig):])
	}
	if got, _ := os.ReadFile(path + ".1"); !bytes.Equal(got, orig) {
		t.Errorf("rotation does not hold the original")
	}
	wantTexts(t, "live turns after the revert", checkpoints(t, path).livePreviews(), []string{"NOTOOL turn A", "NOTOOL turn B"})

	mark := h.Mark()
	if out := h.CodexResume(id, "NOTOOL turn D"); !strings.Contains(out, "ACK: NOTOOL turn D") {
		t.Errorf("turn D answered %q", out)
	}
	wantTexts(t, "turn D request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"})
	h.AssertAppendOnly(path, after)
	mark = h.Mark()
	h.CodexResume(id, "NOTOOL turn E")
	wantTexts(t, "turn E request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E"})

	// second revert, counted on the live turns A, B, D, E
	wantTexts(t, "live turns", checkpoints(t, path).livePreviews(), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E"})
	h.Revert(path, 1)
	mark = h.Mark()
	h.CodexResume(id, "NOTOOL turn F")
	wantTexts(t, "turn F request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn F"})
}

// TestRevertCodexTruncate: the cutting mechanism (used automatically when a
// compaction follows the turn) also resumes where asked, with a tool turn.
func TestRevertCodexTruncate(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("Please list the files here")
	h.CodexResume(id, "NOTOOL turn B")
	h.CodexResume(id, "NOTOOL turn C")
	path := h.CodexSessionFile(id)
	orig := h.ReadFile(path)
	out := h.Revert(path, 1, "--mechanism", "truncate")
	if !strings.Contains(out, "file cut") {
		t.Errorf("mechanism: %s", out)
	}
	kept := h.ReadFile(path)
	if !bytes.HasPrefix(orig, kept) || bytes.Contains(kept, []byte("turn B")) {
		t.Fatalf("the cut file is not a prefix without turn B")
	}
	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn D")
	req := h.FirstModelCallSince(mark)
	wantTexts(t, "turn D request", h.UserTexts(req), []string{"Please list the files here", "NOTOOL turn D"})
	if body := string(req.Body); !strings.Contains(body, `"type":"function_call_output"`) || strings.Contains(body, "turn C") {
		t.Errorf("turn A's tool call is missing or turn C came back")
	}
}
