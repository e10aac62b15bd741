package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legacyRollout is a rollout in the pre-0.169 shape (no ordinal, no
// history_mode), written by hand after the 0.104 samples, with two turns.
func legacyRollout(id, cwd string) string {
	lines := []string{
		`{"timestamp":"2026-02-23T19:34:26.098Z","type":"session_meta","payload":{"id":"` + id + `","timestamp":"2026-02-23T19:34:25.573Z","cwd":"` + cwd + `","originator":"codex_cli_rs","cli_version":"0.104.0","source":"cli","model_provider":"fake","base_instructions":{"text":"You are a coding agent."}}}`,
	}
	for i, turn := range []string{"A", "B"} {
		tid := "019c8bfe-ed40-7a21-b57f-6447436c588" + string(rune('1'+i))
		p := "NOTOOL turn " + turn
		lines = append(lines,
			`{"timestamp":"2026-02-23T19:34:26.099Z","type":"event_msg","payload":{"type":"task_started","turn_id":"`+tid+`","model_context_window":258400,"collaboration_mode_kind":"default"}}`,
			`{"timestamp":"2026-02-23T19:34:26.099Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"`+p+`"}]}}`,
			`{"timestamp":"2026-02-23T19:34:26.099Z","type":"event_msg","payload":{"type":"user_message","message":"`+p+`","images":[],"local_images":[],"text_elements":[]}}`,
			`{"timestamp":"2026-02-23T19:34:33.389Z","type":"turn_context","payload":{"turn_id":"`+tid+`","cwd":"`+cwd+`","approval_policy":"never","sandbox_policy":{"type":"danger-full-access"},"model":"gpt-5","summary":"auto"}}`,
			`{"timestamp":"2026-02-23T19:34:34.390Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ACK: `+p+`"}]}}`,
			`{"timestamp":"2026-02-23T19:34:34.391Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"`+tid+`","last_agent_message":"ACK: `+p+`"}}`,
		)
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestRevertCodexLegacyRollout: a rollout without ordinals (the shape
// before 0.169) gets a thread_rolled_back without ordinal, which the real
// Codex 0.169 honours on resume.
func TestRevertCodexLegacyRollout(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	const id = "019c8bfe-ec25-79e0-97d7-bda6a9c57000"
	dir := filepath.Join(h.Home, ".codex", "sessions", "2026", "02", "23")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-2026-02-23T20-34-25-"+id+".jsonl")
	if err := os.WriteFile(path, []byte(legacyRollout(id, h.Project)), 0o644); err != nil {
		t.Fatal(err)
	}
	// control: the hand-written rollout resumes with both turns
	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn C")
	wantTexts(t, "control request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"})

	// the control resume appended 0.169 records (with ordinals); start again from the legacy file
	if err := os.WriteFile(path, []byte(legacyRollout(id, h.Project)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := sessctl(t, "revert", "--checkpoint", "1", "--force", path)
	if !strings.Contains(out, "thread_rolled_back") {
		t.Fatalf("mechanism: %s", out)
	}
	last := string(h.ReadFile(path))
	if strings.Contains(last[strings.LastIndex(last[:len(last)-1], "\n"):], `"ordinal"`) {
		t.Errorf("the appended record has an ordinal in a file without any")
	}
	mark = h.Mark()
	h.CodexResume(id, "NOTOOL turn D")
	wantTexts(t, "turn D request", h.UserTexts(h.FirstModelCallSince(mark)), []string{"NOTOOL turn A", "NOTOOL turn D"})
}
