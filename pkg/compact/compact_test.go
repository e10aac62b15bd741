package compact_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// What compact does the same way for every agent, shown on Claude Code
// files. How each agent's result is laid out is tested in its home
// (pkg/agent/*/compact_test.go).

func TestTooShortWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	orig := writeLines(t, path,
		claudeLine("user", "u1", "", "2026-11-22T03:00:00.000Z", userText("hi")),
		claudeLine("assistant", "a1", "u1", "2026-11-22T03:00:01.000Z", asst("msg_1", textBlock("hello"))))
	_, err := compact.Compact(context.Background(), path, session.Claude, opts())
	var short *compact.TooShortError
	if !errors.As(err, &short) || !errors.Is(err, compact.ErrTooShort) || !errors.Is(err, compact.ErrNothingToDo) || short.Messages != 2 {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 { // the file and its lock sidecar
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v", names)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	orig := claudeTurns(t, path, 4)
	o := opts()
	o.DryRun = true
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	// 4 turns of prompt, call, result, reply: the tail starts at the
	// reply of turn 3 (line 16 is the reply, 13 the prompt)
	if res.Written || res.Summary == "" || res.SplitLine != 14 || res.Messages != 12 || res.CompactedMessages != 10 {
		t.Errorf("dry run result: written %v, split line %d, %d messages, %d compacted", res.Written, res.SplitLine, res.Messages, res.CompactedMessages)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
	if _, err := os.Stat(path + ".1"); err == nil {
		t.Error("a rotation was made")
	}
}

func TestLiveSessionRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	orig := claudeTurns(t, path, 4)
	o := opts()
	o.Force, o.Now = false, time.Now // the file was just written
	if _, err := compact.Compact(context.Background(), path, session.Claude, o); !errors.Is(err, safety.ErrLive) {
		t.Fatalf("err = %v", err)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
}

func TestSummarizer(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.md")
	cases := []struct {
		name, cmd string
		fallback  bool
		errPart   string
	}{
		{"ok", "cat > " + in + "; echo '  SUMMARY FROM THE MODEL  '", false, ""},
		{"crash", "echo oops >&2; exit 3", true, "exit status 3: oops"},
		{"silent", "cat >/dev/null", true, "printed nothing"},
		{"hang", "sleep 30", true, "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			claudeTurns(t, path, 4)
			o := opts()
			o.Keep = 3 // the last turn: its prompt, call and reply
			o.Summarizer, o.SummarizerTimeout = c.cmd, 300*time.Millisecond
			if c.name == "ok" {
				o.SummarizerTimeout = 10 * time.Second
			}
			res, err := compact.Compact(context.Background(), path, session.Claude, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Summarizer.Fallback != c.fallback || !strings.Contains(res.Summarizer.Error, c.errPart) {
				t.Errorf("summarizer %+v", res.Summarizer)
			}
			file := string(mustRead(t, path))
			if c.fallback {
				if res.Summarizer.Kind != "extractive" || !strings.Contains(res.Summary, "The external summarizer failed") ||
					!strings.Contains(file, "The external summarizer failed") {
					t.Errorf("fallback not said in the summary record: %q", res.Summary)
				}
				return
			}
			if res.Summary != "SUMMARY FROM THE MODEL" || res.Summarizer.Kind != "command" {
				t.Errorf("summary %q", res.Summary)
			}
			// the history of the compacted messages only (turns 0–2), in
			// send order, then the instructions
			h := string(mustRead(t, in))
			if !strings.HasPrefix(h, "## Message 1\nRole: user\nContent:\nrequest 0: fix parser step 0\n") ||
				!strings.Contains(h, "## Message 2\nRole: assistant\nContent:\n[tool call Bash: {\"command\":\"go test ./pkg0\"}]\n") ||
				!strings.Contains(h, "## Message 12\nRole: assistant\n") || strings.Contains(h, "## Message 13") ||
				!strings.HasSuffix(h, "## Instructions\n"+strings.SplitN(h, "## Instructions\n", 2)[1]) || strings.Contains(h, "request 3") {
				t.Errorf("history given to the summarizer:\n%.3000s", h)
			}
		})
	}
}

// TestCorruptLinesStayInTheFile: corrupt lines are neither summarised nor
// kept; a Claude Code file keeps every original byte, so none is left out.
func TestCorruptLinesStayInTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	long := strings.Repeat("some words about the parser ", 40)
	orig := writeLines(t, path,
		claudeLine("user", "u1", "", "2026-11-22T03:00:00.000Z", userText("one "+long)),
		`{"type":"assistant","message": GARBAGE`,
		claudeLine("assistant", "a1", "u1", "2026-11-22T03:00:01.000Z", asst("msg_1", textBlock("two "+long))),
		"\x00\x00\x00",
		claudeLine("user", "u2", "a1", "2026-11-22T03:00:02.000Z", userText("three "+long)),
		claudeLine("assistant", "a2", "u2", "2026-11-22T03:00:03.000Z", asst("msg_2", textBlock("four"))))
	res, err := compact.Compact(context.Background(), path, session.Claude, opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.CorruptCompacted != 0 || res.CorruptTail != 0 {
		t.Errorf("lines left out: %d, %d", res.CorruptCompacted, res.CorruptTail)
	}
	if !bytes.HasPrefix(mustRead(t, path), orig) || !bytes.Equal(mustRead(t, res.Original), orig) {
		t.Error("corrupt lines not kept")
	}
	if strings.Contains(res.Summary, "GARBAGE") {
		t.Error("a corrupt line was summarised")
	}
}

func TestTornLastLineIsTerminated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	long := strings.Repeat("some words about the parser ", 40)
	lines := []string{
		claudeLine("user", "u1", "", "2026-11-22T03:00:00.000Z", userText("one "+long)),
		claudeLine("assistant", "a1", "u1", "2026-11-22T03:00:01.000Z", asst("msg_1", textBlock("two "+long))),
		claudeLine("user", "u2", "a1", "2026-11-22T03:00:02.000Z", userText("three")),
		claudeLine("assistant", "a2", "u2", "2026-11-22T03:00:03.000Z", asst("msg_2", textBlock("four"))),
	}
	torn := strings.Join(lines, "\n") + "\n" + `{"parentUuid":"a2","isSid`
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := compact.Compact(context.Background(), path, session.Claude, opts()); err != nil {
		t.Fatal(err)
	}
	b := mustRead(t, path)
	if !bytes.HasPrefix(b, []byte(torn+"\n{")) {
		t.Errorf("the torn line was not terminated before the new lines")
	}
}

func TestNoUserMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	long := strings.Repeat("some words about the parser ", 40)
	writeLines(t, path,
		claudeLine("assistant", "a1", "", "2026-11-22T03:00:00.000Z", asst("msg_1", textBlock("one "+long))),
		claudeLine("user", "r1", "a1", "2026-11-22T03:00:01.000Z", toolResult("x", "out")),
		claudeLine("assistant", "a2", "r1", "2026-11-22T03:00:02.000Z", asst("msg_2", textBlock("two "+long))),
		claudeLine("user", "r2", "a2", "2026-11-22T03:00:03.000Z", toolResult("y", "out")),
		claudeLine("assistant", "a3", "r2", "2026-11-22T03:00:04.000Z", asst("msg_3", textBlock("three"))))
	o := opts()
	o.Keep = 1
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NoUserMessage || !strings.Contains(res.Summary, "No user request in the compacted messages") {
		t.Errorf("no-user session: %v\n%s", res.NoUserMessage, res.Summary)
	}
}

func TestSummaryBudget(t *testing.T) {
	var lines []string
	parent := ""
	for i := 0; i < 300; i++ {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		lines = append(lines,
			claudeLine("user", u, parent, "2026-11-22T03:00:00.000Z", userText(fmt.Sprintf("request %d: %s", i, strings.Repeat("please refactor the parser module ", 20)))),
			claudeLine("assistant", a, u, "2026-11-22T03:00:01.000Z", asst(fmt.Sprintf("msg_%d", i), textBlock(strings.Repeat("done with the refactoring step ", 20)))))
		parent = a
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	writeLines(t, path, lines...)
	o := opts()
	o.SummaryTokens = 500
	o.DryRun = true
	res, err := compact.Compact(context.Background(), path, session.Claude, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.SummaryTokens > 500 || res.SummaryTokens < 250 {
		t.Errorf("summary has %d tokens, budget 500", res.SummaryTokens)
	}
	if !strings.Contains(res.Summary, "request 298") || !strings.Contains(res.Summary, "earlier requests not listed") {
		t.Errorf("budget should drop the oldest requests first:\n%s", res.Summary)
	}
}

// TestInterrupted: a cancelled compaction (Ctrl-C) stops a hanging
// summariser at once and writes nothing.
func TestInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	orig := claudeTurns(t, path, 4)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	o := opts()
	o.Summarizer, o.SummarizerTimeout = "sleep 30", time.Minute
	start := time.Now()
	_, err := compact.Compact(ctx, path, session.Claude, o)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
	if _, err := os.Stat(path + ".1"); err == nil {
		t.Error("a rotation was made")
	}
}

// TestCancelledBeforeReading: a context already cancelled stops the pass.
func TestCancelledBeforeReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var lines []string
	parent := ""
	for i := 0; i < 2000; i++ {
		u := fmt.Sprintf("u%d", i)
		lines = append(lines, claudeLine("user", u, parent, "2026-11-22T03:00:00.000Z", userText(fmt.Sprintf("request %d", i))))
		parent = u
	}
	orig := writeLines(t, path, lines...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := compact.Compact(ctx, path, session.Claude, opts()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if !bytes.Equal(mustRead(t, path), orig) {
		t.Error("file changed")
	}
}
