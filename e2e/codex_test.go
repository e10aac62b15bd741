package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/fakemodel"
)

// codexABC creates a thread with the three text-only turns A, B and C and
// returns its id, its rollout, and the rollout's size after turn B.
func codexABC(t *testing.T, h *Harness) (id, path string, afterB int64) {
	t.Helper()
	id = h.CodexExec("NOTOOL turn A")
	if out := h.Last().Stdout; !strings.Contains(out, "ACK: NOTOOL turn A") {
		t.Errorf("turn A answered %q", out)
	}
	if out := h.CodexResume(id, "NOTOOL turn B"); !strings.Contains(out, "ACK: NOTOOL turn B") {
		t.Errorf("turn B answered %q", out)
	}
	path = h.CodexSessionFile(id)
	afterB = h.Size(path)
	mark := h.Mark()
	if out := h.CodexResume(id, "NOTOOL turn C"); !strings.Contains(out, "ACK: NOTOOL turn C") {
		t.Errorf("turn C answered %q", out)
	}
	req := h.FirstModelCallSince(mark)
	md := req.CodexTurnMetadata()
	if md["request_kind"] != "turn" || md["history_initialization"] != "cold_resume" || md["thread_id"] != id {
		t.Errorf("X-Codex-Turn-Metadata = %v", md)
	}
	want := []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"}
	if got := h.UserTexts(req); !reflect.DeepEqual(got, want) {
		t.Errorf("turn C request user texts:\n got %q\nwant %q", got, want)
	}
	return id, path, afterB
}

func TestCodexResumeSendsWholeHistory(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	_, path, afterB := codexABC(t, h)
	if !strings.Contains(string(h.ReadFile(path)[afterB:]), "ACK: NOTOOL turn C") {
		t.Errorf("turn C's answer is not after turn B's lines")
	}
}

func TestCodexToolRoundTrip(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	mark := h.Mark()
	id := h.CodexExec("Please list the files here")
	if out := h.Last().Stdout; !strings.Contains(out, "Done. The command output was: ") || !strings.Contains(out, "hello.txt") {
		t.Errorf("answer %q", out)
	}
	calls := h.ModelCallsSince(mark)
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2", len(calls))
	}
	if calls[0].Reply.Tool == nil || calls[0].Reply.Tool.Name != "exec_command" || calls[1].Reply.Reason != fakemodel.ReasonToolResult {
		t.Fatalf("replies %+v, %+v", calls[0].Reply, calls[1].Reply)
	}
	callID := calls[0].Reply.Tool.ID
	body := string(calls[1].Body)
	for _, s := range []string{`"type":"function_call"`, `"call_id":"` + callID + `"`, `"type":"function_call_output"`} {
		if !strings.Contains(body, s) {
			t.Errorf("second request lacks %s", s)
		}
	}
	file := string(h.ReadFile(h.CodexSessionFile(id)))
	for _, s := range []string{`"type":"function_call"`, `"type":"function_call_output","id":`, `"call_id":"` + callID + `"`} {
		if !strings.Contains(file, s) {
			t.Errorf("rollout lacks %s", s)
		}
	}
}

// codexLastOrdinal returns the ordinal of the rollout's last record.
func codexLastOrdinal(t *testing.T, h *Harness, path string) int {
	t.Helper()
	content := strings.TrimSuffix(string(h.ReadFile(path)), "\n")
	var rec struct {
		Ordinal *int `json:"ordinal"`
	}
	if err := json.Unmarshal([]byte(content[strings.LastIndex(content, "\n")+1:]), &rec); err != nil || rec.Ordinal == nil {
		t.Fatalf("last record of %s has no ordinal (%v)", path, err)
	}
	return *rec.Ordinal
}

// rollbackLine is the record Codex itself writes for a rollback of n user
// turns. Codex 0.169 requires the final record of a rollout to carry an
// ordinal (see TestCodexRollbackWithoutOrdinalIsRefused).
func rollbackLine(ordinal, n int) string {
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	return fmt.Sprintf(`{"timestamp":%q,"ordinal":%d,"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":%d}}`, ts, ordinal, n)
}

// codexResumeD resumes with turn D and returns its first request.
func codexResumeD(t *testing.T, h *Harness, id string) fakemodel.Request {
	t.Helper()
	mark := h.Mark()
	if out := h.CodexResume(id, "NOTOOL turn D"); !strings.Contains(out, "ACK: NOTOOL turn D") {
		t.Errorf("turn D answered %q", out)
	}
	return h.FirstModelCallSince(mark)
}

// codexResumeE checks that a revert sticks: the next resume continues from
// turn D.
func codexResumeE(t *testing.T, h *Harness, id string, want ...string) {
	t.Helper()
	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn E")
	if got := h.UserTexts(h.FirstModelCallSince(mark)); !reflect.DeepEqual(got, want) {
		t.Errorf("turn E request user texts:\n got %q\nwant %q", got, want)
	}
}

// TestCodexRevertByRollback is the mechanism `sessctl revert` should use
// for Codex: append Codex's own thread_rolled_back event. Codex drops the
// newest num_turns user turns (with their tool calls) when it rebuilds the
// history, and the file stays append-only.
func TestCodexRevertByRollback(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := codexABC(t, h)
	h.AppendLine(path, rollbackLine(codexLastOrdinal(t, h, path)+1, 1))
	kept := h.ReadFile(path)
	req := codexResumeD(t, h, id)
	if got, want := h.UserTexts(req), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"}; !reflect.DeepEqual(got, want) {
		t.Errorf("turn D request user texts:\n got %q\nwant %q", got, want)
	}
	h.AssertAppendOnly(path, kept)
	codexResumeE(t, h, id, "NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E")
}

// TestCodexRollbackTurns covers the variants a revert will produce: more
// than one turn, a turn with tool calls, and ordinals that are not exactly
// last+1 (Codex only requires one to be present).
func TestCodexRollbackTurns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		turnC        string
		ordinalDelta int
		numTurns     int
		want         []string
	}{
		{"two turns", "NOTOOL turn C", 1, 2, []string{"NOTOOL turn A", "NOTOOL turn D"}},
		{"tool turn", "turn C: list the files", 1, 1, []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"}},
		{"repeated ordinal", "NOTOOL turn C", 0, 1, []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"}},
		{"ordinal gap", "NOTOOL turn C", 10, 1, []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := NewHarness(t)
			id := h.CodexExec("NOTOOL turn A")
			h.CodexResume(id, "NOTOOL turn B")
			h.CodexResume(id, c.turnC)
			path := h.CodexSessionFile(id)
			h.AppendLine(path, rollbackLine(codexLastOrdinal(t, h, path)+c.ordinalDelta, c.numTurns))
			req := codexResumeD(t, h, id)
			if got := h.UserTexts(req); !reflect.DeepEqual(got, c.want) {
				t.Errorf("turn D request user texts:\n got %q\nwant %q", got, c.want)
			}
			if strings.Contains(string(req.Body), `"function_call`) {
				t.Errorf("the rolled-back tool call was sent")
			}
		})
	}
}

// TestCodexRollbackWithoutOrdinalIsRefused: the record shape of the
// upstream source (no ordinal) makes 0.169 refuse to resume the thread
// ("final paginated rollout record … is missing an ordinal"), exit 1.
func TestCodexRollbackWithoutOrdinalIsRefused(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, _ := codexABC(t, h)
	ts := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	h.AppendLine(path, `{"timestamp":"`+ts+`","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}`)
	kept := h.ReadFile(path)
	mark := h.Mark()
	_, err := h.Codex("exec", "--skip-git-repo-check", "resume", id, "NOTOOL turn D")
	if err == nil || h.Last().ExitCode != 1 {
		t.Fatalf("resume succeeded (exit %d); want a refusal", h.Last().ExitCode)
	}
	if !strings.Contains(h.Last().Stderr, "is missing an ordinal") {
		t.Errorf("stderr does not name the missing ordinal:\n%s", h.Last().Stderr)
	}
	if n := len(h.ModelCallsSince(mark)); n != 0 {
		t.Errorf("%d model calls after the refusal", n)
	}
	if got := h.ReadFile(path); string(got) != string(kept) {
		t.Errorf("the refused resume changed the rollout")
	}
}

// TestCodexRevertByTruncation: cutting the rollout after turn B's last
// record also works for the model history (the ordinals of the cut records
// are reused), but leaves thread_history_1.sqlite's projection pointing
// past the end of the file (see docs/e2e.md).
func TestCodexRevertByTruncation(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id, path, afterB := codexABC(t, h)
	h.Truncate(path, afterB)
	kept := h.ReadFile(path)
	req := codexResumeD(t, h, id)
	if got, want := h.UserTexts(req), []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D"}; !reflect.DeepEqual(got, want) {
		t.Errorf("turn D request user texts:\n got %q\nwant %q", got, want)
	}
	h.AssertAppendOnly(path, kept)
	codexResumeE(t, h, id, "NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn D", "NOTOOL turn E")
}
