package e2e

import (
	"reflect"
	"strings"
	"testing"
)

func TestCodexResumeSendsWholeHistory(t *testing.T) {
	h := NewHarness(t)
	id := h.CodexExec("NOTOOL turn A")
	if out := h.Last().Stdout; !strings.Contains(out, "ACK: NOTOOL turn A") {
		t.Errorf("turn A answered %q", out)
	}
	if out := h.CodexResume(id, "NOTOOL turn B"); !strings.Contains(out, "ACK: NOTOOL turn B") {
		t.Errorf("turn B answered %q", out)
	}
	path := h.CodexSessionFile(id)
	before := h.ReadFile(path)
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
	h.AssertAppendOnly(path, before)
}
