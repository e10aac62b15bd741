package e2e

import (
	"strings"
	"testing"
)

// TestRevertClaudeAcrossCompaction: turns A and B, a real `/compact`, turn
// C. The /compact command is not a turn. Reverting to C keeps the
// compaction (the resumed turn starts from the summary, without C);
// reverting to B then cuts the compaction away too (A and the new turn only).
func TestRevertClaudeAcrossCompaction(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	h.ClaudeResume(id, "/compact")
	h.ClaudeResume(id, "NOTOOL turn C")
	path := h.ClaudeSessionFile(id)
	if !strings.Contains(string(h.ReadFile(path)), `"subtype":"compact_boundary"`) {
		t.Fatalf("claude did not compact")
	}
	wantTexts(t, "turns", checkpoints(t, path).livePreviews(), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"})

	h.Revert(path, 2)
	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn D")
	texts := h.UserTexts(h.FirstModelCallSince(mark))
	t.Logf("after reverting to C, turn D sent %q", texts)
	all := strings.Join(texts, "|")
	if len(texts) == 0 || !strings.HasPrefix(texts[0], "This session is being continued") || texts[len(texts)-1] != "NOTOOL turn D" || strings.Contains(all, "turn C") {
		t.Errorf("after reverting to C: %q", texts)
	}

	h.Revert(path, 1)
	if strings.Contains(string(h.ReadFile(path)), `"subtype":"compact_boundary"`) {
		t.Errorf("the compaction is still in the file")
	}
	mark = h.Mark()
	h.ClaudeResume(id, "NOTOOL turn E")
	wantTexts(t, "turn E request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn E"})
}
