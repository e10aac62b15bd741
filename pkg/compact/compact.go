// Package compact shrinks a session offline, the way the agents compact a
// conversation themselves, but without a model: the older part of the
// conversation is replaced by a summary (an extractive one by default, or
// the output of an external command), and the most recent messages are
// kept.
//
// What is compacted is the live context of the agent's conversation model
// (session.Conversation.History): what the client sends when it resumes,
// after its compactions, rollbacks and rewinds. So compact and show never
// disagree: the summary covers the live messages before the split, the kept
// tail is the live messages from the split on.
//
// How the result is written is the agent's (a layout.Layout, from the layout.Writer its
// home implements): for Kimi a fresh context.jsonl (Kimi's clear() layout),
// for Claude Code, Codex and clawdcode the original bytes followed by the
// client's own compaction records. Every write goes through pkg/rewrite, so
// the original is rotated first and the new file replaces it atomically.
//
// The file is read once through History (which reads it as its home needs),
// then only where needed: the kept lines by offset, the last lines
// backwards for the recorded context size.
package compact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/compact/layout"
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
}

// ErrNothingToDo is matched by every reason not to compact (exit 1):
// nothing before the kept tail, nothing new since the last compaction, a
// result that would not be smaller.
var ErrNothingToDo = errors.New("nothing to compact")

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

// Is matches ErrTooShort and ErrNothingToDo.
func (e *TooShortError) Is(target error) bool {
	return target == ErrTooShort || target == ErrNothingToDo
}

// NotWorthError says why a compaction was not written although the session
// has messages before the kept tail.
type NotWorthError struct {
	Path   string
	Reason string
}

func (e *NotWorthError) Error() string {
	return fmt.Sprintf("%s: %s (nothing was written)", e.Path, e.Reason)
}

// Is matches ErrNothingToDo.
func (e *NotWorthError) Is(target error) bool { return target == ErrNothingToDo }

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
	Path string `json:"path"`
	// NewPath is where the session is after the compaction when it moved:
	// a compressed rollout becomes its plain file.
	NewPath           string        `json:"new_path,omitempty"`
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
	// CorruptCompacted and CorruptTail count the lines the new file leaves
	// out because the client cannot use them (Kimi: corrupt or rejected
	// lines), before the split and in the tail; the rotation keeps them.
	// Files that keep every original byte (Claude Code, Codex, clawdcode)
	// leave nothing out.
	CorruptCompacted int          `json:"corrupt_lines_compacted"`
	CorruptTail      int          `json:"corrupt_lines_tail"`
	NoUserMessage    bool         `json:"no_user_message"`
	Tokens           Tokens       `json:"tokens"`
	FilesIncluded    []string     `json:"files_included"`
	Summarizer       Summarizer   `json:"summarizer"`
	Summary          string       `json:"summary"`
	SummaryTokens    int          `json:"summary_tokens"`
	Tail             TailStats    `json:"tail"`
	Kept             []KeptRecord `json:"kept"`
	OriginalSize     int64        `json:"original_size"`
	NewSize          int64        `json:"new_size"`
	// Original is where the original bytes are now (the rotation).
	Original      string `json:"original"`
	AppendedLines int    `json:"appended_lines"` // lines added (Claude Code, Codex, clawdcode)
	// Notes say how the result was written, when the agent's layout has a
	// choice (Claude Code: the tail by reference or copied).
	Notes   []string `json:"notes,omitempty"`
	Seconds float64  `json:"seconds"`
	// Warnings are what the rewrite has to say (rewrite.Txn.Notes): bytes
	// a writer appended meanwhile, stale leftovers it removed.
	Warnings []string `json:"warnings,omitempty"`
}

// Compact compacts the session file path of agent. ctx stops it (nothing
// is written) and the summariser.
func Compact(ctx context.Context, path string, agent session.Agent, opt Options) (*Result, error) {
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
	home := session.HomeOf(agent)
	wr, ok := session.As[layout.Writer](agent)
	if home == nil || !ok {
		return nil, fmt.Errorf("%s: cannot compact a file of %s format", path, agent)
	}
	var tx *rewrite.Txn
	if !opt.DryRun {
		var err error
		tx, err = rewrite.Begin(ctx, path, agent, rewrite.Options{Force: opt.Force, Quiet: opt.Quiet, Now: opt.Now, Fault: opt.Fault})
		if err != nil {
			return nil, err
		}
		defer tx.Close()
	}
	src, err := openSource(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	lay, err := wr.CompactLayout(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}

	// the live context, split; the compacted part feeds the summary
	recorded, model, err := lastRecorded(ctx, src, home)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	counter, err := newCounter(ctx, tokens.O200kBase)
	if err != nil {
		return nil, err
	}
	st := &passState{keep: opt.Keep, layout: lay, count: counter, ex: newExtractor()}
	if opt.Summarizer != "" {
		if st.hist, err = openHistory(); err != nil {
			return nil, err
		}
		defer st.hist.close()
	}
	sp, err := livePass(ctx, home, path, st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if sp.messages <= opt.Keep {
		return nil, &TooShortError{Path: path, Messages: sp.messages, Keep: opt.Keep}
	}
	if !sp.newContent {
		return nil, &NotWorthError{Path: path, Reason: "nothing new since the last compaction: the messages before the kept tail are its summary and injected context"}
	}
	if model == "" {
		model = sp.model
	}
	if model == "" {
		model = home.DefaultModel()
	}
	// a model that is not o200k_base's is counted again with its encoding
	enc, exact := tokens.EncodingForModel(model)
	if enc != tokens.O200kBase {
		if counter, err = newCounter(ctx, enc); err != nil {
			return nil, err
		}
	}
	first := sp.tail[0]
	res := &Result{Path: path, Agent: agent, DryRun: opt.DryRun, Keep: opt.Keep, Messages: sp.messages,
		CompactedMessages: sp.compacted, KeptMessages: sp.messages - sp.compacted,
		ActiveStartLine: sp.activeStart, SplitLine: first.msg.Line, SplitOffset: first.msg.Offset,
		NoUserMessage: !sp.sawUser, FilesIncluded: []string{}}
	res.Tokens.Encoding, res.Tokens.Exact = string(enc), exact
	res.Tokens.Before = sp.before
	if recorded >= 0 {
		v := recorded
		res.Tokens.RecordedBefore = &v
	}

	// the summary
	res.Summarizer.Kind = "extractive"
	var summary string
	files := st.ex.files(5)
	if opt.Summarizer != "" {
		if err := st.hist.cut(first.spool); err != nil {
			return nil, err
		}
		res.Summarizer.Kind, res.Summarizer.Command = "command", opt.Summarizer
		t0 := time.Now()
		out, err := (&summarizer{command: opt.Summarizer, timeout: opt.SummarizerTimeout}).run(ctx, st.hist)
		res.Summarizer.Seconds = time.Since(t0).Seconds()
		if ctx.Err() != nil {
			return nil, ctx.Err()
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
		summary = st.ex.render(counter, opt.SummaryTokens, res.CompactedMessages, note)
	}
	res.Summary = summary
	res.SummaryTokens = counter.Count(summary)
	for _, fi := range files {
		res.FilesIncluded = append(res.FilesIncluded, fi.path)
	}

	// the tail: its lines read again, outputs shortened, orphan results
	// dropped, unanswered calls answered
	tail, err := buildTail(src, lay, sp.tail, &truncator{count: counter, max: opt.MaxToolOutput}, res)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	res.Tail.Records = len(tail)
	res.Kept = []KeptRecord{}
	for _, it := range tail {
		text := it.Text
		if text == "" && len(it.Calls) > 0 {
			text = it.Calls[0].Name + " " + it.Calls[0].Input
		}
		if text == "" && len(it.Results) > 0 {
			text = it.Results[0].Output
		}
		res.Kept = append(res.Kept, KeptRecord{Line: it.Line, Role: string(it.Role), Text: clip(text, 80, true), Aborted: it.Aborted})
	}

	c := &layout.Compaction{
		Path: path, Summary: summary, Tail: tail, DroppedResults: res.Tail.DroppedToolResults, Files: res.FilesIncluded,
		Now: opt.Now().UTC(), PreTokens: int64(sp.before), RecordedBefore: recorded, SummaryTokens: res.SummaryTokens,
		SplitOffset: first.msg.Offset,
	}
	if recorded > 0 {
		c.PreTokens = recorded
	}
	c.PostTokens = int64(counter.Count(lay.SummaryText(c))) + int64(tailTokens(counter, tail))
	res.Tokens.After = int(c.PostTokens)
	if res.Tokens.Before > 0 {
		res.Tokens.SavedPercent = float64(int((1-float64(res.Tokens.After)/float64(res.Tokens.Before))*1000)) / 10
	}
	if res.Tokens.After >= res.Tokens.Before {
		return res, &NotWorthError{Path: path, Reason: fmt.Sprintf("the result would be larger than the live context (%d tokens for %d): the summary outweighs what it replaces; a smaller --keep or --summary-tokens may help",
			res.Tokens.After, res.Tokens.Before)}
	}
	out, err := lay.Write(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	res.CorruptCompacted, res.CorruptTail = out.LeftOutCompacted, out.LeftOutTail
	res.Notes = out.Notes
	if out.Recorded >= 0 {
		v := out.Recorded
		res.Tokens.RecordedAfter = &v
	}
	if opt.DryRun {
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	rr, err := tx.Replace(ctx, func(orig io.Reader, dst io.Writer) error {
		if out.Append {
			lb := &lastByte{r: orig}
			n, err := io.Copy(dst, lb)
			if err != nil {
				return err
			}
			// the content the plan was made from (for a compressed file the
			// decompressed size, not the size on disk)
			if n != src.size {
				return fmt.Errorf("%w (%d bytes, then %d)", errChanged, src.size, n)
			}
			if n > 0 && lb.last != '\n' {
				if _, err := io.WriteString(dst, "\n"); err != nil {
					return err
				}
			}
		}
		for _, l := range out.Lines {
			if _, err := dst.Write(append(l[:len(l):len(l)], out.EOL...)); err != nil {
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
	res.NewPath = rr.NewPath
	res.Warnings = tx.Notes(rr)
	res.OriginalSize, res.NewSize = rr.OldSize, rr.NewSize
	if out.Append {
		res.AppendedLines = len(out.Lines)
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// errChanged: the file is not what was read.
var errChanged = errors.New("the file changed while it was read")

// lastByte passes a reader through and remembers its last byte.
type lastByte struct {
	r    io.Reader
	last byte
}

func (l *lastByte) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	if n > 0 {
		l.last = b[n-1]
	}
	return n, err
}

// lastRecorded reads the file backwards for the context size it recorded
// last (-1 if none), and the model it names last, looking a little further
// back than the record for the model.
func lastRecorded(ctx context.Context, src layout.Source, home session.Home) (int64, string, error) {
	recorded, model := int64(-1), ""
	after := -1 // lines read since the recorded size was found
	err := src.Backward(ctx, func(off int64, raw []byte) (bool, error) {
		l := layout.RawLine(off, raw)
		r := session.Decode(home, &l)
		if model == "" && r.Model != "" && r.Model != "<synthetic>" && !r.Sidechain {
			model = r.Model
		}
		if recorded < 0 {
			if v, _ := session.RecordedContext(&r); v >= 0 {
				recorded, after = v, 0
			}
		} else {
			after++
		}
		return recorded >= 0 && (model != "" || after >= modelLookBehind), nil
	})
	return recorded, model, err
}

// modelLookBehind is how many lines before the last recorded size the
// model is looked for (Codex names it in each turn's turn_context).
const modelLookBehind = 1000

// buildTail reads the kept messages' lines and makes the tail.
func buildTail(src layout.Source, lay layout.Layout, entries []entry, tr *truncator, res *Result) ([]*layout.Item, error) {
	var items []*layout.Item
	for i := range entries {
		e := &entries[i]
		raw, err := src.LineAt(e.msg.Offset)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", e.msg.Line, err)
		}
		it, err := lay.Item(&e.msg, raw, e.part)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", e.msg.Line, err)
		}
		if it == nil {
			continue
		}
		it.Start, it.Line, it.Offset = e.start, e.msg.Line, e.msg.Offset
		if tr.max > 0 && len(it.Results) > 0 {
			if n := lay.Shorten(it, tr.shorten); n > 0 {
				res.Tail.TruncatedToolOutputs += n
				// the counted text follows the shortened outputs
				for i := range it.Results {
					if s, ok := tr.shorten(it.Results[i].Output); ok {
						if it.Text == it.Results[i].Output {
							it.Text = s
						}
						it.Results[i].Output = s
					}
				}
			}
		}
		items = append(items, it)
	}
	return finishTail(lay, items, res), nil
}

// finishTail drops tool results whose call was compacted away and gives
// every kept call without a result an aborted one, before the next unit.
func finishTail(lay layout.Layout, tail []*layout.Item, res *Result) []*layout.Item {
	calls := map[string]bool{}
	for _, it := range tail {
		for _, c := range it.Calls {
			if c.ID != "" {
				calls[c.ID] = true
			}
		}
	}
	var kept []*layout.Item
	answered := map[string]bool{}
	for _, it := range tail {
		if len(it.Results) > 0 && len(it.Calls) == 0 {
			ok := false
			for _, r := range it.Results {
				if calls[r.CallID] {
					ok = true
				}
			}
			if !ok {
				res.Tail.DroppedToolResults++
				continue
			}
		}
		for _, r := range it.Results {
			answered[r.CallID] = true
		}
		kept = append(kept, it)
	}
	var out []*layout.Item
	var pending []session.ToolCall
	var from *layout.Item
	flush := func() {
		for _, c := range pending {
			out = append(out, lay.Aborted(c, from))
			res.Tail.AbortedToolCalls++
		}
		pending = nil
	}
	for _, it := range kept {
		if it.Start {
			flush()
		}
		out = append(out, it)
		for _, c := range it.Calls {
			if c.ID != "" && !answered[c.ID] {
				pending = append(pending, c)
				from = it
			}
		}
	}
	flush()
	return out
}

// tailTokens counts the text of the kept tail.
func tailTokens(c *tokens.Counter, tail []*layout.Item) int {
	n := 0
	for _, it := range tail {
		n += recordTokens(c, it.Text, it.Calls, it.Results)
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

// newCounter is tokens.NewCounter, given up when ctx is done first: loading
// a vocabulary takes a while (about 1.5 s under the race detector) and does
// not look at ctx, and Ctrl-C must stop compact within 200 ms. Nothing has
// been written at that point; the load finishes in the background.
func newCounter(ctx context.Context, enc tokens.Encoding) (*tokens.Counter, error) {
	type loaded struct {
		c   *tokens.Counter
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		c, err := tokens.NewCounter(enc)
		done <- loaded{c, err}
	}()
	select {
	case l := <-done:
		return l.c, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// clip shortens s to at most n runes (on one line when oneLine), marking
// the cut with "…".
// Only the first n+1 runes (collapsed) are looked at: a message can be a
// 20 MB paste, and collapsing and converting all of it cost compact about
// 7× its size (issue 11).
func clip(s string, n int, oneLine bool) string {
	s = strings.TrimSpace(s)
	if oneLine {
		s = collapsedHead(s, n+1)
	} else {
		s = runeHead(s, n+1)
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n])) + "…"
}

// runeHead is s up to its first max runes (a byte prefix of s).
func runeHead(s string, max int) string {
	k := 0
	for i := range s {
		if k == max {
			return s[:i]
		}
		k++
	}
	return s
}

// collapsedHead is the first max runes of strings.Join(strings.Fields(s),
// " "), without collapsing more of s than that.
func collapsedHead(s string, max int) string {
	var b strings.Builder
	k, space := 0, false
	for i, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			if k == max {
				break
			}
			b.WriteByte(' ')
			k++
			space = false
		}
		if k == max {
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		k++
	}
	return b.String()
}
