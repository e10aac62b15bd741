package compact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/agent/codex"
	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/session"
)

// The defects of issue 10 ("Why") and issue 11 (items 7 and 8), each
// shown on the model the clients resume from (session.Conversation).

// live returns the messages the client sends on resume.
func live(t *testing.T, path string, agent session.Agent) []session.Message {
	t.Helper()
	conv, _ := session.As[session.Conversation](agent)
	var out []session.Message
	err := conv.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		c := *m
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func turns(t *testing.T, path string, agent session.Agent) []string {
	t.Helper()
	conv, _ := session.As[session.Conversation](agent)
	ts, err := conv.Turns(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tu := range ts {
		out = append(out, fmt.Sprintf("%d %s", tu.N, tu.Prompt))
	}
	return out
}

func allText(ms []session.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Text)
		for _, c := range m.ToolCalls {
			b.WriteString(c.Input)
		}
		b.WriteString("\n")
	}
	return b.String()
}

const codexSample = "rollout-2026-11-22T02-59-33-01a20131-d660-7d01-9c2a-095cf6a93b50.jsonl"

// TestCodexCompactAfterRevert: `revert` rolled the last turn back with
// thread_rolled_back; the compaction must neither summarise nor keep it,
// and must be one that Codex takes (not ignored as part of the rolled-back
// turn): the live history starts with its summary.
func TestCodexCompactAfterRevert(t *testing.T) {
	src := filepath.Join(samples(t, "real-clients", "codex-home", "codex", "sessions", "2026", "11", "22"), codexSample)
	path := filepath.Join(t.TempDir(), codexSample)
	copyFile(t, src, path)
	appendLine(t, path, codex.RollbackLine(fixedNow.Add(-time.Minute), 60, 1)) // drops "NOTOOL say hi"
	before := allText(live(t, path, session.Codex))
	if strings.Contains(before, "NOTOOL say hi") {
		t.Fatal("the rollback did not take")
	}
	res, err := compact.Compact(context.Background(), path, session.Codex, opts())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Summary, "NOTOOL say hi") {
		t.Errorf("the rolled-back turn is in the summary:\n%s", res.Summary)
	}
	after := live(t, path, session.Codex)
	var first *session.Message
	for i := range after {
		if !after[i].Injected {
			first = &after[i]
			break
		}
	}
	if first == nil || !first.Summary || !strings.Contains(first.Text, "Please list the files here") {
		t.Fatalf("the compaction is not what Codex resumes from; live history:\n%s", allText(after))
	}
	if strings.Contains(allText(after), "NOTOOL say hi") {
		t.Errorf("the rolled-back turn came back:\n%s", allText(after))
	}
}

// clawdLine is a clawdcode line.
func clawdLine(uuid, parent, typ, ts, rest string) string {
	return fmt.Sprintf(`{"uuid":"%s","parentUuid":"%s","sessionId":"N-jKgMMEsFVxfvZ5q6lVM","timestamp":"%s","type":"%s","cwd":"/home/alice/app","gitBranch":"main","version":"0.1.0",%s}`, uuid, parent, ts, typ, rest)
}

func clawdSession(t *testing.T, path string) []byte {
	t.Helper()
	long := strings.Repeat("The refactoring of src/utils.ts splits the helpers into modules. ", 30)
	return writeLines(t, path,
		clawdLine("u1", "", "user", "2026-03-02T09:15:04.512Z", `"message":{"role":"user","content":"重构 src/utils.ts"}`),
		clawdLine("a1", "u1", "assistant", "2026-03-02T09:15:07.031Z", `"message":{"role":"assistant","content":"`+long+`","model":"glm-4.6","usage":{"input_tokens":5000,"output_tokens":500}}`),
		clawdLine("u2", "a1", "user", "2026-03-02T09:16:00.000Z", `"message":{"role":"user","content":"now the tests, please"}`),
		clawdLine("a2", "u2", "assistant", "2026-03-02T09:16:05.000Z", `"message":{"role":"assistant","content":"`+long+`","model":"glm-4.6","usage":{"input_tokens":5500,"output_tokens":500}}`),
		clawdLine("u3", "a2", "user", "2026-03-02T09:17:00.000Z", `"message":{"role":"user","content":"and the docs"}`),
		clawdLine("a3", "u3", "assistant", "2026-03-02T09:17:05.000Z", `"message":{"role":"assistant","content":"Docs updated.","model":"glm-4.6","usage":{"input_tokens":6000,"output_tokens":100}}`),
	)
}

func usageTotal(t *testing.T, path string, agent session.Agent) (total, now int64) {
	t.Helper()
	now = -1
	err := session.ReadFile(path, session.FormatFor(agent), func(r *session.Record) error {
		if r.Usage != nil {
			total += r.Usage.Total()
		}
		if v, _ := session.RecordedContext(r); v >= 0 {
			now = v
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total, now
}

// TestClawdcodeCopiesCarryNoUsage: the copies of the kept tail must not
// count the tail's consumption a second time, nor set "context now".
func TestClawdcodeCopiesCarryNoUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "N-jKgMMEsFVxfvZ5q6lVM.jsonl")
	clawdSession(t, path)
	before, _ := usageTotal(t, path, session.Clawdcode)
	res, err := compact.Compact(context.Background(), path, session.Clawdcode, opts())
	if err != nil {
		t.Fatal(err)
	}
	after, now := usageTotal(t, path, session.Clawdcode)
	if after != before {
		t.Errorf("recorded consumption %d before, %d after the compaction", before, after)
	}
	if res.Tokens.RecordedAfter == nil || now != *res.Tokens.RecordedAfter {
		t.Errorf("context now %d after the compaction, want the postTokens written (%v)", now, res.Tokens.RecordedAfter)
	}
}

// claudeTurns is a Claude Code session of n turns, each a prompt, a tool
// call with a long output, and a long reply.
func claudeTurns(t *testing.T, path string, n int) []byte {
	t.Helper()
	var lines []string
	parent := ""
	long := strings.Repeat("The parser now handles nested blocks and the tests pass. ", 40)
	out := strings.Repeat("ok  \tgithub.com/example/pkg\t0.012s\n", 200)
	for i := 0; i < n; i++ {
		ts := func(k int) string { return fmt.Sprintf("2026-11-22T03:%02d:%02d.000Z", i, k) }
		u, a1, r, a2 := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i), fmt.Sprintf("r%d", i), fmt.Sprintf("b%d", i)
		lines = append(lines,
			claudeLine("user", u, parent, ts(0), userText(fmt.Sprintf("request %d: fix parser step %d", i, i))),
			claudeLine("assistant", a1, u, ts(1), asst(fmt.Sprintf("msg_%da", i), toolUse(fmt.Sprintf("call%d", i), "Bash", fmt.Sprintf(`{"command":"go test ./pkg%d"}`, i)))),
			claudeLine("user", r, a1, ts(2), toolResult(fmt.Sprintf("call%d", i), out), fmt.Sprintf(`"sourceToolAssistantUUID":"%s"`, a1)),
			claudeLine("assistant", a2, r, ts(3), asst(fmt.Sprintf("msg_%db", i), textBlock(long))),
		)
		parent = a2
	}
	return writeLines(t, path, lines...)
}

// TestCompactKeepsTurnNumbers: after a compaction, checkpoints lists the
// same turns under the same numbers (the copies of kept prompts are not
// new turns), and show numbers each kept message as before.
func TestCompactKeepsTurnNumbers(t *testing.T) {
	cases := []struct {
		name  string
		agent session.Agent
		make  func(t *testing.T, path string)
		keep  int
		max   int
	}{
		{"claude copies", session.Claude, func(t *testing.T, p string) { claudeTurns(t, p, 4) }, 3, 50},      // outputs shortened: copies
		{"claude by reference", session.Claude, func(t *testing.T, p string) { claudeTurns(t, p, 4) }, 3, 0}, // nothing to change
		{"clawdcode", session.Clawdcode, func(t *testing.T, p string) { clawdSession(t, p) }, 2, 0},
		{"codex", session.Codex, func(t *testing.T, p string) {
			copyFile(t, filepath.Join(samples(t, "real-clients", "codex-home", "codex", "sessions", "2026", "11", "22"), codexSample), p)
		}, 3, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			if c.agent == session.Codex {
				path = filepath.Join(filepath.Dir(path), codexSample)
			}
			c.make(t, path)
			before := turns(t, path, c.agent)
			msgTurns := map[string]int{}
			for _, m := range live(t, path, c.agent) {
				if m.Prompt {
					msgTurns[m.Text] = m.Turn
				}
			}
			o := opts()
			o.Keep, o.MaxToolOutput = c.keep, c.max
			if _, err := compact.Compact(context.Background(), path, c.agent, o); err != nil {
				t.Fatal(err)
			}
			after := turns(t, path, c.agent)
			if strings.Join(before, "\n") != strings.Join(after, "\n") {
				t.Errorf("turns before the compaction:\n%s\nafter:\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"))
			}
			if c.agent == session.Codex {
				return // kept items live in the compacted record; show numbers them by its place
			}
			for _, m := range live(t, path, c.agent) {
				if n, ok := msgTurns[m.Text]; ok && m.Prompt && m.Turn != n {
					t.Errorf("kept prompt %q: turn %d after, %d before", m.Text, m.Turn, n)
				}
			}
		})
	}
}

const claudeSample = "7bd0bccd-9f75-4483-b19b-c7e227cb8be6.jsonl"

func claudeSampleLines(t *testing.T, upTo int) []string {
	t.Helper()
	src := filepath.Join(samples(t, "real-clients", "claude-home", "claude", "projects", "-home-dev-work-demo"), claudeSample)
	lines := strings.Split(strings.TrimSuffix(string(mustRead(t, src)), "\n"), "\n")
	if upTo > 0 {
		lines = lines[:upTo]
	}
	return lines
}

// TestClaudeRightAfterOwnCompact: right after Claude's own /compact (the
// real 2.1.197 file up to the synthetic pair, line 46), --keep 2 must not
// keep the /compact command echoes and summarise the reply Claude
// preserved: injected messages do not count, so the summary and the
// preserved reply are all there is, and there is nothing to compact.
func TestClaudeRightAfterOwnCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), claudeSample)
	orig := writeLines(t, path, claudeSampleLines(t, 46)...)
	o := opts()
	o.Keep = 2
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err == nil {
		t.Errorf("compacted right after /compact: kept %+v", res.Kept)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("the file changed")
	}
}

// earlierSummary is a realistic Claude /compact summary: 5.5k characters
// whose last sections matter most.
func earlierSummary() string {
	var b strings.Builder
	b.WriteString("This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n")
	b.WriteString("1. Primary Request and Intent:\n   The user asked to port the billing module to the new ledger API.\n")
	b.WriteString("2. Key Technical Concepts:\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "   - concept %d: double-entry postings, idempotency keys and retries\n", i)
	}
	b.WriteString("3. Files and Code Sections:\n")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "   - /srv/billing/ledger_%d.go: posting helpers moved here\n", i)
	}
	b.WriteString("4. Errors and fixes:\n   - TestPostings failed on rounding; fixed by using decimal cents.\n")
	b.WriteString("5. Problem Solving:\n   Settled on one transaction per invoice.\n")
	b.WriteString("6. All user messages:\n   - port billing\n   - keep the old API alive\n")
	b.WriteString("7. Pending Tasks:\n   - PENDING-MARKER migrate the refunds table\n")
	b.WriteString("8. Current Work:\n   CURRENT-MARKER writing the refund reconciliation job in /srv/billing/refunds.go\n")
	b.WriteString("9. Optional Next Step:\n   Run the reconciliation against staging.")
	b.WriteString("\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: /x.jsonl\nContinue the conversation from where it left off without asking the user any further questions.")
	return b.String()
}

// TestRecompactionKeepsEarlierSummaryWhole: an earlier summary is kept
// whole within the budget (older extractive items go first), not cut to
// 600 characters.
func TestRecompactionKeepsEarlierSummaryWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	sum := earlierSummary()
	if len(sum) < 5000 {
		t.Fatalf("summary of %d characters", len(sum))
	}
	lines := []string{
		`{"parentUuid":null,"logicalParentUuid":"x0","isSidechain":false,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":"2026-11-22T02:00:00.000Z","uuid":"bd","level":"info","compactMetadata":{"trigger":"manual","preTokens":90000,"postTokens":1500},"userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`,
		claudeLine("user", "sm", "bd", "2026-11-22T02:00:00.000Z", userText(sum), `"isVisibleInTranscriptOnly":true`, `"isCompactSummary":true`),
	}
	parent := "sm"
	long := strings.Repeat("I checked the reconciliation job and adjusted the matching rules. ", 20)
	for i := 0; i < 30; i++ {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		lines = append(lines,
			claudeLine("user", u, parent, fmt.Sprintf("2026-11-22T03:%02d:00.000Z", i), userText(fmt.Sprintf("step %d: %s", i, strings.Repeat("tune the matcher ", 20)))),
			claudeLine("assistant", a, u, fmt.Sprintf("2026-11-22T03:%02d:01.000Z", i), asst(fmt.Sprintf("msg_%d", i), textBlock(long))))
		parent = a
	}
	writeLines(t, path, lines...)
	o := opts()
	o.DryRun = true
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PENDING-MARKER migrate the refunds table", "CURRENT-MARKER writing the refund reconciliation job", "9. Optional Next Step"} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("the earlier summary lost %q:\n%s", want, res.Summary)
		}
	}
	if res.SummaryTokens > compact.DefaultSummaryTokens {
		t.Errorf("summary of %d tokens, over the budget", res.SummaryTokens)
	}
}

// TestSecondCompactionKeepsTheFirstSummary: compacting twice keeps the
// first summary's open request and file list.
func TestSecondCompactionKeepsTheFirstSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	claudeTurns(t, path, 4)
	// the first request names a file, the last compacted one is the open request
	o := opts()
	o.Keep = 2
	res1, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res1.Summary, "request 3") && !strings.Contains(res1.Summary, "request 2") {
		t.Fatalf("first summary:\n%s", res1.Summary)
	}
	// more turns, then compact again
	lines := strings.Split(strings.TrimSuffix(string(mustRead(t, path)), "\n"), "\n")
	var last map[string]any
	for i := len(lines) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal([]byte(lines[i]), &m) == nil && m["uuid"] != nil && m["type"] != "system" {
			last = m
			break
		}
	}
	parent := last["uuid"].(string)
	long := strings.Repeat("Second phase work is progressing on the lexer. ", 30)
	for i := 0; i < 3; i++ {
		u, a := fmt.Sprintf("v%d", i), fmt.Sprintf("w%d", i)
		appendLine(t, path, []byte(claudeLine("user", u, parent, fmt.Sprintf("2026-11-22T04:%02d:00.000Z", i), userText(fmt.Sprintf("phase two step %d", i)))))
		appendLine(t, path, []byte(claudeLine("assistant", a, u, fmt.Sprintf("2026-11-22T04:%02d:01.000Z", i), asst(fmt.Sprintf("msg_v%d", i), textBlock(long)))))
		parent = a
	}
	res2, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"What remains", "go test ./pkg1", "request 1: fix parser step 1"} {
		if strings.Contains(res1.Summary, want) && !strings.Contains(res2.Summary, want) {
			t.Errorf("the second summary lost %q of the first:\nfirst:\n%s\nsecond:\n%s", want, res1.Summary, res2.Summary)
		}
	}
}

// TestNothingNewSinceLastCompaction: compacting again right after a
// compaction has nothing to summarise but the summary: exit 1, nothing
// written.
func TestNothingNewSinceLastCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	claudeTurns(t, path, 4)
	o := opts()
	o.Keep = 2
	if _, err := compact.Compact(context.Background(), path, session.Claude, o); err != nil {
		t.Fatal(err)
	}
	once := mustRead(t, path)
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err == nil {
		t.Errorf("compacted again with nothing new: %d messages compacted", res.CompactedMessages)
	}
	if !bytes.Equal(mustRead(t, path), once) {
		t.Error("the file changed")
	}
	if _, err := os.Stat(path + ".2"); err == nil {
		t.Error("a second rotation was made")
	}
}

// TestNeverLarger: when the summary would outweigh what it replaces,
// nothing is written and the error says why.
func TestNeverLarger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	orig := writeLines(t, path,
		claudeLine("user", "u1", "", "2026-11-22T03:00:00.000Z", userText("hi")),
		claudeLine("assistant", "a1", "u1", "2026-11-22T03:00:01.000Z", asst("msg_1", textBlock("hello"))),
		claudeLine("user", "u2", "a1", "2026-11-22T03:00:02.000Z", userText("ok")),
		claudeLine("assistant", "a2", "u2", "2026-11-22T03:00:03.000Z", asst("msg_2", textBlock("fine"))),
		claudeLine("user", "u3", "a2", "2026-11-22T03:00:04.000Z", userText("bye")),
		claudeLine("assistant", "a3", "u3", "2026-11-22T03:00:05.000Z", asst("msg_3", textBlock("ciao"))))
	res, err := compact.Compact(context.Background(), path, session.Claude, opts())
	if err == nil {
		t.Fatalf("wrote a result of %d tokens for %d", res.Tokens.After, res.Tokens.Before)
	}
	if !strings.Contains(err.Error(), "larger") {
		t.Errorf("the error does not say why: %v", err)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("the file changed")
	}
}

// processGone reports whether pid has exited (or is a zombie).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	var pid int
	for i := 0; i < 50; i++ {
		if b, err := os.ReadFile(file); err == nil && len(bytes.TrimSpace(b)) > 0 {
			fmt.Sscan(string(b), &pid)
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the summarizer did not write its child's pid")
	return 0
}

// TestSummarizerTimeoutKillsTheGroup: a summarizer that left a child behind
// (holding its stdout) is stopped at the timeout, child included.
func TestSummarizerTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	claudeTurns(t, path, 4)
	pidFile := filepath.Join(dir, "child.pid")
	o := opts()
	o.DryRun = true
	o.Summarizer = "sleep 300 & echo $! > " + pidFile
	o.SummarizerTimeout = 500 * time.Millisecond
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !res.Summarizer.Fallback {
		t.Errorf("summarizer %+v", res.Summarizer)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !processGone(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !processGone(pid) {
		t.Errorf("the summarizer's child %d outlived the timeout", pid)
	}
}

// TestSummarizerBackgroundChild: a summary printed by a command that leaves
// a child holding stdout open is the summary, not a failure.
func TestSummarizerBackgroundChild(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	claudeTurns(t, path, 4)
	pidFile := filepath.Join(dir, "child.pid")
	o := opts()
	o.DryRun = true
	o.Summarizer = "cat >/dev/null; sleep 300 & echo $! > " + pidFile + "; echo THE SUMMARY FROM THE MODEL"
	o.SummarizerTimeout = 20 * time.Second
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, pidFile)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if res.Summarizer.Fallback || res.Summary != "THE SUMMARY FROM THE MODEL" {
		t.Errorf("summarizer %+v, summary %q", res.Summarizer, res.Summary)
	}
}
