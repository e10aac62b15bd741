package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakemodel"
)

// EnvKimiCodeFixtures, if set to a directory, makes TestKimiCodeResume
// copy the Kimi Code store it made there (testdata/kimi-code-2.1.0 was made
// so: see its README).
const EnvKimiCodeFixtures = "SESSCTL_E2E_KIMI_CODE_FIXTURES"

// TestKimiCodeResume: Kimi Code resumes its own session with the history
// `sessctl show` predicts (a Bash call and its result, a thinking turn,
// its injected reminders), `checkpoints` numbers its turns, `check` finds
// every record type known, `ls` lists it, and `stats` counts exactly the
// usage the fake server reported.
func TestKimiCodeResume(t *testing.T) {
	h := NewKimiCodeHarness(t)
	id := h.KimiCodePrompt("Please list the files here")
	h.KimiCodeResume(id, "NOTOOL turn B")
	h.KimiCodeResume(id, "THINK then list the files")
	h.KimiCodeResume(id, "NOTOOL turn D")
	wire := h.KimiCodeSessionFile(id)

	types := KimiCodeRecordTypes(t, wire)
	for _, k := range []string{"metadata", "profile.bind", "turn.prompt", "context.append_message",
		"context.append_loop_event/tool.call", "context.append_loop_event/tool.result", "usage.record", "llm.request"} {
		if types[k] == 0 {
			t.Errorf("the wire has no %s record (types %v)", k, types)
		}
	}

	store := filepath.Join(h.Home, ".kimi-code")
	out, err := h.SessctlRun("check", store)
	if err != nil {
		t.Errorf("sessctl check on a clean Kimi Code store: %v\n%s", err, out)
	}

	var ls []struct {
		Agent   string `json:"agent"`
		ID      string `json:"id"`
		Project string `json:"project"`
	}
	lsOut := h.Sessctl("ls", "--json", "--root", store)
	if err := json.Unmarshal([]byte(lsOut), &ls); err != nil {
		// one JSON object a line
		ls = nil
		dec := json.NewDecoder(strings.NewReader(lsOut))
		for dec.More() {
			var e struct {
				Agent   string `json:"agent"`
				ID      string `json:"id"`
				Project string `json:"project"`
			}
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("ls --json: %v\n%s", err, lsOut)
			}
			ls = append(ls, e)
		}
	}
	if len(ls) != 1 || ls[0].Agent != "kimi-code" || ls[0].ID != id || ls[0].Project != h.Project {
		t.Errorf("ls --json: %+v, want one kimi-code session %s in %s", ls, id, h.Project)
	}

	// stats counts what the fake server reported: prompt + completion
	// tokens of every Chat Completions response
	var want int64
	calls := 0
	for _, r := range h.Requests() {
		if r.Kind == fakemodel.KindChat && r.Reply != nil {
			want += int64(r.Reply.Usage.InputTokens + r.Reply.Usage.OutputTokens)
			calls++
		}
	}
	var st struct {
		Recorded struct {
			Input         int64          `json:"input_tokens"`
			Output        int64          `json:"output_tokens"`
			CacheRead     int64          `json:"cache_read_tokens"`
			CacheCreation int64          `json:"cache_creation_tokens"`
			Requests      int            `json:"requests"`
			ByModel       map[string]any `json:"by_model"`
		} `json:"recorded"`
	}
	stOut := h.Sessctl("stats", "--json", "--root", store)
	if err := json.Unmarshal([]byte(stOut), &st); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, stOut)
	}
	tt := st.Recorded
	if got := tt.Input + tt.Output + tt.CacheRead + tt.CacheCreation; got != want || want == 0 || tt.Requests != calls {
		t.Errorf("stats counts %d tokens in %d requests (%+v); the fake server reported %d in %d", got, tt.Requests, tt, want, calls)
	}
	// the provider's model id (llm.request), not the configuration's alias
	if _, ok := tt.ByModel["gpt-5"]; !ok || len(tt.ByModel) != 1 {
		t.Errorf("stats models %v, want gpt-5 only", tt.ByModel)
	}

	if dir := os.Getenv(EnvKimiCodeFixtures); dir != "" {
		if err := copyTree(store, dir); err != nil {
			t.Fatal(err)
		}
		t.Logf("e2e: Kimi Code store copied to %s", dir)
	}
}

// TestKimiCodeRevert: `sessctl revert --checkpoint 1` cuts the main wire
// before turn 1; Kimi Code resumes it with exactly the history before that
// turn (the oracle), numbers the new prompt turn 1, keeps appending to the
// same wire, and the bytes before the cut stay as they were.
func TestKimiCodeRevert(t *testing.T) {
	h := NewKimiCodeHarness(t)
	id := h.KimiCodePrompt("Please list the files here")
	h.KimiCodeResume(id, "NOTOOL turn B")
	h.KimiCodeResume(id, "NOTOOL turn C")
	wire := h.KimiCodeSessionFile(id)

	h.Revert(wire, 1)
	cut := h.ReadFile(wire)
	if strings.Contains(string(cut), "turn B") || !strings.HasSuffix(string(cut), "\n") {
		t.Fatalf("after the revert the wire still holds turn B, or does not end with a newline")
	}
	h.KimiCodeResume(id, "NOTOOL turn D")
	after := h.ReadFile(wire)
	if !strings.HasPrefix(string(after), string(cut)) {
		t.Errorf("Kimi Code rewrote the reverted wire instead of appending to it")
	}
	var texts []string
	for _, it := range h.Show(wire) {
		if it.Prompt {
			texts = append(texts, it.Text)
		}
	}
	if strings.Join(texts, "|") != "Please list the files here|NOTOOL turn D" {
		t.Errorf("prompts after revert and resume: %q", texts)
	}
}

// TestKimiCodeAutoCompaction: a response reporting 200,000 prompt tokens
// (BIGUSAGE; the window is 200,000) makes Kimi Code compact on its own
// (context.apply_compaction). Resumed afterwards, it sends what show
// predicts: the prompts kept (merged into one message), the summary, the
// continuation reminder and what followed. A revert to the turn before the
// compaction takes the compaction away, and Kimi Code resumes with the
// history it had before that turn.
func TestKimiCodeAutoCompaction(t *testing.T) {
	h := NewKimiCodeHarness(t)
	id := h.KimiCodePrompt("NOTOOL turn A")
	h.KimiCodeResume(id, "BIGUSAGE then list the files")
	wire := h.KimiCodeSessionFile(id)
	if types := KimiCodeRecordTypes(t, wire); types["context.apply_compaction"] != 1 {
		t.Fatalf("Kimi Code did not compact once: record types %v", types)
	}
	h.KimiCodeResume(id, "NOTOOL turn C")
	var summary bool
	for _, it := range h.Show(wire) {
		if it.Type == "summary" {
			summary = true
		}
	}
	if !summary {
		t.Errorf("show lists no compaction summary")
	}
	h.Revert(wire, 1)
	h.KimiCodeResume(id, "NOTOOL turn D")
}

// TestKimiCodeCompact: `sessctl compact --keep 2` appends one
// context.apply_compaction record (a legacy-tail one: the summary, then
// the history after the compacted messages, left in place); Kimi Code
// resumes with exactly what show predicts — the summary and the kept
// tail — and goes on appending.
func TestKimiCodeCompact(t *testing.T) {
	h := NewKimiCodeHarness(t)
	id := h.KimiCodePrompt("Please list the files here OLDONE")
	h.KimiCodeResume(id, "NOTOOL turn B OLDTWO")
	h.KimiCodeResume(id, "NOTOOL turn C KEEPTHREE")
	wire := h.KimiCodeSessionFile(id)
	orig := h.ReadFile(wire)
	h.Sessctl("compact", "--force", "--keep", "2", wire)
	compacted := h.ReadFile(wire)
	if !strings.HasPrefix(string(compacted), string(orig)) ||
		strings.Count(string(compacted[len(orig):]), "\n") != 1 ||
		!strings.Contains(string(compacted[len(orig):]), `"type":"context.apply_compaction"`) {
		t.Fatalf("compact did not append exactly one context.apply_compaction line:\n%s", compacted[len(orig):])
	}
	h.KimiCodeResume(id, "NOTOOL turn D")
	sent, err := h.LastModelCall().Items()
	if err != nil {
		t.Fatal(err)
	}
	// turn B's prompt went into the summary; turn C's is sent as it is
	texts := map[string]bool{}
	for _, it := range sent {
		texts[it.Text] = true
	}
	if texts["NOTOOL turn B OLDTWO"] || texts["ACK: NOTOOL turn B OLDTWO"] || !texts["NOTOOL turn C KEEPTHREE"] {
		t.Errorf("after compact, Kimi Code sent turn B's messages or not turn C's: %v", sent)
	}
	h.KimiCodeResume(id, "NOTOOL turn E")
}
