package kimicode

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// The conversation Kimi Code sends on resume (kimi-code.md §4) is folded
// from the main wire in file order, as Kimi Code 2.1.0's replay does:
//
//   - context.append_message is a message as it is (user prompts, injected
//     <system-reminder> messages, …); while tool calls are pending it is
//     deferred until their results are in;
//   - context.append_loop_event: step.begin opens an assistant message,
//     content.part and tool.call of that step grow it, step.end seals it
//     (an empty one without tool calls is dropped; an interrupted or
//     failed step stays open until the next step); tool.result answers a
//     pending call with a tool message;
//   - a step that settles with calls unanswered gets Kimi Code's
//     "interrupted" result for each (never written to the file);
//   - context.undo removes the last count prompts and what followed them;
//     context.clear empties the history.
//
// Tool results reach the model rendered (renderToolResultForModel): a
// "Wall time: S.sss seconds" header for Bash, Agent, AgentSwarm,
// FetchURL, Glob, Grep and WebSearch results, the error and empty-output
// status lines, and the result's note.

const (
	toolErrorStatus      = "<system>ERROR: Tool execution failed.</system>"
	toolEmptyStatus      = "<system>Tool output is empty.</system>"
	toolEmptyErrorStatus = "<system>ERROR: Tool execution failed. Tool output is empty.</system>"
	toolOutputEmptyText  = "Tool output is empty."
	// interruptedOutput is what Kimi Code sends for a tool call whose
	// result was never recorded (TOOL_INTERRUPTED_ON_RESUME_OUTPUT).
	interruptedOutput = "Tool execution was interrupted before its result was recorded. Do not assume the tool completed successfully."
)

// wallTimeTools are the tools whose results carry a wall-time header.
var wallTimeTools = map[string]bool{
	"Agent": true, "AgentSwarm": true, "Bash": true, "FetchURL": true, "Glob": true, "Grep": true, "WebSearch": true,
}

// renderToolResult is the text the model receives for a tool result.
func renderToolResult(output string, isError bool, note string, durationMs *float64) string {
	var text string
	switch {
	case isError && output == "":
		text = toolEmptyErrorStatus
	case isError:
		text = toolErrorStatus + "\n" + output
	case strings.TrimSpace(output) == "" || strings.TrimSpace(output) == toolOutputEmptyText:
		text = toolEmptyStatus
	default:
		text = output
	}
	if durationMs != nil {
		text = fmt.Sprintf("Wall time: %.3f seconds\n", *durationMs/1000) + text
	}
	if note != "" {
		text += "\n" + note
	}
	return text
}

// fmsg is a message of the fold with where it came from.
type fmsg struct {
	// m is the message without the words its srcs hold: Text, Thinking,
	// the calls' inputs and the results are read again when it is given
	// (give), so that the fold holds no text of a wire that may be
	// gigabytes
	m        session.Message
	srcs     []wsrc
	prompt   bool   // an undo anchor
	promptID string // a prompt's id (message.id)
	owner    string // an injection's ownerPromptId
	inject   bool
	summary  bool
	// userOrigin: a message of origin "user", which Kimi Code's request
	// projection merges with the next such message (canMergeUserMessage)
	userOrigin bool
	// skip: a message the caller does not want (wanted), not given
	skip bool
}

// srcKind says what a line gives the message that reads it again.
type srcKind uint8

const (
	srcMessage srcKind = iota // context.append_message: the message's words, calls and result
	srcPart                   // content.part: text or thinking, appended
	srcCall                   // tool.call: the input of the call at wsrc.call
	srcResult                 // tool.result: the result, rendered
	srcSummary                // context.apply_compaction: the summary
)

// wsrc is a line that holds some of a message's words.
type wsrc struct {
	line session.LineAt
	kind srcKind
	wall bool  // srcResult: the tool's results carry a wall-time header
	hit  bool  // the fold's want took the line (HistoryOptions.Want)
	call int32 // srcCall: the call's place in ToolCalls
}

// from records that the record being folded holds some of m's words.
func (f *fold) from(m *fmsg, kind srcKind) *wsrc {
	l := &f.cur.Line
	m.srcs = append(m.srcs, wsrc{line: session.LineAt{Num: l.Num, Offset: l.Offset, Len: l.Len}, kind: kind,
		hit: f.want != nil && f.want(l.Raw)})
	return &m.srcs[len(m.srcs)-1]
}

// fold is Kimi Code's replay of a wire.
type fold struct {
	msgs     []*fmsg
	all      []*fmsg // every message in file order (HistoryOptions.All)
	open     *fmsg
	openStep string
	openVac  bool
	pending  []string          // tool call ids in call order
	names    map[string]string // pending call id -> tool name
	deferred []*fmsg
	turns    []session.Turn
	at       session.TurnIndex
	cur      *session.Record
	// turnAt is the offset of the last turn.prompt record, -1 after a
	// prompt: a turn's records start there (its Cut)
	turnAt int64
	// want is HistoryOptions.Want (nil: every message is wanted)
	want func(raw []byte) bool
}

func newFold() *fold { return &fold{names: map[string]string{}, turnAt: -1} }

func (f *fold) msg(role session.Role) *fmsg {
	r := f.cur
	return &fmsg{m: session.Message{Turn: f.at.At(r.Line.Offset), Role: role, Line: r.Line.Num, Offset: r.Line.Offset,
		Timestamp: r.Timestamp}}
}

func (f *fold) push(m *fmsg) {
	f.msgs = append(f.msgs, m)
	f.all = append(f.all, m)
}

func (f *fold) flushDeferred() {
	if len(f.pending) > 0 {
		return
	}
	for _, m := range f.deferred {
		f.push(m)
	}
	f.deferred = nil
}

func (f *fold) closePending() {
	if len(f.pending) == 0 {
		return
	}
	for _, id := range f.pending {
		m := f.msg(session.RoleTool)
		m.m.Text = interruptedOutput
		m.m.ToolResults = []session.ToolResult{{CallID: id, Output: interruptedOutput, IsError: true}}
		m.m.Synthetic = true
		f.push(m)
	}
	f.pending, f.names = nil, map[string]string{}
	f.flushDeferred()
}

func (f *fold) settleOpen() {
	if f.open == nil {
		return
	}
	f.closePending()
	if len(f.open.m.ToolCalls) == 0 && f.openVac {
		f.remove(f.open)
	}
	f.open, f.openStep = nil, ""
}

func (f *fold) remove(m *fmsg) {
	for i, x := range f.msgs {
		if x == m {
			f.msgs = append(f.msgs[:i], f.msgs[i+1:]...)
			break
		}
	}
	for i, x := range f.all {
		if x == m {
			f.all = append(f.all[:i], f.all[i+1:]...)
			break
		}
	}
}

func (f *fold) reset() {
	f.open, f.openStep, f.openVac = nil, "", true
	f.pending, f.names, f.deferred = nil, map[string]string{}, nil
}

func (f *fold) accepts(step string) bool {
	return f.open != nil && (f.openStep == "" || step == f.openStep)
}

// record folds one record of the wire. The strings it keeps are cloned:
// session.Unmarshal's strings (goccy's) share the copy of the whole line
// it decodes, which a kept id would otherwise hold (a 370 MB wire's fold
// held 32 MB of lines so).
func (f *fold) record(r *session.Record, raw []byte, parts *wireParts) error {
	f.cur = r
	switch r.Type {
	case "turn.prompt":
		f.turnAt = r.Line.Offset
	case "context.append_message":
		// a prompt's record ends its turn.prompt's reach, whether or not
		// it decodes below
		cut := r.Line.Offset
		if r.UserPrompt {
			if f.turnAt >= 0 {
				cut = f.turnAt
			}
			f.turnAt = -1
		}
		m := parts.msg // decodeParts parsed it
		if m == nil {
			return nil
		}
		if m.isPrompt() {
			f.turns = append(f.turns, session.Turn{N: len(f.turns), Line: r.Line.Num, Offset: r.Line.Offset,
				Cut: cut, CutLine: r.Line.Num, Timestamp: r.Timestamp, Prompt: strings.Clone(session.Preview(r.Prompt, session.PreviewLen))})
			f.at.Add(r.Line.Offset, len(f.turns)-1)
		}
		x := f.msg(r.Role)
		f.from(x, srcMessage) // its words, calls and result
		x.m.Prompt = m.isPrompt()
		x.m.Injected = m.injected()
		x.prompt, x.promptID, x.inject = m.isPrompt(), strings.Clone(m.ID), m.injected()
		x.userOrigin = m.Role == "user" && m.Origin != nil && m.Origin.Kind == "user"
		if m.Origin != nil {
			x.owner = strings.Clone(m.Origin.OwnerPromptID)
			x.summary = m.Origin.Kind == "compaction_summary"
			x.m.Summary = x.summary
		}
		if len(f.pending) > 0 {
			f.deferred = append(f.deferred, x)
			return nil
		}
		f.push(x)
	case "context.append_loop_event/step.begin", "context.append_loop_event/step.end",
		"context.append_loop_event/content.part", "context.append_loop_event/tool.call",
		"context.append_loop_event/tool.result":
		if parts.ev != nil {
			f.loopEvent(parts.ev, r)
		}
	case "context.apply_compaction":
		var l compaction
		if json.Unmarshal(jsonObj(r, raw), &l) != nil {
			return nil
		}
		f.compact(l.CompactedCount, l.Count, l.KeptUserMessageCount, l.LegacyTail)
	case "context.clear":
		f.reset()
		for _, m := range f.msgs {
			m.m.State = session.Compacted
		}
		f.msgs = nil
	case "context.undo":
		var l struct {
			Count session.FlexInt `json:"count"`
		}
		json.Unmarshal(jsonObj(r, raw), &l)
		f.undo(int(l.Count.V))
	}
	return nil
}

func (f *fold) loopEvent(ev *loopEvent, r *session.Record) {
	switch ev.Type {
	case "step.begin":
		f.settleOpen()
		f.open = f.msg(session.RoleAssistant)
		f.push(f.open)
		f.openStep, f.openVac = strings.Clone(ev.UUID), true
	case "step.end":
		if ev.FinishReason == "interrupted" || ev.FinishReason == "error" {
			return
		}
		f.settleOpen()
		f.flushDeferred()
	case "content.part":
		if !f.accepts(ev.StepUUID) || ev.Part == nil {
			return
		}
		if f.openStep == "" {
			f.openStep = strings.Clone(ev.StepUUID)
		}
		switch ev.Part.Type {
		case "text":
			f.from(f.open, srcPart)
			if strings.TrimSpace(ev.Part.Text) != "" {
				f.openVac = false
			}
		case "think":
			f.from(f.open, srcPart)
			if ev.Part.Encrypted != "" || strings.TrimSpace(ev.Part.Think) != "" {
				f.openVac = false
			}
		default:
			f.openVac = false
		}
		if f.open.m.Model == "" {
			f.open.m.Model = strings.Clone(r.Model)
		}
	case "tool.call":
		if !f.accepts(ev.StepUUID) {
			return
		}
		if f.openStep == "" {
			f.openStep = strings.Clone(ev.StepUUID)
		}
		f.from(f.open, srcCall).call = int32(len(f.open.m.ToolCalls)) // its input
		id, name := strings.Clone(ev.ToolCallID), strings.Clone(ev.Name)
		f.open.m.ToolCalls = append(f.open.m.ToolCalls, session.ToolCall{ID: id, Name: name})
		f.pending = append(f.pending, id)
		f.names[id] = name
	case "tool.result":
		name, ok := f.names[ev.ToolCallID]
		if !ok {
			return
		}
		delete(f.names, ev.ToolCallID)
		for i, id := range f.pending {
			if id == ev.ToolCallID {
				f.pending = append(f.pending[:i], f.pending[i+1:]...)
				break
			}
		}
		m := f.msg(session.RoleTool)
		f.from(m, srcResult).wall = wallTimeTools[name] || strings.HasPrefix(name, "mcp__")
		f.push(m)
		f.flushDeferred()
	}
}

// compaction is a context.apply_compaction record.
type compaction struct {
	Summary              json.RawMessage `json:"summary"`
	ContextSummary       *string         `json:"contextSummary"`
	CompactedCount       *int            `json:"compactedCount"`
	Count                *int            `json:"count"`
	KeptUserMessageCount *int            `json:"keptUserMessageCount"`
	LegacyTail           *bool           `json:"legacyTail"`
}

// text is the summary the model reads.
func (c *compaction) text() string {
	if c.ContextSummary != nil {
		return *c.ContextSummary
	}
	var s string
	if json.Unmarshal(c.Summary, &s) == nil {
		return s
	}
	var m wireMessage
	if json.Unmarshal(c.Summary, &m) == nil {
		s, _ = partsText(m.Content)
	}
	return s
}

// compactionContinuation is the reminder Kimi Code puts after a
// compaction summary (buildCompactionContinuationText).
const compactionContinuation = "<system-reminder>\nContext compaction is complete — continue the work that was in progress when it began.\n</system-reminder>"

// compact is Kimi Code's context.apply_compaction
// (buildContextCompactionShape): the user's own messages so far are kept,
// then the summary, then a continuation reminder; a legacy record (no
// keptUserMessageCount) keeps the summary and the messages after the
// first compactedCount instead. Kimi Code elides the kept user messages
// beyond 20,000 tokens (2,000 of the oldest, the newest after a note);
// that is not modelled.
func (f *fold) compact(compacted, count, kept *int, legacyTail *bool) {
	n := 0
	if compacted != nil {
		n = *compacted
	} else if count != nil {
		n = *count
	}
	history := f.msgs
	f.reset()
	legacy := (legacyTail != nil && *legacyTail) || kept == nil
	boundary := int64(-1) // turns from here on stay live (a legacy tail)
	if legacy && n < len(history) {
		boundary = history[n].m.Offset
	}
	for i := range f.turns {
		// the turns summarised: a cut before one of them takes the
		// compaction away
		f.turns[i].CompactedAfter = true
		if boundary < 0 || f.turns[i].Offset < boundary {
			f.turns[i].State = session.Compacted
		}
	}
	summary := f.msg(session.RoleUser)
	f.from(summary, srcSummary) // its text
	summary.m.Summary, summary.summary = true, true
	var live []*fmsg
	if legacy {
		live = append(live, summary)
		if n < len(history) {
			for _, m := range history[:n] {
				m.m.State = session.Compacted
			}
			live = append(live, history[n:]...)
		} else {
			for _, m := range history {
				m.m.State = session.Compacted
			}
		}
		f.all = append(f.all, summary)
		f.msgs = live
		return
	}
	for _, m := range history {
		if m.prompt && !m.summary {
			c := *m // a copy: the original keeps its place in f.all
			live = append(live, &c)
			continue
		}
		m.m.State = session.Compacted
	}
	cont := f.msg(session.RoleUser)
	cont.m.Text, cont.m.Injected, cont.inject = compactionContinuation, true, true
	live = append(live, summary, cont)
	f.all = append(f.all, summary, cont)
	f.msgs = live
}

// undo is Kimi Code's context.undo: the last count prompts go, with
// everything after them and the injections their prompt owns just before
// them; nothing goes when there are fewer prompts after the last
// compaction summary.
func (f *fold) undo(count int) {
	if count <= 0 {
		return
	}
	remaining, cut, removed := count, -1, 0
	for i := len(f.msgs) - 1; i >= 0 && remaining > 0; i-- {
		m := f.msgs[i]
		if m.inject {
			continue
		}
		if m.summary {
			break
		}
		if m.prompt {
			remaining--
			removed++
			cut = i
			for cut > 0 && f.msgs[cut-1].inject && f.msgs[cut-1].owner != "" && f.msgs[cut-1].owner == m.promptID {
				cut--
			}
		}
	}
	if cut < 0 || removed < count {
		return
	}
	for _, m := range f.msgs[cut:] {
		m.m.State = session.RolledBack
	}
	f.msgs = f.msgs[:cut]
	f.reset()
}

// end settles the fold at the end of the file, as Kimi Code does when it
// resumes: an open step with unanswered calls gets interrupted results.
func (f *fold) end() {
	if f.open != nil && len(f.pending) > 0 {
		f.closePending()
	}
	if f.open != nil && len(f.open.m.ToolCalls) == 0 && f.openVac {
		f.remove(f.open)
	}
	f.flushDeferred()
}

func joinNL(a, b string) string {
	if a == "" {
		return b
	}
	return a + b
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// jsonObj is the line made decodable by encoding/json.
func jsonObj(r *session.Record, raw []byte) []byte {
	if r.Line.RawControl {
		return jsonl.Strict(raw)
	}
	return raw
}

// scan folds the file at path; want, when not nil, is asked of each line
// that holds words (wsrc.hit).
func scan(ctx context.Context, path string, want func([]byte) bool) (*fold, error) {
	f := newFold()
	f.want = want
	// each line is decoded once, on the workers, the event or message the
	// fold reads kept with its record
	type foldRec struct {
		r     session.Record
		parts wireParts
	}
	err := session.ScanFile(ctx, path, func(l *jsonl.Line, fr *foldRec) {
		fr.parts = wireParts{}
		fr.r = session.Decode(foldHome{parts: &fr.parts}, l)
	}, func(_ *jsonl.Line, fr *foldRec) error {
		r := &fr.r
		if r.Kind == session.KindCorrupt || r.Kind == session.KindBlank {
			return nil
		}
		// prompts come in file order: the index stays sorted
		return f.record(r, r.Line.Raw, &fr.parts)
	})
	if err != nil {
		return nil, err
	}
	f.end()
	f.at.Sort()
	return f, nil
}

// TurnUnit implements session.Conversation.
func (Home) TurnUnit() string { return "turn" }

// Turns implements session.Conversation: the prompts in file order
// (context.append_message records that are undo anchors), each cut at the
// turn.prompt record Kimi Code writes just before it (scan).
func (Home) Turns(ctx context.Context, path string) ([]session.Turn, error) {
	f, err := scan(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	return f.turns, nil
}

// History implements session.Conversation.
func (Home) History(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) error {
	f, err := scan(ctx, path, opt.Want)
	if err != nil {
		return err
	}
	msgs, merge := f.msgs, true
	if opt.All {
		msgs, merge = f.all, false
	}
	if opt.Want != nil {
		msgs = wanted(msgs)
	}
	return give(ctx, path, msgs, merge, fn)
}

// wanted is msgs as a caller with HistoryOptions.Want needs them: a
// message none of whose lines it took cannot hold what it looks for, and
// is left out (skip: it still parts the user messages on either side of
// it), or given without its words when it has tool calls (they name the
// results). Kept whole are the messages of origin "user" (Kimi
// Code sends adjacent ones as one, merger, whose text and line depend on
// each) and those whose text or thinking comes in parts (what is looked
// for may straddle two of them).
func wanted(msgs []*fmsg) []*fmsg {
	var out []*fmsg
	for _, m := range msgs {
		hit := m.userOrigin || len(m.srcs) == 0
		parts := 0
		for _, s := range m.srcs {
			hit = hit || s.hit
			if s.kind == srcPart {
				parts++
			}
		}
		hit = hit || parts > 1
		if hit {
			out = append(out, m)
			continue
		}
		c := *m
		c.srcs, c.skip = nil, len(m.m.ToolCalls) == 0
		out = append(out, &c)
	}
	return out
}

// give calls fn with each message of msgs, its words read again from the
// file at path: only the lines that hold them, in file order
// (session.ReadLinesAt). A message goes as soon as it and those before it
// are whole, so what is held is the messages between the lines read and
// the first message still waiting for one; a message whose line is no
// longer there as it was (the file changed since the fold) goes with what
// was read. merge is Kimi Code's request projection (merger).
func give(ctx context.Context, path string, msgs []*fmsg, merge bool, fn func(*session.Message) error) error {
	type use struct{ msg, src int }
	var at []session.LineAt
	uses := map[int][]use{} // by line number
	left := make([]int, len(msgs))
	for i, m := range msgs {
		for j, s := range m.srcs {
			if _, ok := uses[s.line.Num]; !ok {
				at = append(at, s.line)
			}
			uses[s.line.Num] = append(uses[s.line.Num], use{i, j})
			left[i]++
		}
	}
	slices.SortFunc(at, func(a, b session.LineAt) int { return cmp.Compare(a.Num, b.Num) })
	out := merger{fn: fn, merge: merge}
	next := 0
	flush := func() error {
		for ; next < len(msgs) && left[next] == 0; next++ {
			if err := out.add(msgs[next]); err != nil {
				return err
			}
			msgs[next] = nil // its words go with it
		}
		return nil
	}
	// read marks line k of at read, with r what it holds now (nil: not
	// given back)
	read := func(k int, r *session.Record) {
		for _, u := range uses[at[k].Num] {
			if r != nil {
				m := msgs[u.msg]
				fill(m, &m.srcs[u.src], r)
			}
			left[u.msg]--
		}
	}
	k := 0
	if err := flush(); err != nil || len(at) == 0 {
		return err
	}
	err := session.ReadLinesAt(ctx, path, foldHome{}, at, func(r *session.Record) error {
		for ; k < len(at) && at[k].Num < r.Line.Num; k++ {
			read(k, nil)
		}
		if k < len(at) && at[k].Num == r.Line.Num {
			read(k, r)
			k++
		}
		return flush()
	})
	if err != nil {
		return err
	}
	for ; k < len(at); k++ {
		read(k, nil)
	}
	if err := flush(); err != nil {
		return err
	}
	return out.close()
}

// fill adds to m the words that r, the line of its source s, holds: what
// the fold would have added had it kept them.
func fill(m *fmsg, s *wsrc, r *session.Record) {
	raw := jsonObj(r, r.Line.Raw)
	switch s.kind {
	case srcMessage:
		var l struct {
			Message wireMessage `json:"message"`
		}
		if session.Unmarshal(raw, &l) != nil {
			return
		}
		w := &l.Message
		m.m.Text, m.m.Thinking, m.m.ToolCalls = r.Text, r.Thinking, r.ToolCalls
		if w.Role == "tool" {
			m.m.Text = renderToolResult(r.Text, w.IsError, w.Note, nil)
			m.m.ToolResults = []session.ToolResult{{CallID: w.ToolCallID, Output: m.m.Text, IsError: w.IsError}}
		}
	case srcSummary:
		var c compaction
		if json.Unmarshal(raw, &c) == nil {
			m.m.Text = c.text()
		}
	default:
		var l struct {
			Event loopEvent `json:"event"`
		}
		if session.Unmarshal(raw, &l) != nil {
			return
		}
		ev := &l.Event
		switch s.kind {
		case srcPart:
			switch {
			case ev.Part == nil:
			case ev.Part.Type == "text":
				m.m.Text = joinNL(m.m.Text, ev.Part.Text)
			case ev.Part.Type == "think":
				m.m.Thinking = joinNL(m.m.Thinking, ev.Part.Think)
			}
		case srcCall:
			if int(s.call) < len(m.m.ToolCalls) && len(ev.Args) > 0 && string(ev.Args) != "null" {
				m.m.ToolCalls[s.call].Input = compactJSON(ev.Args)
			}
		case srcResult:
			var out, note string
			isErr := false
			var dur *float64
			if ev.Result != nil {
				out, _ = partsText(ev.Result.Output)
				isErr, note = ev.Result.IsError, ev.Result.Note
				if s.wall {
					dur = ev.Result.DurationMs
				}
			}
			m.m.Text = renderToolResult(out, isErr, note, dur)
			m.m.ToolResults = []session.ToolResult{{CallID: ev.ToolCallID, Output: m.m.Text, IsError: isErr}}
		}
	}
}

// merger gives messages on, merged as Kimi Code's request projection
// (flattenBlocks) merges them when merge is set: adjacent user messages of
// origin "user" are sent as one, their texts joined by a blank line. It
// happens where nothing came between two prompts: the prompts a compaction
// kept, a prompt whose turn wrote nothing else.
type merger struct {
	fn      func(*session.Message) error
	merge   bool
	held    *session.Message // the last message, which the next may join
	merging bool             // held is of origin "user"
	// joined is held's text once another joined it: built, not added
	// to (the prompts a compaction kept are all adjacent)
	joined strings.Builder
}

func (g *merger) add(m *fmsg) error {
	mm := m.m
	switch {
	case m.skip && g.merge:
		g.merging = false // not given, but it was sent between
		return nil
	case m.skip:
		return nil
	case !g.merge:
		return g.fn(&mm)
	}
	if m.userOrigin && g.merging {
		if g.joined.Len() == 0 {
			g.joined.WriteString(g.held.Text)
		}
		g.joined.WriteString("\n\n")
		g.joined.WriteString(mm.Text)
		return nil
	}
	if err := g.close(); err != nil {
		return err
	}
	g.held, g.merging = &mm, m.userOrigin
	return nil
}

// close gives the message held.
func (g *merger) close() error {
	h := g.held
	g.held = nil
	if h == nil {
		return nil
	}
	if g.joined.Len() > 0 {
		h.Text = g.joined.String()
		g.joined = strings.Builder{}
	}
	return g.fn(h)
}

// InjectedContext reports whether an item of a conversation is context
// Kimi Code adds on its own: a user message that is a <system-reminder>
// (the date, the permission mode, …), which it writes as a
// context.append_message of origin "injection" and sends as it is.
func (Home) InjectedContext(role session.Role, text string) bool {
	return role == session.RoleUser && strings.HasPrefix(strings.TrimSpace(text), "<system-reminder>")
}
