package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scenarios of issue 10 item 5. Every resume below runs the oracle
// (ClaudeResume, CodexResume): `sessctl show` must predict exactly what the
// real client sends next; every h.Revert also checks that the turns it
// numbers give back the history before that turn. The assertions written
// here are only what the oracle cannot see (that a compaction took effect,
// say).

// sessctlCompact runs `sessctl compact --force --keep keep path`.
func sessctlCompact(h *Harness, path string, keep int) string {
	h.t.Helper()
	return h.Sessctl("compact", "--force", "--keep", fmt.Sprint(keep), path)
}

// sentSummary reports whether the request of the last resume carried a
// compaction summary written by sessctl.
func sentSummary(h *Harness, mark int) bool {
	h.t.Helper()
	return strings.Contains(strings.Join(h.UserTexts(h.FirstModelCallSince(mark)), "\n"), "made by sessctl compact")
}

// TestOracleClaudeDoubleRevert: four turns (one with a tool call), then two
// reverts in a row (to C, then to B), a new turn, and a third revert.
func TestOracleClaudeDoubleRevert(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "turn B: list the files")
	h.ClaudeResume(id, "NOTOOL turn C")
	h.ClaudeResume(id, "NOTOOL turn D")
	path := h.ClaudeSessionFile(id)
	h.Revert(path, 3)
	h.Revert(path, 2)
	h.ClaudeResume(id, "NOTOOL turn E")
	h.Revert(path, 1)
	h.ClaudeResume(id, "NOTOOL turn F")
}

// TestOracleCodexDoubleRevert: two rollbacks in a row (each counted on the
// live turns), a new turn, a third, and a hand-written rollback of more
// turns than are live (Codex keeps what came before the first turn).
func TestOracleCodexDoubleRevert(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("NOTOOL turn A")
	h.CodexResume(id, "turn B: list the files")
	h.CodexResume(id, "NOTOOL turn C")
	h.CodexResume(id, "NOTOOL turn D")
	path := h.CodexSessionFile(id)
	h.Revert(path, 3)
	h.Revert(path, 2)
	h.CodexResume(id, "NOTOOL turn E")
	h.Revert(path, 1)
	h.CodexResume(id, "NOTOOL turn F")
	// more turns than there are
	h.AppendLine(path, rollbackLine(codexLastOrdinal(t, h, path)+1, 10))
	h.CodexResume(id, "NOTOOL turn G")
	h.CodexResume(id, "NOTOOL turn H")
}

// TestOracleRestore: a revert, then `sessctl restore --rotation 1` brings
// the original back; show prints what it printed before the revert, and
// the client resumes the whole conversation.
func TestOracleRestore(t *testing.T) {
	t.Parallel()
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.ClaudePrompt("turn A: list the files").SessionID
		h.ClaudeResume(id, "NOTOOL turn B")
		h.ClaudeResume(id, "NOTOOL turn C")
		path := h.ClaudeSessionFile(id)
		h.Restore(path, func() { h.Revert(path, 1) })
		h.ClaudeResume(id, "NOTOOL turn D")
	})
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.CodexExec("turn A: list the files")
		h.CodexResume(id, "NOTOOL turn B")
		h.CodexResume(id, "NOTOOL turn C")
		path := h.CodexSessionFile(id)
		h.Restore(path, func() { h.Revert(path, 1) })
		h.CodexResume(id, "NOTOOL turn D")
	})
}

// TestOracleCompactThenRevert: sessctl's compaction (keeping turn C), a
// turn, then reverts: of that turn (after the compaction), of turn C (kept
// in the compaction's tail) and of turn B (which the compaction covered:
// the compaction goes with it).
func TestOracleCompactThenRevert(t *testing.T) {
	t.Parallel()
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.ClaudePrompt("turn A: list the files").SessionID
		h.ClaudeResume(id, "NOTOOL turn B")
		h.ClaudeResume(id, "NOTOOL turn C")
		path := h.ClaudeSessionFile(id)
		sessctlCompact(h, path, 2)
		mark := h.Mark()
		h.ClaudeResume(id, "NOTOOL turn D")
		if !sentSummary(h, mark) {
			t.Errorf("the compaction did not take effect")
		}
		h.Revert(path, 3)
		h.ClaudeResume(id, "NOTOOL turn E")
		h.Revert(path, 2) // turn C, kept in the compaction's tail
		h.ClaudeResume(id, "NOTOOL turn F")
		h.Revert(path, 1) // turn B, before the compaction
		h.ClaudeResume(id, "NOTOOL turn G")
	})
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.CodexExec("turn A: list the files")
		h.CodexResume(id, "NOTOOL turn B")
		h.CodexResume(id, "NOTOOL turn C")
		path := h.CodexSessionFile(id)
		sessctlCompact(h, path, 2)
		mark := h.Mark()
		h.CodexResume(id, "NOTOOL turn D")
		if !sentSummary(h, mark) {
			t.Errorf("the compaction did not take effect")
		}
		h.Revert(path, 3)
		h.CodexResume(id, "NOTOOL turn E")
		h.Revert(path, 2) // turn C, kept in the compaction's tail
		h.CodexResume(id, "NOTOOL turn F")
		h.Revert(path, 1) // turn B, before the compaction
		h.CodexResume(id, "NOTOOL turn G")
	})
}

// TestOracleRevertThenCompact: a revert, then sessctl's compaction right
// after it, then a turn. The compaction must take effect (for Codex it is
// written after a thread_rolled_back: issue 10's "compaction that never
// takes effect").
func TestOracleRevertThenCompact(t *testing.T) {
	t.Parallel()
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.ClaudePrompt("turn A: list the files").SessionID
		h.ClaudeResume(id, "NOTOOL turn B")
		h.ClaudeResume(id, "NOTOOL turn C")
		h.ClaudeResume(id, "NOTOOL turn D")
		path := h.ClaudeSessionFile(id)
		h.Revert(path, 3)
		sessctlCompact(h, path, 2)
		mark := h.Mark()
		h.ClaudeResume(id, "NOTOOL turn E")
		if !sentSummary(h, mark) {
			t.Errorf("the compaction did not take effect")
		}
	})
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.CodexExec("turn A: list the files")
		h.CodexResume(id, "NOTOOL turn B")
		h.CodexResume(id, "NOTOOL turn C")
		h.CodexResume(id, "NOTOOL turn D")
		path := h.CodexSessionFile(id)
		h.Revert(path, 3)
		sessctlCompact(h, path, 2)
		mark := h.Mark()
		h.CodexResume(id, "NOTOOL turn E")
		if !sentSummary(h, mark) {
			t.Errorf("the compaction written after a rollback did not take effect (compact's writer: issue 10, item 6)")
		}
	})
}

// TestOracleClaudeOwnCompact: Claude's own /compact after a tool turn (the
// segment it preserves holds the tool call), then turns; then a revert to
// the turn after the compaction and one to before it.
func TestOracleClaudeOwnCompact(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "turn B: list the files")
	h.ClaudeResume(id, "/compact")
	path := h.ClaudeSessionFile(id)
	if !strings.Contains(string(h.ReadFile(path)), `"preservedSegment"`) {
		t.Fatalf("claude did not compact with a preserved segment")
	}
	h.ClaudeResume(id, "NOTOOL turn C")
	h.ClaudeResume(id, "turn D: list the files")
	h.Revert(path, 3)
	h.ClaudeResume(id, "NOTOOL turn E")
	h.Revert(path, 1)
	h.ClaudeResume(id, "NOTOOL turn F")
}

// TestOracleClaudeSubagent: a turn that runs the Agent tool. The subagent's
// own messages live in their own file; the main history sends the Agent
// call and its result only.
func TestOracleClaudeSubagent(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "AGENT turn B: find the files")
	path := h.ClaudeSessionFile(id)
	subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "*.jsonl"))
	inMain := bytes.Contains(h.ReadFile(path), []byte(`"isSidechain":true`))
	if len(subs) == 0 && !inMain {
		t.Fatalf("the Agent turn left no subagent messages")
	}
	t.Logf("subagent files %q, sidechain lines in the main file: %v", subs, inMain)
	h.ClaudeResume(id, "NOTOOL turn C")
	h.Revert(path, 2)
	h.ClaudeResume(id, "NOTOOL turn D")
	h.Revert(path, 1)
	h.ClaudeResume(id, "NOTOOL turn E")
}

// TestOracleThinkingToolTurns: turns with a thinking block or reasoning
// item before a tool call (one model response written as several lines by
// Claude Code, several items by Codex).
func TestOracleThinkingToolTurns(t *testing.T) {
	t.Parallel()
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.ClaudePrompt("THINK turn A: list the files").SessionID
		h.ClaudeResume(id, "THINK NOTOOL turn B")
		h.ClaudeResume(id, "NOTOOL turn C")
		path := h.ClaudeSessionFile(id)
		h.Revert(path, 2)
		h.ClaudeResume(id, "NOTOOL turn D")
	})
	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		h := NewHarness(t)
		id := h.CodexExec("THINK turn A: list the files")
		h.CodexResume(id, "THINK NOTOOL turn B")
		h.CodexResume(id, "NOTOOL turn C")
		path := h.CodexSessionFile(id)
		h.Revert(path, 2)
		h.CodexResume(id, "NOTOOL turn D")
	})
}

// TestOracleClaudeUnansweredToolCall: the file is cut right after the
// assistant line that calls a tool (the result never written, as after a
// crash). Claude drops the unanswered call at the tip.
func TestOracleClaudeUnansweredToolCall(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "turn B: list the files")
	path := h.ClaudeSessionFile(id)
	content := h.ReadFile(path)
	i := bytes.Index(content, []byte(`"type":"tool_use"`))
	if i < 0 {
		t.Fatal("no tool_use in the file")
	}
	end := int64(i + bytes.IndexByte(content[i:], '\n') + 1)
	h.Truncate(path, end)
	h.ClaudeResume(id, "NOTOOL turn C")
	h.ClaudeResume(id, "NOTOOL turn D")
}

// TestOracleClaudeUnansweredPrompt: the file is cut right after turn B's
// prompt (no answer was written).
func TestOracleClaudeUnansweredPrompt(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	path := h.ClaudeSessionFile(id)
	content := h.ReadFile(path)
	i := bytes.Index(content, []byte(`"type":"user","message":{"role":"user","content":"NOTOOL turn B"}`))
	if i < 0 {
		t.Fatal("turn B's prompt not found")
	}
	h.Truncate(path, int64(i+bytes.IndexByte(content[i:], '\n')+1))
	h.ClaudeResume(id, "NOTOOL turn C")
	h.ClaudeResume(id, "NOTOOL turn D")
}

// TestOracleClaudeGarbledLine: a line in the middle of the chain becomes
// unparseable (turn B's prompt); the client bridges over it.
func TestOracleClaudeGarbledLine(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	h.ClaudeResume(id, "NOTOOL turn C")
	path := h.ClaudeSessionFile(id)
	content := h.ReadFile(path)
	lines := bytes.SplitAfter(content, []byte("\n"))
	garbled := false
	for i, l := range lines {
		var rec struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(l, &rec) == nil && rec.Type == "user" && string(rec.Message.Content) == `"NOTOOL turn B"` {
			lines[i] = append([]byte(`{"garbled":`), l[len(l)/2:]...) // same length or so, not JSON
			garbled = true
		}
	}
	if !garbled {
		t.Fatal("turn B's prompt not found")
	}
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	h.ClaudeResume(id, "NOTOOL turn D")
}

// TestOracleCodexRollbackOverCompaction: Codex compacts during turn B; a
// hand-written rollback of C (after the compaction) and then of B (the
// turn holding the compaction), as Codex's own rollback would write them.
func TestOracleCodexRollbackOverCompaction(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("num_turns=%d", n), func(t *testing.T) {
			t.Parallel()
			h := NewHarness(t)
			limit := []string{"-c", "model_auto_compact_token_limit=50000"}
			id := h.CodexExec("NOTOOL turn A", limit...)
			h.CodexResume(id, "BIGUSAGE turn B: list the files", limit...)
			h.CodexResume(id, "NOTOOL turn C", limit...)
			path := h.CodexSessionFile(id)
			if !strings.Contains(string(h.ReadFile(path)), `"type":"compacted"`) {
				t.Fatalf("codex did not compact during turn B")
			}
			h.AppendLine(path, rollbackLine(codexLastOrdinal(t, h, path)+1, n))
			h.CodexResume(id, "NOTOOL turn D", limit...)
			h.CodexResume(id, "NOTOOL turn E", limit...)
		})
	}
}
