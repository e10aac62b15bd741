package kimicode

import (
	"context"
	"encoding/json"
	"fmt"
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
	m        session.Message
	prompt   bool   // an undo anchor
	promptID string // a prompt's id (message.id)
	owner    string // an injection's ownerPromptId
	inject   bool
	summary  bool
	// userOrigin: a message of origin "user", which Kimi Code's request
	// projection merges with the next such message (canMergeUserMessage)
	userOrigin bool
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
}

func newFold() *fold { return &fold{names: map[string]string{}} }

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

// record folds one record of the wire.
func (f *fold) record(r *session.Record, raw []byte) error {
	f.cur = r
	switch r.Type {
	case "context.append_message":
		var l struct {
			Message wireMessage `json:"message"`
		}
		if err := json.Unmarshal(jsonObj(r, raw), &l); err != nil {
			return nil
		}
		m := &l.Message
		if m.isPrompt() {
			f.turns = append(f.turns, session.Turn{N: len(f.turns), Line: r.Line.Num, Offset: r.Line.Offset,
				Cut: r.Line.Offset, CutLine: r.Line.Num, Timestamp: r.Timestamp, Prompt: session.Preview(r.Prompt, session.PreviewLen)})
			f.at.Add(r.Line.Offset, len(f.turns)-1)
		}
		x := f.msg(r.Role)
		x.m.Text, x.m.Thinking = r.Text, r.Thinking
		x.m.ToolCalls = r.ToolCalls
		x.m.Prompt = m.isPrompt()
		x.m.Injected = m.injected()
		x.prompt, x.promptID, x.inject = m.isPrompt(), m.ID, m.injected()
		x.userOrigin = m.Role == "user" && m.Origin != nil && m.Origin.Kind == "user"
		if m.Origin != nil {
			x.owner = m.Origin.OwnerPromptID
			x.summary = m.Origin.Kind == "compaction_summary"
			x.m.Summary = x.summary
		}
		if m.Role == "tool" {
			x.m.Text = renderToolResult(r.Text, m.IsError, m.Note, nil)
			x.m.ToolResults = []session.ToolResult{{CallID: m.ToolCallID, Output: x.m.Text, IsError: m.IsError}}
		}
		if len(f.pending) > 0 {
			f.deferred = append(f.deferred, x)
			return nil
		}
		f.push(x)
	case "context.append_loop_event/step.begin", "context.append_loop_event/step.end",
		"context.append_loop_event/content.part", "context.append_loop_event/tool.call",
		"context.append_loop_event/tool.result":
		var l struct {
			Event loopEvent `json:"event"`
		}
		if err := json.Unmarshal(jsonObj(r, raw), &l); err != nil {
			return nil
		}
		f.loopEvent(&l.Event, r)
	case "context.apply_compaction":
		var l struct {
			Summary              json.RawMessage `json:"summary"`
			ContextSummary       *string         `json:"contextSummary"`
			CompactedCount       *int            `json:"compactedCount"`
			Count                *int            `json:"count"`
			KeptUserMessageCount *int            `json:"keptUserMessageCount"`
			LegacyTail           *bool           `json:"legacyTail"`
		}
		if json.Unmarshal(jsonObj(r, raw), &l) != nil {
			return nil
		}
		f.compact(l.Summary, l.ContextSummary, l.CompactedCount, l.Count, l.KeptUserMessageCount, l.LegacyTail)
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
		f.openStep, f.openVac = ev.UUID, true
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
			f.openStep = ev.StepUUID
		}
		switch ev.Part.Type {
		case "text":
			f.open.m.Text = joinNL(f.open.m.Text, ev.Part.Text)
			if strings.TrimSpace(ev.Part.Text) != "" {
				f.openVac = false
			}
		case "think":
			f.open.m.Thinking = joinNL(f.open.m.Thinking, ev.Part.Think)
			if ev.Part.Encrypted != "" || strings.TrimSpace(ev.Part.Think) != "" {
				f.openVac = false
			}
		default:
			f.openVac = false
		}
		if f.open.m.Model == "" {
			f.open.m.Model = r.Model
		}
	case "tool.call":
		if !f.accepts(ev.StepUUID) {
			return
		}
		if f.openStep == "" {
			f.openStep = ev.StepUUID
		}
		args := ""
		if len(ev.Args) > 0 && string(ev.Args) != "null" {
			args = compactJSON(ev.Args)
		}
		f.open.m.ToolCalls = append(f.open.m.ToolCalls, session.ToolCall{ID: ev.ToolCallID, Name: ev.Name, Input: args})
		f.pending = append(f.pending, ev.ToolCallID)
		f.names[ev.ToolCallID] = ev.Name
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
		var out, note string
		isErr := false
		var dur *float64
		if ev.Result != nil {
			out, _ = partsText(ev.Result.Output)
			isErr, note = ev.Result.IsError, ev.Result.Note
			if wallTimeTools[name] || strings.HasPrefix(name, "mcp__") {
				dur = ev.Result.DurationMs
			}
		}
		m.m.Text = renderToolResult(out, isErr, note, dur)
		m.m.ToolResults = []session.ToolResult{{CallID: ev.ToolCallID, Output: m.m.Text, IsError: isErr}}
		f.push(m)
		f.flushDeferred()
	}
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
func (f *fold) compact(rawSummary json.RawMessage, contextSummary *string, compacted, count, kept *int, legacyTail *bool) {
	text := ""
	switch {
	case contextSummary != nil:
		text = *contextSummary
	default:
		var s string
		if json.Unmarshal(rawSummary, &s) == nil {
			text = s
		} else {
			var m wireMessage
			if json.Unmarshal(rawSummary, &m) == nil {
				text, _ = partsText(m.Content)
			}
		}
	}
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
	summary.m.Text, summary.m.Summary, summary.summary = text, true, true
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

// scan folds the file at path.
func scan(ctx context.Context, path string) (*fold, error) {
	f := newFold()
	err := session.ReadFileContext(ctx, path, Home{}, func(r *session.Record) error {
		if r.Kind == session.KindCorrupt || r.Kind == session.KindBlank {
			return nil
		}
		// prompts come in file order: the index stays sorted
		return f.record(r, r.Line.Raw)
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
// (context.append_message records that are undo anchors).
func (Home) Turns(ctx context.Context, path string) ([]session.Turn, error) {
	f, err := scan(ctx, path)
	if err != nil {
		return nil, err
	}
	// a turn's records start at its turn.prompt record, which Kimi Code
	// writes just before the prompt's context.append_message
	cuts, err := promptCuts(ctx, path)
	if err != nil {
		return nil, err
	}
	for i := range f.turns {
		if c, ok := cuts[f.turns[i].Offset]; ok {
			f.turns[i].Cut = c
		}
	}
	return f.turns, nil
}

// promptCuts maps the offset of each prompt's context.append_message to the
// offset of the turn.prompt record before it (the start of its turn).
func promptCuts(ctx context.Context, path string) (map[int64]int64, error) {
	out := map[int64]int64{}
	last := int64(-1)
	err := session.ReadFileContext(ctx, path, Home{}, func(r *session.Record) error {
		switch {
		case r.Type == "turn.prompt":
			last = r.Line.Offset
		case r.UserPrompt && r.Type == "context.append_message":
			if last >= 0 {
				out[r.Line.Offset] = last
			}
			last = -1
		}
		return nil
	})
	return out, err
}

// History implements session.Conversation.
func (Home) History(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) error {
	f, err := scan(ctx, path)
	if err != nil {
		return err
	}
	if opt.All {
		for _, m := range f.all {
			mm := m.m
			if err := fn(&mm); err != nil {
				return err
			}
		}
		return nil
	}
	for _, mm := range mergeUsers(f.msgs) {
		if err := fn(&mm); err != nil {
			return err
		}
	}
	return nil
}

// mergeUsers is Kimi Code's request projection (flattenBlocks): adjacent
// user messages of origin "user" are sent as one, their texts joined by
// a blank line. It happens where nothing came between two prompts: the
// prompts a compaction kept, a prompt whose turn wrote nothing else.
func mergeUsers(msgs []*fmsg) []session.Message {
	var out []session.Message
	merging := false
	for _, m := range msgs {
		if m.userOrigin && merging {
			last := &out[len(out)-1]
			last.Text += "\n\n" + m.m.Text
			continue
		}
		out = append(out, m.m)
		merging = m.userOrigin
	}
	return out
}

// InjectedContext reports whether an item of a conversation is context
// Kimi Code adds on its own: a user message that is a <system-reminder>
// (the date, the permission mode, …), which it writes as a
// context.append_message of origin "injection" and sends as it is.
func (Home) InjectedContext(role session.Role, text string) bool {
	return role == session.RoleUser && strings.HasPrefix(strings.TrimSpace(text), "<system-reminder>")
}
