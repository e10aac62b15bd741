package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/agent/codex"
	"github.com/sessctl/sessctl/pkg/session"
)

// ccusageCodexTotal is ccusage's total tokens over one rollout.
func ccusageCodexTotal(t *testing.T, bin, name string, rollout []byte) int64 {
	t.Helper()
	home := t.TempDir()
	p := filepath.Join(home, "sessions", "2026", "01", "01", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, rollout, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "codex", "session", "--offline", "-z", "UTC", "--json")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ccusage codex: %v: %s", err, out)
	}
	var r struct {
		Sessions []struct {
			TotalTokens int64 `json:"totalTokens"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Sessions) != 1 {
		t.Fatalf("ccusage codex output: %v: %.300s", err, out)
	}
	return r.Sessions[0].TotalTokens
}

// TestCompactCodex: a Codex thread with a tool round trip and two more
// turns is compacted offline; on resume Codex rebuilds the history from the
// appended compacted record: the summary and the kept tail, nothing of the
// compacted turns except what the summary says.
func TestCompactCodex(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("Please list the files here OLDONE " + padding)
	h.CodexResume(id, "NOTOOL second turn OLDTWO "+padding)
	h.CodexResume(id, "NOTOOL third turn KEEPTHREE")
	path := h.CodexSessionFile(id)
	orig := h.ReadFile(path)

	res := compactFile(t, path, session.Codex, 2, 50)
	compacted := h.ReadFile(path)
	if !bytes.HasPrefix(compacted, orig) || !bytes.Equal(h.ReadFile(res.Original), orig) {
		t.Fatal("compaction did not keep the original bytes")
	}
	checkClean(t, path, session.Codex)

	mark := h.Mark()
	if out := h.CodexResume(id, "NOTOOL fourth turn NEWFOUR"); !strings.Contains(out, "ACK: NOTOOL fourth turn NEWFOUR") {
		t.Errorf("turn 4 answered %q", out)
	}
	req := h.FirstModelCallSince(mark)
	if md := req.CodexTurnMetadata(); md["request_kind"] != "turn" || md["history_initialization"] != "cold_resume" {
		t.Errorf("X-Codex-Turn-Metadata = %v", md)
	}
	texts := h.UserTexts(req)
	if len(texts) != 3 || !strings.HasPrefix(texts[0], codex.SummaryPrefix+"\n") || !strings.Contains(texts[0], "made by sessctl compact") ||
		texts[1] != "NOTOOL third turn KEEPTHREE" || texts[2] != "NOTOOL fourth turn NEWFOUR" {
		t.Errorf("user texts of the resumed request:\n%q", texts)
	}
	for _, want := range []string{"OLDONE", "OLDTWO"} {
		if !strings.Contains(texts[0], want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	var body struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	var assistant []string
	for _, it := range body.Input {
		var item struct {
			Type string `json:"type"`
			Role string `json:"role"`
		}
		json.Unmarshal(it, &item)
		s := string(it)
		if item.Type == "function_call" || item.Type == "function_call_output" {
			t.Errorf("a compacted tool call reached the model: %.200s", s)
		}
		if item.Role == "assistant" {
			assistant = append(assistant, s)
		}
		if !strings.Contains(s, "Another language model started") {
			for _, old := range []string{"OLDONE", "OLDTWO", "hello.txt"} {
				if strings.Contains(s, old) {
					t.Errorf("compacted content %q outside the summary: %.200s", old, s)
				}
			}
		}
	}
	if len(assistant) != 1 || !strings.Contains(assistant[0], "ACK: NOTOOL third turn KEEPTHREE") {
		t.Errorf("assistant messages sent: %q", assistant)
	}

	h.AssertAppendOnly(path, compacted)
	checkClean(t, path, session.Codex)
	if bin := ccusagePath(); bin != "" {
		name := filepath.Base(path)
		before := ccusageCodexTotal(t, bin, name, orig)
		atCompaction := ccusageCodexTotal(t, bin, name, compacted)
		after := ccusageCodexTotal(t, bin, name, h.ReadFile(path))
		if before == 0 || atCompaction != before || after <= atCompaction {
			t.Errorf("ccusage totals: original %d, compacted %d (want equal), after the resumed turn %d (want more)", before, atCompaction, after)
		}
		t.Logf("ccusage totals: original %d, compacted %d, resumed %d", before, atCompaction, after)
	} else {
		t.Log("ccusage not installed (set SESSCTL_CCUSAGE): its check was not run")
	}
}

// TestCompactCodexToolTail: the kept tail holds a function call and its
// (shortened) output; the resumed request carries both.
func TestCompactCodexToolTail(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec("NOTOOL first turn OLDONE " + padding)
	h.CodexResume(id, "Please list the files here")
	path := h.CodexSessionFile(id)
	res := compactFile(t, path, session.Codex, 2, 10)
	if res.Tail.TruncatedToolOutputs != 1 {
		t.Errorf("tail %+v: the ls output (over 10 tokens) was not shortened", res.Tail)
	}
	mark := h.Mark()
	h.CodexResume(id, "NOTOOL next turn")
	req := h.FirstModelCallSince(mark)
	var body struct {
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	var call, output string
	for _, it := range body.Input {
		switch it.Type {
		case "function_call":
			call = it.CallID
		case "function_call_output":
			output = it.CallID
			if !strings.Contains(string(it.Output), "tokens truncated…") {
				t.Errorf("the kept output was not shortened: %.200s", it.Output)
			}
		}
	}
	if call == "" || call != output {
		t.Errorf("kept call %q and output %q not both sent", call, output)
	}
	if texts := h.UserTexts(req); len(texts) != 2 || !strings.HasPrefix(texts[0], codex.SummaryPrefix) || texts[1] != "NOTOOL next turn" {
		t.Errorf("user texts %q", texts)
	}
	checkClean(t, path, session.Codex)
}
