package compact

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/session"
)

// history is the compacted part rendered for an external summariser, the
// way Kimi renders it for its own summary call: "## Message i", "Role:",
// "Content:" blocks, then the instructions. It is spooled to a temporary
// file so that it never has to fit in memory. Every live message is
// written as it is read; the kept tail's are cut off again at the end.
type history struct {
	f *os.File
	w *bufio.Writer
	n int // messages written
	// off is the number of bytes written so far
	off int64
	// ns[i] is the message count at each offset handed out (for cut)
	ns map[int64]int
}

// maxSummaryOutput bounds what is read from the summariser's stdout.
const maxSummaryOutput = 4 << 20

const summaryInstructions = `## Instructions
Summarise the conversation above so that it can replace it: the assistant will continue from your summary and the most recent messages, which are kept as they are. Write four sections: completed work (the user's requests and what was done), what remains (the last open request, unanswered questions), current state (files modified with their paths, commands run, key findings), and notes (errors met and how they were resolved). Be concise and keep exact file paths, names and error messages. Print only the summary.
`

func openHistory() (*history, error) {
	f, err := os.CreateTemp("", "sessctl-compact-*.md")
	if err != nil {
		return nil, fmt.Errorf("summariser input: %w", err)
	}
	return &history{f: f, w: bufio.NewWriterSize(f, 256<<10), ns: map[int64]int{}}, nil
}

func (h *history) close() {
	if h != nil {
		h.f.Close()
		os.Remove(h.f.Name())
	}
}

// offset is where the next message starts.
func (h *history) offset() int64 {
	h.ns[h.off] = h.n
	return h.off
}

func (h *history) write(s string) {
	n, _ := h.w.WriteString(s)
	h.off += int64(n)
}

func (h *history) add(m *session.Message) error {
	h.n++
	role := string(m.Role)
	if m.Summary {
		role = "user (summary of an earlier compaction)"
	}
	h.write(fmt.Sprintf("## Message %d\nRole: %s\nContent:\n", h.n, role))
	if m.Text != "" {
		h.write(m.Text)
		h.write("\n")
	}
	for _, c := range m.ToolCalls {
		h.write(fmt.Sprintf("[tool call %s: %s]\n", c.Name, c.Input))
	}
	for _, t := range m.ToolResults {
		if t.Output == m.Text {
			continue
		}
		h.write(t.Output)
		h.write("\n")
	}
	h.write("\n")
	return nil
}

// cut drops what was written from off on (the kept tail's messages).
func (h *history) cut(off int64) error {
	if err := h.w.Flush(); err != nil {
		return err
	}
	if err := h.f.Truncate(off); err != nil {
		return err
	}
	if _, err := h.f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	h.w.Reset(h.f)
	h.off, h.n = off, h.ns[off]
	return nil
}

// summarizer runs an external summariser command.
type summarizer struct {
	command string
	timeout time.Duration
}

// errTimeout is the summariser running out of time.
var errTimeout = errors.New("timed out")

// run pipes the history to the command and returns its stdout. Failures
// (exit status, timeout, no output) are errors; the caller falls back to
// the extractive summary.
//
// The command runs in its own process group. Its stdout and stderr are
// files, not pipes: a child it leaves running in the background with
// stdout open cannot keep sessctl waiting, and cannot turn a finished
// summary into a failure. When the command exits, or runs out of time, or
// ctx is cancelled, its whole process group is killed, so that nothing it
// started outlives it.
func (s *summarizer) run(ctx context.Context, h *history) (string, error) {
	h.write(summaryInstructions)
	if err := h.w.Flush(); err != nil {
		return "", err
	}
	if _, err := h.f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	stdout, err := os.CreateTemp("", "sessctl-summary-*.txt")
	if err != nil {
		return "", err
	}
	defer func() { stdout.Close(); os.Remove(stdout.Name()) }()
	stderr, err := os.CreateTemp("", "sessctl-summary-*.err")
	if err != nil {
		return "", err
	}
	defer func() { stderr.Close(); os.Remove(stderr.Name()) }()

	cmd := exec.Command("/bin/sh", "-c", s.command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = h.f, stdout, stderr
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case err = <-done:
		killGroup(cmd) // what it left running
	case <-timer.C:
		killGroup(cmd)
		<-done
		return "", fmt.Errorf("%w after %s", errTimeout, s.timeout)
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return "", ctx.Err()
	}
	if err != nil {
		msg := strings.TrimSpace(readAtMost(stderr, 4<<10))
		if msg != "" {
			return "", fmt.Errorf("%v: %s", err, clip(msg, 200, true))
		}
		return "", err
	}
	out := readAtMost(stdout, maxSummaryOutput)
	if !utf8.ValidString(out) {
		out = strings.ToValidUTF8(out, "\uFFFD")
	}
	out = strings.TrimSpace(out)
	if out == "" {
		return "", errors.New("it printed nothing")
	}
	return out, nil
}

// readAtMost reads the first n bytes of f.
func readAtMost(f *os.File, n int64) string {
	b, _ := io.ReadAll(io.NewSectionReader(f, 0, n))
	return string(b)
}
