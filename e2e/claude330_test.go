package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// Claude Code 2.1.330 (issue 12) writes six record types 2.1.197 did not
// (docs/formats/claude-code.md, "Claude Code 2.1.330"). These tests run it
// pinned (WithClaude) whatever SESSCTL_E2E_CLAUDE says, and prove what
// sessctl's rewrites do with those records by what the client does next.

// line330 is the part of a 2.1.330 record the proofs read.
type line330 struct {
	Type       string `json:"type"`
	ShapeHash  string `json:"shapeHash"`
	Subtype    string `json:"subtype"`
	ModelUsage map[string]struct {
		Input     int64 `json:"inputTokens"`
		Output    int64 `json:"outputTokens"`
		CacheRead int64 `json:"cacheReadInputTokens"`
	} `json:"modelUsage"`
	Message *struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage *struct {
			Input     int64 `json:"input_tokens"`
			Output    int64 `json:"output_tokens"`
			CacheRead int64 `json:"cache_read_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

func lines330(t *testing.T, b []byte) []line330 {
	t.Helper()
	var out []line330
	for _, raw := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var l line330
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("a line of the session is not JSON: %v: %.200s", err, raw)
		}
		out = append(out, l)
	}
	return out
}

func count330(ls []line330, typ string) int {
	n := 0
	for _, l := range ls {
		if l.Type == typ {
			n++
		}
	}
	return n
}

// journalComplete checks what the client itself keeps true: every
// api-request's shape was written before it, after the newest
// compact_boundary before it (the client forgets what it wrote at a
// boundary and writes it again). (An api-request's tail names blobs and
// transcript messages by hashes of the client's own; those are not
// checked.)
func journalComplete(t *testing.T, ls []line330) {
	t.Helper()
	have := map[string]bool{}
	for i, l := range ls {
		switch {
		case l.Type == "system" && l.Subtype == "compact_boundary":
			have = map[string]bool{}
		case l.Type == "api-request-shape":
			have[l.ShapeHash] = true
		case l.Type == "api-request":
			if !have[l.ShapeHash] {
				t.Errorf("line %d: api-request's shape %.12s… is not in the file before it", i+1, l.ShapeHash)
			}
		}
	}
}

// costOf is the client's input+output+cache read of its newest cost-state
// and the same sums of the usage lines (each message.id once).
func costOf(ls []line330) (client, lines int64) {
	seen := map[string]bool{}
	for _, l := range ls {
		if l.Type == "cost-state" {
			client = 0
			for _, m := range l.ModelUsage {
				client += m.Input + m.Output + m.CacheRead
			}
		}
		if l.Type == "assistant" && l.Message != nil && l.Message.Usage != nil && !seen[l.Message.ID] {
			seen[l.Message.ID] = true
			u := l.Message.Usage
			lines += u.Input + u.Output + u.CacheRead
		}
	}
	return client, lines
}

// TestClaude330RevertKeepsTheLedger: three turns (the first with a tool
// call); `sessctl check` is clean; revert before turn 2 removes the request
// journal and the latches of turns 2 and 3 and keeps the newest cost-state;
// the client resumes at the right turn (oracle), writes again the shape and
// blobs its request needs, and its new cost-state continues from the kept
// one (it restored its ledger from it).
func TestClaude330RevertKeepsTheLedger(t *testing.T) {
	t.Parallel()
	h := NewHarness(t, WithClaude(Claude330))
	id := h.ClaudePrompt("Please list the files here").SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	h.ClaudeResume(id, "NOTOOL turn C")
	path := h.ClaudeSessionFile(id)
	orig := lines330(t, h.ReadFile(path))
	for _, typ := range []string{"api-request", "api-request-shape", "api-request-blob", "cost-state", "tools-used", "atis-latch"} {
		if count330(orig, typ) == 0 {
			t.Errorf("Claude Code %s wrote no %s record", h.ClaudeVersion, typ)
		}
	}
	checkClean(t, path, session.Claude)
	if out, err := sessctlRun(t, "check", path); err != nil {
		t.Fatalf("sessctl check on a clean %s session: %v\n%s", h.ClaudeVersion, err, out)
	}
	journalComplete(t, orig)
	spent, _ := costOf(orig)

	h.Revert(path, 1)
	kept := h.ReadFile(path)
	ls := lines330(t, kept)
	if bytes.Contains(kept, []byte("turn B")) {
		t.Fatal("turn B is still in the file")
	}
	if n := count330(ls, "cost-state"); n < 2 {
		t.Errorf("%d cost-state records left, want turn A's and the kept newest one", n)
	}
	if client, _ := costOf(ls); client != spent {
		t.Errorf("newest cost-state after the revert counts %d tokens, want the original's newest %d", client, spent)
	}
	last := ls[len(ls)-1]
	if last.Type != "cost-state" {
		t.Errorf("the file ends with a %s record, want the kept cost-state", last.Type)
	}
	journalComplete(t, ls)
	checkClean(t, path, session.Claude)

	h.ClaudeResume(id, "NOTOOL turn D")
	after := lines330(t, h.ReadFile(path))
	journalComplete(t, after)
	client, _ := costOf(after)
	_, turnD := costOf(after[len(ls):])
	if client != spent+turnD {
		t.Errorf("the client's cost-state after turn D counts %d tokens, want the kept %d + turn D's %d = %d: it did not restore its ledger from the kept cost-state",
			client, spent, turnD, spent+turnD)
	}
	checkClean(t, path, session.Claude)

	// stats holds the client's totals against its own count, which keeps
	// the reverted turns (in the rotation): input, output and cache reads
	// agree (the fake server's cache-write split is its own artefact)
	var rep struct {
		ClientCheck *struct {
			Source      string `json:"source"`
			Differences []struct {
				Field string `json:"field"`
			} `json:"differences"`
		} `json:"client_check"`
	}
	if err := json.Unmarshal([]byte(sessctl(t, "stats", "--json", path)), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.ClientCheck == nil || rep.ClientCheck.Source != "cost-state" {
		t.Fatalf("stats has no client check from cost-state: %+v", rep.ClientCheck)
	}
	for _, d := range rep.ClientCheck.Differences {
		if d.Field != "cache_creation_tokens" {
			t.Errorf("stats: the client's totals and sessctl's disagree on %s", d.Field)
		}
	}
}

// TestClaude330CompactThenResume: sessctl compacts a 2.1.330 session; the
// client resumes it as show predicts (oracle), writes its request journal
// again after sessctl's compact_boundary, and the file checks clean; a
// second resume and a revert across the compaction work too.
func TestClaude330CompactThenResume(t *testing.T) {
	t.Parallel()
	h := NewHarness(t, WithClaude(Claude330))
	id := h.ClaudePrompt("NOTOOL turn A " + padding).SessionID
	h.ClaudeResume(id, "NOTOOL turn B "+padding)
	h.ClaudeResume(id, "Please list the files here")
	path := h.ClaudeSessionFile(id)
	before := h.ReadFile(path)
	compactFile(t, path, session.Claude, 2, 0)
	if !bytes.HasPrefix(h.ReadFile(path), before) {
		t.Fatal("the compaction changed lines it should have appended after")
	}
	checkClean(t, path, session.Claude)
	n := len(lines330(t, h.ReadFile(path)))

	h.ClaudeResume(id, "NOTOOL turn D")
	after := lines330(t, h.ReadFile(path))
	journalComplete(t, after)
	if count330(after[n:], "api-request-shape") == 0 {
		t.Errorf("the client wrote no api-request-shape after sessctl's compact_boundary")
	}
	h.ClaudeResume(id, "NOTOOL turn E")
	checkClean(t, path, session.Claude)
	h.Revert(path, 3)
	h.ClaudeResume(id, "NOTOOL turn F")
	journalComplete(t, lines330(t, h.ReadFile(path)))
	checkClean(t, path, session.Claude)
}

// TestClaude330OwnCompact: the client's own /compact, then a resume
// (oracle: 2.1.330 sends no synthetic pair after it) and a revert to
// before the compaction.
func TestClaude330OwnCompact(t *testing.T) {
	t.Parallel()
	h := NewHarness(t, WithClaude(Claude330))
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	h.ClaudeResume(id, "/compact")
	h.ClaudeResume(id, "NOTOOL turn C")
	path := h.ClaudeSessionFile(id)
	checkClean(t, path, session.Claude)
	h.Revert(path, 1)
	h.ClaudeResume(id, "NOTOOL turn D")
	checkClean(t, path, session.Claude)
	if got := h.ReadFile(path); !strings.Contains(string(got), `"model":"claude-opus-5-5"`) {
		t.Errorf("Claude Code %s did not answer with claude-opus-5-5 (its default model changed?)", h.ClaudeVersion)
	}
	if _, err := os.Stat(path + ".1"); err != nil {
		t.Errorf("no rotation after the revert: %v", err)
	}
}
