package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRevertCodexAcrossCompaction: turn B reports a huge usage, so Codex
// 0.169 compacts during it (model_auto_compact_token_limit). Reverting to
// before B must undo the compaction too: `auto` cuts the file before B
// (a rollback would count turns in the compacted history), and the resumed
// turn sends A and D only. Reverting to C (after the compaction) is a
// rollback of one turn, after which the history still holds the compacted
// A and B but not C.
func TestRevertCodexAcrossCompaction(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	limit := []string{"-c", "model_auto_compact_token_limit=50000"}
	id := h.CodexExec("NOTOOL turn A", limit...)
	h.CodexResume(id, "BIGUSAGE turn B: list the files", limit...)
	h.CodexResume(id, "NOTOOL turn C", limit...)
	path := h.CodexSessionFile(id)
	if !strings.Contains(string(h.ReadFile(path)), `"type":"compacted"`) {
		t.Fatalf("codex did not compact during turn B; the proof needs a compaction")
	}

	var plan struct {
		Plan struct {
			Mechanism     string `json:"mechanism"`
			RollbackTurns int    `json:"rollback_turns"`
		} `json:"plan"`
	}
	// turn C comes after the compaction: a rollback
	if err := json.Unmarshal([]byte(sessctl(t, "revert", "--checkpoint", "2", "--dry-run", "--json", path)), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Plan.Mechanism != "thread_rolled_back" || plan.Plan.RollbackTurns != 1 {
		t.Errorf("turn 2: %+v", plan.Plan)
	}
	h.Revert(path, 2)
	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn C2", limit...)
	texts := h.UserTexts(h.FirstModelCallSince(mark))
	t.Logf("after rolling back C, turn C2 sent %q", texts)
	if len(texts) == 0 || texts[len(texts)-1] != "NOTOOL turn C2" || strings.Contains(strings.Join(texts, "|"), "NOTOOL turn C|") {
		t.Errorf("after rolling back C: %q", texts)
	}
	// turn B is followed by the compaction: a cut
	out := h.Revert(path, 1)
	if !strings.Contains(out, "file cut") {
		t.Fatalf("turn 1 was not cut:\n%s", out)
	}
	if strings.Contains(string(h.ReadFile(path)), `"type":"compacted"`) {
		t.Errorf("the compaction is still in the file")
	}
	mark = h.Mark()
	h.CodexResume(id, "NOTOOL turn D", limit...)
	wantTexts(t, "turn D request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn D"})
}
