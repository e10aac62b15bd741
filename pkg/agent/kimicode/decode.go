package kimicode

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// knownTypes are the wire record types Kimi Code 2.1.0 writes or reads back
// (kimi-code.md §3): the record classes of its wire protocol 1.5 and the
// cases of its replay. Anything else is reported as unknown by check.
var knownTypes = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`
		metadata forked runtime.set_binding profile.bind config.update permission.set_mode
		permission.rules.add permission.record_approval_result permission.approval.requested
		permission.approval.resolved plugin.session_start plugin_command.activated skill.activated
		turn.prompt turn.steer turn.cancel turn.started turn.ended turn.step.started
		turn.step.completed turn.step.interrupted turn.step.retrying
		prompt.submitted prompt.queued prompt.started prompt.accepted prompt.aborted
		prompt.completed prompt.steered
		context.append_message context.append_loop_event context.apply_compaction context.clear
		context.undo context.undone context.spliced context.update_token_count
		micro_compaction.apply full_compaction.begin full_compaction.cancel full_compaction.complete
		compaction.started compaction.completed compaction.cancelled compaction.blocked
		llm.request llm.tools_snapshot usage.record
		token_counting.measured token_counting.rebased token_counting.truncated token_counting.turn_recorded
		tools.register_user_tool tools.unregister_user_tool tools.set_active_tools tools.update_store
		tools.reset_active_tools mcp.tools_discovered mcp.server.status
		interaction.request interaction.resolved
		task.started task.terminated task.notified task.waitDelivered
		subagent.spawned subagent.started subagent.completed subagent.failed subagent.cancelled subagent.suspended
		cron.add cron.cursor cron.delete cron.fired
		goal.create goal.update goal.updated goal.clear
		plan.revision plan_mode.enter plan_mode.exit plan_mode.cancel
		swarm_mode.enter swarm_mode.exit tower_mode.enter tower_mode.exit tower.inbox.sent
		file_history.checkpoint file_history.tracked
		staleGuard.recorded staleGuard.cleared interruptionReminder.recorded
		session.meta.updated hook.result shell.started shell.output shell.completed
		warning error
		agent.message.appended agent.turn.started agent.turn.ended agent.status.updated
	`) {
		knownTypes[t] = true
	}
}

// KnownType implements session.Home. A loop event's type is
// "context.append_loop_event/<event type>"; the loop events Kimi Code folds
// are known.
func (Home) KnownType(t string) bool {
	if ev, ok := strings.CutPrefix(t, "context.append_loop_event/"); ok {
		return knownLoopEvents[ev]
	}
	return knownTypes[t]
}

var knownLoopEvents = map[string]bool{
	"step.begin": true, "step.end": true, "content.part": true, "tool.call": true, "tool.result": true,
}

// wireLine is the part of a wire record sessctl reads.
type wireLine struct {
	Type    string            `json:"type"`
	Time    session.FlexInt   `json:"time"` // Unix milliseconds
	Message json.RawMessage   `json:"message"`
	Event   *loopEvent        `json:"event"`
	Model   string            `json:"model"`
	Usage   *wireUsage        `json:"usage"`
	Tokens  session.FlexInt   `json:"tokens"`
	Count   session.FlexInt   `json:"count"`
	TokenCt session.FlexInt   `json:"tokenCount"`
	Summary json.RawMessage   `json:"summary"`
	Input   []json.RawMessage `json:"input"`
}

// wireMessage is a context message (context.append_message).
type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ID         string          `json:"id"`
	ToolCalls  []wireToolCall  `json:"toolCalls"`
	ToolCallID string          `json:"toolCallId"`
	IsError    bool            `json:"isError"`
	Note       string          `json:"note"`
	Origin     *struct {
		Kind          string `json:"kind"`
		Variant       string `json:"variant"`
		Trigger       string `json:"trigger"`
		InTurn        bool   `json:"inTurn"`
		OwnerPromptID string `json:"ownerPromptId"`
	} `json:"origin"`
}

type wireToolCall struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a JSON string, or null
}

// loopEvent is a context.append_loop_event's event.
type loopEvent struct {
	Type         string          `json:"type"`
	UUID         string          `json:"uuid"`
	StepUUID     string          `json:"stepUuid"`
	FinishReason string          `json:"finishReason"`
	Part         *contentPart    `json:"part"`
	ToolCallID   string          `json:"toolCallId"`
	Name         string          `json:"name"`
	Args         json.RawMessage `json:"args"`
	Result       *struct {
		Output     json.RawMessage `json:"output"` // a string or parts
		IsError    bool            `json:"isError"`
		Note       string          `json:"note"`
		DurationMs *float64        `json:"durationMs"`
	} `json:"result"`
	Usage *wireUsage `json:"usage"`
}

type contentPart struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Think     string `json:"think"`
	Encrypted string `json:"encrypted"`
}

// wireUsage is Kimi Code's usage: inputOther excludes the cache.
type wireUsage struct {
	InputOther         session.FlexInt `json:"inputOther"`
	Output             session.FlexInt `json:"output"`
	InputCacheRead     session.FlexInt `json:"inputCacheRead"`
	InputCacheCreation session.FlexInt `json:"inputCacheCreation"`
}

func (u *wireUsage) usage() *session.Usage {
	return &session.Usage{Input: u.InputOther.V, Output: u.Output.V, CacheRead: u.InputCacheRead.V,
		CacheCreation: u.InputCacheCreation.V}
}

// partsText joins the text parts of a content array (or a string).
func partsText(raw json.RawMessage) (text, think string) {
	var s string
	if session.Unmarshal(raw, &s) == nil {
		return s, ""
	}
	var parts []contentPart
	if session.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	var tb, kb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			if tb.Len() > 0 {
				tb.WriteByte('\n')
			}
			tb.WriteString(p.Text)
		case "think":
			if kb.Len() > 0 {
				kb.WriteByte('\n')
			}
			kb.WriteString(p.Think)
		}
	}
	return tb.String(), kb.String()
}

func (m *wireMessage) toolCalls() []session.ToolCall {
	var out []session.ToolCall
	for _, c := range m.ToolCalls {
		in := ""
		var s string
		if session.Unmarshal(c.Arguments, &s) == nil {
			in = s
		}
		out = append(out, session.ToolCall{ID: c.ID, Name: c.Name, Input: in})
	}
	return out
}

// isPrompt reports whether a context message is a turn's prompt: a user
// message of origin "user" (or none), or a slash command the user typed
// (Kimi Code's isUndoAnchorOrigin).
func (m *wireMessage) isPrompt() bool {
	if m.Role != "user" {
		return false
	}
	o := m.Origin
	if o != nil && o.InTurn {
		return false
	}
	if o == nil || o.Kind == "" || o.Kind == "user" {
		return true
	}
	return (o.Kind == "skill_activation" || o.Kind == "plugin_command") && o.Trigger == "user-slash"
}

func (m *wireMessage) injected() bool { return m.Origin != nil && m.Origin.Kind == "injection" }

// Decode implements session.Home.
func (Home) Decode(obj []byte, r *session.Record) { decode(obj, r, false) }

// foldHome is Home with a decoder that leaves out the words of the loop
// events (their texts, calls and results): the fold reads each event
// itself and keeps only where its words are (scan), and give reads them
// again with the event's own fields (fill). Lines decode or fail as they
// do with Home. With parts, it keeps there what it parsed of the line, so
// that the fold does not parse it again (scan).
type foldHome struct {
	Home
	parts *wireParts
}

func (h foldHome) Decode(obj []byte, r *session.Record) { decodeParts(obj, r, true, h.parts) }

// decode is Home.Decode; lite leaves out the loop events' words.
func decode(obj []byte, r *session.Record, lite bool) { decodeParts(obj, r, lite, nil) }

// wireParts is what decode parsed of a line that the fold reads too: the
// loop event of a context.append_loop_event, the message of a
// context.append_message (nil where the line has none, or it did not
// decode).
type wireParts struct {
	ev  *loopEvent
	msg *wireMessage
}

// decodeParts is decode keeping what it parsed in keep (nil: nothing).
func decodeParts(obj []byte, r *session.Record, lite bool, keep *wireParts) {
	var l wireLine
	if err := session.Unmarshal(obj, &l); err != nil {
		r.Kind = session.KindUnknown
		r.Type = "(undecodable)"
		return
	}
	r.Type = l.Type
	if l.Time.OK && l.Time.V > 0 {
		r.Timestamp = time.UnixMilli(l.Time.V).UTC()
	}
	r.Kind = session.KindMetadata
	switch l.Type {
	case "context.append_message":
		var m wireMessage
		if session.Unmarshal(l.Message, &m) != nil {
			r.Kind = session.KindUnknown
			return
		}
		if keep != nil {
			keep.msg = &m
		}
		r.Kind = session.KindMessage
		r.Text, r.Thinking = partsText(m.Content)
		switch m.Role {
		case "user":
			r.Role = session.RoleUser
			if m.isPrompt() {
				r.UserPrompt = true
				r.Prompt = r.Text
			}
			r.Synthetic = m.injected()
		case "assistant":
			r.Role = session.RoleAssistant
			r.ToolCalls = m.toolCalls()
		case "tool":
			r.Role = session.RoleTool
			r.ToolResults = []session.ToolResult{{CallID: m.ToolCallID, Output: r.Text, IsError: m.IsError}}
		case "system":
			r.Role = session.RoleSystem
		default:
			r.Role = session.Role(m.Role)
		}
	case "context.append_loop_event":
		if l.Event == nil {
			r.Kind = session.KindUnknown
			return
		}
		ev := l.Event
		if keep != nil {
			keep.ev = ev
		}
		r.Type = l.Type + "/" + ev.Type
		switch ev.Type {
		case "content.part":
			if ev.Part != nil {
				r.Kind = session.KindMessage
				r.Role = session.RoleAssistant
				switch {
				case lite:
				case ev.Part.Type == "text":
					r.Text = ev.Part.Text
				case ev.Part.Type == "think":
					r.Thinking = ev.Part.Think
				}
			}
		case "tool.call":
			r.Kind = session.KindMessage
			r.Role = session.RoleAssistant
			if !lite {
				r.ToolCalls = []session.ToolCall{{ID: ev.ToolCallID, Name: ev.Name, Input: session.RawText(ev.Args)}}
			}
		case "tool.result":
			r.Kind = session.KindMessage
			r.Role = session.RoleTool
			if ev.Result != nil && !lite {
				out, _ := partsText(ev.Result.Output)
				r.Text = out
				r.ToolResults = []session.ToolResult{{CallID: ev.ToolCallID, Output: out, IsError: ev.Result.IsError}}
			}
		case "step.begin", "step.end":
		default:
			r.Kind = session.KindUnknown
		}
	case "usage.record":
		r.Kind = session.KindUsage
		r.Model = l.Model
		if l.Usage != nil {
			r.Usage = l.Usage.usage()
		}
	case "token_counting.measured", "token_counting.rebased", "token_counting.truncated", "token_counting.turn_recorded":
		r.Kind = session.KindUsage
		if l.Tokens.OK {
			r.ContextTokens = l.Tokens.V
		}
	case "context.update_token_count":
		r.Kind = session.KindUsage
		if l.TokenCt.OK {
			r.ContextTokens = l.TokenCt.V
		}
	case "context.apply_compaction":
		// the summary is what the model reads in place of what it
		// replaced: stats counts its tokens
		r.Kind = session.KindCompaction
		var c compaction
		if session.Unmarshal(obj, &c) == nil {
			r.Text = c.text()
		}
	case "context.clear":
		r.Kind = session.KindCompaction
	case "llm.request":
		r.Model = l.Model
	default:
		if !knownTypes[l.Type] {
			r.Kind = session.KindUnknown
		}
	}
}
