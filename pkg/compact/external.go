package compact

import (
	"bufio"
	"bytes"
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
// file so that it never has to fit in memory.
type history struct {
	f *os.File
	w *bufio.Writer
	n int
}

// maxSummaryOutput bounds what is read from the summariser's stdout.
const maxSummaryOutput = 4 << 20

const summaryInstructions = `## Instructions
Summarise the conversation above so that it can replace it: the assistant will continue from your summary and the most recent messages, which are kept as they are. Write four sections: completed work (the user's requests and what was done), what remains (the last open request, unanswered questions), current state (files modified with their paths, commands run, key findings), and notes (errors met and how they were resolved). Be concise and keep exact file paths, names and error messages. Print only the summary.
`

func (p *pass2) openHistory() error {
	f, err := os.CreateTemp("", "sessctl-compact-*.md")
	if err != nil {
		return fmt.Errorf("summariser input: %w", err)
	}
	p.hist = &history{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	return nil
}

func (p *pass2) closeHistory() {
	if p.hist != nil {
		p.hist.f.Close()
		os.Remove(p.hist.f.Name())
	}
}

func (h *history) add(r *session.Record) error {
	h.n++
	role := string(r.Role)
	if r.Kind == session.KindCompaction {
		role = "user (summary of an earlier compaction)"
	}
	fmt.Fprintf(h.w, "## Message %d\nRole: %s\nContent:\n", h.n, role)
	if r.Text != "" {
		h.w.WriteString(r.Text)
		h.w.WriteByte('\n')
	}
	for _, c := range r.ToolCalls {
		fmt.Fprintf(h.w, "[tool call %s: %s]\n", c.Name, c.Input)
	}
	for _, t := range r.ToolResults {
		if t.Output == r.Text {
			continue
		}
		h.w.WriteString(t.Output)
		h.w.WriteByte('\n')
	}
	_, err := h.w.WriteString("\n")
	return err
}

// runSummarizer pipes the history to the command and returns its stdout.
// Failures (exit status, timeout, no output) are errors; the caller falls
// back to the extractive summary.
func (p *pass2) runSummarizer() (string, error) {
	h := p.hist
	if _, err := h.w.WriteString(summaryInstructions); err != nil {
		return "", err
	}
	if err := h.w.Flush(); err != nil {
		return "", err
	}
	if _, err := h.f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(p.opt.Ctx, p.opt.SummarizerTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", p.opt.Summarizer)
	cmd.Stdin = h.f
	var out limitedBuffer
	out.max = maxSummaryOutput
	var stderr limitedBuffer
	stderr.max = 4 << 10
	cmd.Stdout, cmd.Stderr = &out, &stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if p.opt.Ctx.Err() != nil {
		return "", p.opt.Ctx.Err()
	}
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("timed out after %s", p.opt.SummarizerTimeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("%v: %s", err, clip(msg, 200, true))
		}
		return "", err
	}
	s := out.String()
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("it printed nothing")
	}
	return s, nil
}

// limitedBuffer keeps the first max bytes written to it and discards the
// rest (without failing the writer, so the command is not killed by
// SIGPIPE).
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
