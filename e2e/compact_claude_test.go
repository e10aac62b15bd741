package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/check"
	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/session"
)

// padding makes a prompt long enough that a summary of it is smaller than
// what it replaces (sessctl never writes a larger result).
var padding = strings.Repeat("please keep refactoring the parser module and its tests, step by careful step; ", 30)

// compactFile runs sessctl's compaction on a session the client has just
// written (so --force: its mtime is seconds old) and checks the summary is
// the extractive one.
func compactFile(t *testing.T, path string, agent session.Agent, keep, maxToolOutput int) *compact.Result {
	t.Helper()
	res, err := compact.Compact(context.Background(), path, agent, compact.Options{Keep: keep, Force: true, MaxToolOutput: maxToolOutput})
	if err != nil {
		t.Fatalf("sessctl compact %s: %v", path, err)
	}
	if !res.Written || res.Original == "" || res.Summarizer.Kind != "extractive" {
		t.Fatalf("compaction result %+v", res)
	}
	t.Logf("compacted %s: %d of %d messages, tokens %d → %d, tail %+v, original in %s",
		filepath.Base(path), res.CompactedMessages, res.Messages, res.Tokens.Before, res.Tokens.After, res.Tail, res.Original)
	return res
}

// checkClean runs sessctl check's checker on a file and fails on problems.
func checkClean(t *testing.T, path string, agent session.Agent) {
	t.Helper()
	rep, err := check.File(path, agent, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Errorf("sessctl check %s: line %d: %s: %s", filepath.Base(path), p.Line, p.Kind, p.Message)
	}
}

// ccusagePath finds ccusage 20.0.24 ($SESSCTL_CCUSAGE, or the cache where
// the tokens helper installed it); "" when it is not installed.
func ccusagePath() string {
	if p := os.Getenv("SESSCTL_CCUSAGE"); p != "" {
		return p
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".cache", "sessctl", "ccusage-20.0.24", "node_modules", ".bin", "ccusage")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// ccusageClaudeTotal is ccusage's total tokens over one Claude transcript
// (copied alone into a fresh config dir).
func ccusageClaudeTotal(t *testing.T, bin string, transcript []byte) int64 {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "projects", "p", "s.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, transcript, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "session", "--offline", "-z", "UTC", "--json")
	cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ccusage: %v: %s", err, out)
	}
	var r struct {
		Totals struct {
			TotalTokens int64 `json:"totalTokens"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ccusage output: %v: %.300s", err, out)
	}
	return r.Totals.TotalTokens
}

// TestCompactClaude: a Claude Code session with a tool round trip and two
// more turns is compacted offline, keeping the last two messages; the
// resumed session sends the summary and the kept tail, and nothing of the
// compacted turns except what the summary says.
func TestCompactClaude(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	a := h.ClaudePrompt("Please list the files here OLDONE " + padding)
	id := a.SessionID
	h.ClaudeResume(id, "NOTOOL second turn OLDTWO "+padding)
	h.ClaudeResume(id, "NOTOOL third turn KEEPTHREE")
	path := h.ClaudeSessionFile(id)
	orig := h.ReadFile(path)
	turnsBefore := checkpoints(t, path).livePreviews()

	res := compactFile(t, path, session.Claude, 2, 50)
	compacted := h.ReadFile(path)
	if !bytes.HasPrefix(compacted, orig) || !bytes.Equal(h.ReadFile(res.Original), orig) {
		t.Fatal("compaction did not keep the original bytes")
	}
	// nothing kept had to change: the tail stays where it is, by reference
	if added := string(compacted[len(orig):]); !strings.Contains(added, `"preservedSegment":{"headUuid":"`) || strings.Count(added, "\n") != 3 {
		t.Errorf("not a compaction by reference:\n%s", added)
	}
	checkClean(t, path, session.Claude)
	wantTexts(t, "turns after the compaction", checkpoints(t, path).livePreviews(), turnsBefore)

	mark := h.Mark()
	r := h.ClaudeResume(id, "NOTOOL fourth turn NEWFOUR")
	if r.Result != "ACK: NOTOOL fourth turn NEWFOUR" {
		t.Errorf("turn 4 answered %q", r.Result)
	}
	req := h.FirstModelCallSince(mark)
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	// the summary, then the kept tail (third turn and its answer), then the new prompt
	texts := h.UserTexts(req)
	if len(texts) != 3 || !strings.HasPrefix(texts[0], "This session is being continued from a previous conversation") ||
		!strings.Contains(texts[0], "made by sessctl compact") || texts[1] != "NOTOOL third turn KEEPTHREE" || texts[2] != "NOTOOL fourth turn NEWFOUR" {
		t.Errorf("user texts of the resumed request:\n%q", texts)
	}
	// the summary covers the compacted turns
	for _, want := range []string{"OLDONE", "OLDTWO", "`ls`"} {
		if !strings.Contains(texts[0], want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	// nothing else of the compacted turns reached the model: no tool call or
	// result of the first turn, no assistant reply but the kept one
	var assistant []string
	for _, m := range body.Messages {
		s := string(m.Content)
		if m.Role == "assistant" {
			assistant = append(assistant, s)
		}
		if strings.Contains(s, `"tool_use"`) || strings.Contains(s, `"tool_result"`) {
			t.Errorf("a compacted tool call reached the model: %.200s", s)
		}
		if m.Role != "user" || !strings.Contains(s, "This session is being continued") {
			for _, old := range []string{"OLDONE", "OLDTWO", "hello.txt"} {
				if strings.Contains(s, old) {
					t.Errorf("compacted content %q outside the summary: %.200s", old, s)
				}
			}
		}
	}
	if len(assistant) != 1 || strings.Count(assistant[0], "ACK: NOTOOL third turn KEEPTHREE") != 1 {
		t.Errorf("assistant messages sent (the kept reply once): %q", assistant)
	}

	// the resumed file: appended to, still clean, still counted by ccusage
	h.AssertAppendOnly(path, compacted)
	checkClean(t, path, session.Claude)
	if bin := ccusagePath(); bin != "" {
		before := ccusageClaudeTotal(t, bin, orig)
		atCompaction := ccusageClaudeTotal(t, bin, compacted)
		after := ccusageClaudeTotal(t, bin, h.ReadFile(path))
		if before == 0 || atCompaction != before || after <= atCompaction {
			t.Errorf("ccusage totals: original %d, compacted %d (want equal), after the resumed turn %d (want more)", before, atCompaction, after)
		}
		t.Logf("ccusage totals: original %d, compacted %d, resumed %d", before, atCompaction, after)
	} else {
		t.Log("ccusage not installed (set SESSCTL_CCUSAGE): its check was not run")
	}
}

// TestCompactClaudePreservedSegment records what Claude Code 2.1.197 does
// with a compact_boundary whose compactMetadata.preservedSegment points at
// messages before the boundary (as its own /compact writes): they are sent
// after the summary; without preservedSegment nothing before the boundary
// is. sessctl does not rely on it (it appends copies of the tail, which it
// may have to change); this test documents the client's behaviour.
func TestCompactClaudePreservedSegment(t *testing.T) {
	t.Parallel()
	for _, withSegment := range []bool{true, false} {
		name := "with-preservedSegment"
		if !withSegment {
			name = "without"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kept := claudePreserved(t, withSegment)
			// with the segment Claude sends it after the summary; without it,
			// nothing before the boundary is sent
			if kept != withSegment {
				t.Errorf("preservedSegment %v: the segment was sent: %v", withSegment, kept)
			}
		})
	}
}

func claudePreserved(t *testing.T, withSegment bool) bool {
	h := NewHarness(t)
	a := h.ClaudePrompt("NOTOOL first turn OLDONE")
	id := a.SessionID
	h.ClaudeResume(id, "NOTOOL second turn KEEPTWO")
	path := h.ClaudeSessionFile(id)
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(h.ReadFile(path)), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(l, &m) == nil {
			lines = append(lines, m)
		}
	}
	// head: the second prompt; tail: its answer
	var head, tail, env map[string]any
	for _, m := range lines {
		if m["type"] == "user" {
			if msg, _ := m["message"].(map[string]any); msg != nil && msg["content"] == "NOTOOL second turn KEEPTWO" {
				head = m
			}
		}
		if m["type"] == "assistant" {
			tail = m
			env = m
		}
	}
	if head == nil || tail == nil {
		t.Fatal("turn lines not found")
	}
	boundary, summary := newUUIDForTest(), newUUIDForTest()
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	meta := map[string]any{"trigger": "manual", "preTokens": 1000, "postTokens": 100}
	if withSegment {
		meta["preservedSegment"] = map[string]any{"headUuid": head["uuid"], "anchorUuid": summary, "tailUuid": tail["uuid"]}
	}
	h.AppendLine(path, mustJSONString(t, map[string]any{
		"parentUuid": nil, "logicalParentUuid": tail["uuid"], "isSidechain": false, "type": "system", "subtype": "compact_boundary",
		"content": "Conversation compacted", "isMeta": false, "timestamp": now, "uuid": boundary, "level": "info",
		"compactMetadata": meta,
		"userType":        "external", "entrypoint": env["entrypoint"], "cwd": env["cwd"], "sessionId": id, "version": env["version"], "gitBranch": env["gitBranch"],
	}))
	h.AppendLine(path, mustJSONString(t, map[string]any{
		"parentUuid": boundary, "isSidechain": false, "type": "user",
		"message":                   map[string]any{"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\nPRESERVED-TEST summary"},
		"isVisibleInTranscriptOnly": true, "isCompactSummary": true, "uuid": summary, "timestamp": now,
		"userType": "external", "entrypoint": env["entrypoint"], "cwd": env["cwd"], "sessionId": id, "version": env["version"], "gitBranch": env["gitBranch"],
	}))
	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL third turn NEW")
	texts := h.UserTexts(h.FirstModelCallSince(mark))
	kept := false
	for _, s := range texts {
		if s == "NOTOOL second turn KEEPTWO" {
			kept = true
		}
	}
	t.Logf("Claude Code %s, preservedSegment %v: user texts %q", ClaudeVersion, withSegment, texts)
	if len(texts) == 0 || !strings.Contains(texts[0], "PRESERVED-TEST") {
		t.Errorf("the summary was not sent first: %q", texts)
	}
	return kept
}

func newUUIDForTest() string {
	var b [16]byte
	f, _ := os.Open("/dev/urandom")
	f.Read(b[:])
	f.Close()
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	var out []byte
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// TestCompactClaudeToolTail: the kept tail holds a tool call and its
// (shortened) result; the resumed request carries both, paired, with the
// truncation marker.
func TestCompactClaudeToolTail(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	a := h.ClaudePrompt("NOTOOL first turn OLDONE " + padding)
	id := a.SessionID
	h.ClaudeResume(id, "Please list the files here")
	path := h.ClaudeSessionFile(id)
	turnsBefore := checkpoints(t, path).livePreviews()
	res := compactFile(t, path, session.Claude, 2, 4) // the tool call and the final answer; ls prints ~5 tokens
	// the shortened output means copies, which keep their turn
	wantTexts(t, "turns after the compaction", checkpoints(t, path).livePreviews(), turnsBefore)
	if res.Tail.TruncatedToolOutputs != 1 {
		t.Errorf("tail %+v: the ls output (over 4 tokens) was not shortened", res.Tail)
	}
	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL next turn")
	req := h.FirstModelCallSince(mark)
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				ID        string          `json:"id"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(req.Body, &body) // string contents do not decode into blocks; they are not needed
	var use, result string
	for _, m := range body.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case "tool_use":
				if use != "" {
					t.Errorf("tool_use sent twice")
				}
				use = b.ID
			case "tool_result":
				if result != "" {
					t.Errorf("tool_result sent twice")
				}
				result = b.ToolUseID
				if !strings.Contains(string(b.Content), "tokens truncated…") {
					t.Errorf("the kept tool result was not shortened: %.200s", b.Content)
				}
			}
		}
	}
	if use == "" || use != result {
		t.Errorf("kept tool call %q and result %q not both sent", use, result)
	}
	if texts := h.UserTexts(req); len(texts) != 2 || !strings.HasPrefix(texts[0], "This session is being continued") || texts[1] != "NOTOOL next turn" {
		t.Errorf("user texts %q", texts)
	}
	checkClean(t, path, session.Claude)
}

// TestCompactClaudeAfterRealCompact: turns A and B, Claude's own /compact
// (which preserves B's reply by reference), turn C; then sessctl compact.
// The live context sessctl summarises includes the preserved reply, and the
// resumed request carries sessctl's summary, turn C, and the new turn only.
func TestCompactClaudeAfterRealCompact(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.ClaudePrompt("NOTOOL turn A").SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	h.ClaudeResume(id, "/compact")
	h.ClaudeResume(id, "NOTOOL turn C "+padding)
	path := h.ClaudeSessionFile(id)
	if !strings.Contains(string(h.ReadFile(path)), `"preservedSegment"`) {
		t.Fatalf("claude did not compact with a preserved segment")
	}
	res := compactFile(t, path, session.Claude, 1, 50) // C's reply kept
	if !strings.Contains(res.Summary, "ACK: NOTOOL turn B") {
		t.Errorf("the reply Claude preserved is not in the summary:\n%s", res.Summary)
	}
	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn D")
	req := h.FirstModelCallSince(mark)
	texts := h.UserTexts(req)
	if len(texts) != 2 || !strings.Contains(texts[0], "made by sessctl compact") || !strings.Contains(texts[0], "NOTOOL turn C") || texts[1] != "NOTOOL turn D" {
		t.Errorf("user texts %q", texts)
	}
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		if m.Role == "assistant" && strings.Contains(string(m.Content), "turn B") {
			t.Errorf("the segment Claude preserved was sent again: %.200s", m.Content)
		}
	}
	checkClean(t, path, session.Claude)
}
