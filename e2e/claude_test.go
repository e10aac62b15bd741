package e2e

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestClaudeResumeSendsWholeHistory(t *testing.T) {
	h := NewHarness(t)
	a := h.ClaudePrompt("NOTOOL turn A")
	if a.Result != "ACK: NOTOOL turn A" {
		t.Errorf("turn A answered %q", a.Result)
	}
	b := h.ClaudeResume(a.SessionID, "NOTOOL turn B")
	if b.Result != "ACK: NOTOOL turn B" {
		t.Errorf("turn B answered %q", b.Result)
	}
	path := h.ClaudeSessionFile(a.SessionID)
	before := h.ReadFile(path)
	mark := h.Mark()
	c := h.ClaudeResume(a.SessionID, "NOTOOL turn C")
	if c.Result != "ACK: NOTOOL turn C" {
		t.Errorf("turn C answered %q", c.Result)
	}
	req := h.FirstModelCallSince(mark)
	if got := req.Header("X-Claude-Code-Session-Id"); got != a.SessionID {
		t.Errorf("X-Claude-Code-Session-Id = %q, want %q", got, a.SessionID)
	}
	want := []string{"NOTOOL turn A", "NOTOOL turn B", "NOTOOL turn C"}
	if got := h.UserTexts(req); !reflect.DeepEqual(got, want) {
		t.Errorf("turn C request user texts:\n got %q\nwant %q", got, want)
	}
	h.AssertAppendOnly(path, before)
	if !bytes.Contains(h.ReadFile(path), []byte("ACK: NOTOOL turn C")) {
		t.Errorf("session file lacks turn C's answer")
	}
	_ = strings.Contains
}
