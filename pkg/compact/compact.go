// Package compact shrinks a session offline, the way the agents compact a
// conversation themselves, but without a model: the older part of the
// conversation is replaced by a summary (an extractive one by default, or
// the output of an external command), and the most recent messages are
// kept.
//
// The result is written in the client's own compaction layout: for Kimi a
// fresh context.jsonl after rotating the old one (Kimi's clear() layout),
// for Claude Code, Codex and clawdcode the original bytes followed by the
// client's compaction records (their compaction is append-only), always
// through pkg/rewrite, so the original is rotated first and the new file
// replaces it atomically.
//
// The file is read twice (find the split, then summarise and collect the
// tail); only the kept tail is held in memory, with its tool outputs
// shortened as they are read.
package compact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/rewrite"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// Defaults of the options.
const (
	DefaultKeep              = 2
	DefaultSummaryTokens     = 2000
	DefaultMaxToolOutput     = 4000
	DefaultSummarizerTimeout = 120 * time.Second
)

// Options control a compaction.
type Options struct {
	// Keep is how many user/assistant messages the kept tail starts back
	// from the end (Kimi keeps 2).
	Keep int
	// SummaryTokens bounds the extractive summary.
	SummaryTokens int
	// MaxToolOutput shortens kept tool outputs longer than this many
	// tokens (0: never).
	MaxToolOutput int
	// Summarizer, when set, is a shell command that gets the history to
	// compact on stdin and prints the summary.
	Summarizer        string
	SummarizerTimeout time.Duration
	// DryRun computes everything and writes nothing.
	DryRun bool
	// Force, Quiet: see rewrite.Options.
	Force bool
	Quiet time.Duration
	Now   func() time.Time
	// Fault is passed to rewrite (tests only).
	Fault func(step string) error
	// Ctx, when set, stops the compaction (nothing is written) and the
	// summariser when it is cancelled.
	Ctx context.Context
}

// ErrTooShort is returned when there is nothing before the kept tail.
var ErrTooShort = errors.New("too short to compact")

// TooShortError says why a session cannot be compacted.
type TooShortError struct {
	Path     string
	Messages int // user/assistant messages in the live context
	Keep     int
}

func (e *TooShortError) Error() string {
	return fmt.Sprintf("%s: too short to compact: %d user/assistant messages in the live context, and --keep %d keeps them all (nothing was written)",
		e.Path, e.Messages, e.Keep)
}

// Is matches ErrTooShort.
func (e *TooShortError) Is(target error) bool { return target == ErrTooShort }

// Tokens are the before/after figures.
type Tokens struct {
	Before       int     `json:"before"`
	After        int     `json:"after"`
	SavedPercent float64 `json:"saved_percent"`
	Encoding     string  `json:"encoding"`
	Exact        bool    `json:"exact"`
	// RecordedBefore is the context size the file itself recorded last
	// (Kimi _usage, Claude's last usage, Codex last_token_usage, clawdcode
	// postTokens), or nil.
	RecordedBefore *int64 `json:"recorded_before"`
	// RecordedAfter is what sessctl recorded in the new file (Kimi _usage,
	// Claude/clawdcode postTokens, Codex token_count), or nil.
	RecordedAfter *int64 `json:"recorded_after"`
}

// Summarizer says how the summary was made.
type Summarizer struct {
	Kind     string  `json:"kind"` // "extractive" or "command"
	Command  string  `json:"command,omitempty"`
	Fallback bool    `json:"fallback"`        // the command failed; the extractive summary was used
	Error    string  `json:"error,omitempty"` // why the command failed
	Seconds  float64 `json:"seconds"`
}

// TailStats says what was done to the kept tail.
type TailStats struct {
	Records              int `json:"records"`
	DroppedToolResults   int `json:"dropped_tool_results"`
	AbortedToolCalls     int `json:"aborted_tool_calls"`
	TruncatedToolOutputs int `json:"truncated_tool_outputs"`
}

// KeptRecord is one record of the kept tail, for previews.
type KeptRecord struct {
	Line    int    `json:"line"` // in the original file; 0 for a result sessctl added
	Role    string `json:"role"`
	Text    string `json:"text"` // the start of its text, or of its tool calls
	Aborted bool   `json:"aborted,omitempty"`
}

// Result describes a compaction (done, or planned with DryRun).
type Result struct {
	Path              string        `json:"path"`
	Agent             session.Agent `json:"agent"`
	DryRun            bool          `json:"dry_run"`
	Written           bool          `json:"written"`
	Keep              int           `json:"keep"`
	Messages          int           `json:"messages"`           // user/assistant messages in the live context
	CompactedMessages int           `json:"compacted_messages"` // of them, summarised away
	KeptMessages      int           `json:"kept_messages"`
	ActiveStartLine   int           `json:"active_start_line"` // first line of the live context (after an earlier compaction)
	SplitLine         int           `json:"split_line"`        // first line of the kept tail
	SplitOffset       int64         `json:"split_offset"`
	CorruptCompacted  int           `json:"corrupt_lines_compacted"` // corrupt lines in the compacted part (kept in the original)
	CorruptTail       int           `json:"corrupt_lines_tail"`
	NoUserMessage     bool          `json:"no_user_message"`
	Tokens            Tokens        `json:"tokens"`
	FilesIncluded     []string      `json:"files_included"`
	Summarizer        Summarizer    `json:"summarizer"`
	Summary           string        `json:"summary"`
	SummaryTokens     int           `json:"summary_tokens"`
	Tail              TailStats     `json:"tail"`
	Kept              []KeptRecord  `json:"kept"`
	OriginalSize      int64         `json:"original_size"`
	NewSize           int64         `json:"new_size"`
	// Original is where the original bytes are now (the rotation).
	Original      string  `json:"original"`
	AppendedLines int     `json:"appended_lines"` // lines added (Claude Code, Codex, clawdcode)
	Seconds       float64 `json:"seconds"`
	// Warnings are what the rewrite has to say (rewrite.Txn.Notes): bytes
	// a writer appended meanwhile, stale leftovers it removed.
	Warnings []string `json:"warnings,omitempty"`
}

// Compact compacts the session file path of agent.
func Compact(path string, agent session.Agent, opt Options) (*Result, error) {
	start := time.Now()
	if opt.Keep <= 0 {
		opt.Keep = DefaultKeep
	}
	if opt.SummaryTokens <= 0 {
		opt.SummaryTokens = DefaultSummaryTokens
	}
	if opt.SummarizerTimeout <= 0 {
		opt.SummarizerTimeout = DefaultSummarizerTimeout
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Ctx == nil {
		opt.Ctx = context.Background()
	}
	f := session.FormatFor(agent)
	if f == nil {
		return nil, fmt.Errorf("%s: cannot compact a file of unknown format", path)
	}
	var tx *rewrite.Txn
	if !opt.DryRun {
		var err error
		tx, err = rewrite.Begin(opt.Ctx, path, agent, rewrite.Options{Force: opt.Force, Quiet: opt.Quiet, Now: opt.Now, Fault: opt.Fault})
		if err != nil {
			return nil, err
		}
		defer tx.Close()
	}

	w := newWriter(agent, path)
	plan, err := findSplit(opt.Ctx, path, f, opt.Keep, w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if u, ok := w.(interface{ usable() error }); ok {
		if err := u.usable(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	res := &Result{Path: path, Agent: agent, DryRun: opt.DryRun, Keep: opt.Keep, Messages: plan.messages,
		ActiveStartLine: plan.activeStart, FilesIncluded: []string{}}
	if plan.messages <= opt.Keep {
		return nil, &TooShortError{Path: path, Messages: plan.messages, Keep: opt.Keep}
	}
	res.CompactedMessages = plan.messages - opt.Keep
	res.KeptMessages = opt.Keep
	res.SplitLine, res.SplitOffset = plan.split, plan.splitOffset

	enc, exact := tokens.EncodingForModel(plan.model)
	counter, err := tokens.NewCounter(enc)
	if err != nil {
		return nil, err
	}
	res.Tokens.Encoding, res.Tokens.Exact = string(enc), exact
	if plan.recorded >= 0 {
		v := plan.recorded
		res.Tokens.RecordedBefore = &v
	}

	p := &pass2{plan: plan, opt: opt, w: w, count: counter, ex: newExtractor(), res: res}
	if opt.Summarizer != "" {
		if err := p.openHistory(); err != nil {
			return nil, err
		}
		defer p.closeHistory()
	}
	if err := p.run(path, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	res.NoUserMessage = !p.sawUser

	// the summary
	res.Summarizer.Kind = "extractive"
	var summary string
	files := p.ex.files(5)
	if opt.Summarizer != "" {
		res.Summarizer.Kind, res.Summarizer.Command = "command", opt.Summarizer
		t0 := time.Now()
		out, err := p.runSummarizer()
		res.Summarizer.Seconds = time.Since(t0).Seconds()
		if opt.Ctx.Err() != nil {
			return nil, opt.Ctx.Err()
		}
		if err != nil {
			res.Summarizer.Kind, res.Summarizer.Fallback, res.Summarizer.Error = "extractive", true, err.Error()
		} else {
			summary = out
		}
	}
	if summary == "" {
		note := ""
		if res.Summarizer.Fallback {
			note = "The external summarizer failed (" + res.Summarizer.Error + "); this is sessctl's extractive summary instead."
		}
		summary = p.ex.render(counter, opt.SummaryTokens, res.CompactedMessages, note)
	}
	res.Summary = summary
	res.SummaryTokens = counter.Count(summary)
	for _, fi := range files {
		res.FilesIncluded = append(res.FilesIncluded, fi.path)
	}

	// the tail: drop orphan results, answer unanswered calls
	tail := p.finishTail()
	res.Tail.Records = len(tail)
	res.Kept = []KeptRecord{}
	for _, it := range tail {
		text := it.text
		if text == "" && len(it.calls) > 0 {
			text = it.calls[0].Name + " " + it.calls[0].Input
		}
		if text == "" && len(it.results) > 0 {
			text = it.results[0].Output
		}
		res.Kept = append(res.Kept, KeptRecord{Line: it.line, Role: string(it.role), Text: clip(text, 80, true), Aborted: it.aborted})
	}

	c := &compaction{
		path: path, summary: summary, tail: tail, files: res.FilesIncluded, now: opt.Now().UTC(),
		preTokens: int64(p.before), recordedBefore: plan.recorded, summaryTokens: res.SummaryTokens,
	}
	if plan.recorded > 0 {
		c.preTokens = plan.recorded
	}
	c.postTokens = int64(counter.Count(w.summaryText(c))) + int64(tailTokens(counter, tail))
	res.Tokens.Before = p.before
	res.Tokens.After = int(c.postTokens)
	if res.Tokens.Before > 0 {
		res.Tokens.SavedPercent = float64(int((1-float64(res.Tokens.After)/float64(res.Tokens.Before))*1000)) / 10
	}
	lines, recordedAfter, err := w.lines(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if recordedAfter >= 0 {
		res.Tokens.RecordedAfter = &recordedAfter
	}
	if opt.DryRun {
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
	if err := opt.Ctx.Err(); err != nil {
		return nil, err
	}

	eol := w.eol()
	rr, err := tx.Replace(opt.Ctx, func(orig io.Reader, dst io.Writer) error {
		if w.appends() {
			n, err := io.Copy(dst, orig)
			if err != nil {
				return err
			}
			if n > 0 && !plan.endsNL {
				if _, err := io.WriteString(dst, "\n"); err != nil {
					return err
				}
			}
			if n != plan.size {
				return fmt.Errorf("the file changed while it was read (%d bytes, then %d)", plan.size, n)
			}
		}
		for _, l := range lines {
			if _, err := dst.Write(append(l, eol...)); err != nil {
				return err
			}
		}
		return nil
	})
	if rr != nil && rr.Rotation != nil {
		res.Original = rr.Rotation.Path
	}
	if err != nil {
		return res, err
	}
	res.Written = true
	res.Warnings = tx.Notes(rr)
	res.OriginalSize, res.NewSize = rr.OldSize, rr.NewSize
	if w.appends() {
		res.AppendedLines = len(lines)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// compaction is what the writers get.
type compaction struct {
	path           string
	summary        string
	tail           []*titem
	files          []string
	now            time.Time
	preTokens      int64
	postTokens     int64
	summaryTokens  int
	recordedBefore int64
}

// tailTokens counts the text of the kept tail.
func tailTokens(c *tokens.Counter, tail []*titem) int {
	n := 0
	for _, it := range tail {
		n += it.tokens(c)
	}
	return n
}

// recordTokens counts what the model sees of a record: its text, its tool
// calls and its tool results (thinking is not counted).
func recordTokens(c *tokens.Counter, text string, calls []session.ToolCall, results []session.ToolResult) int {
	n := 0
	if text != "" {
		n += c.Count(text)
	}
	for _, tc := range calls {
		n += c.Count(tc.Name) + c.Count(tc.Input)
	}
	for _, tr := range results {
		if tr.Output != text {
			n += c.Count(tr.Output)
		}
	}
	return n
}

// clip shortens s to at most n runes (on one line when oneLine), marking
// the cut with "…".
func clip(s string, n int, oneLine bool) string {
	s = strings.TrimSpace(s)
	if oneLine {
		s = strings.Join(strings.Fields(s), " ")
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n])) + "…"
}
