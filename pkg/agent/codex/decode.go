package codex

import (
	"encoding/json"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

var codexEnvelopeTypes = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true,
	"compacted": true, "world_state": true, "token_usage_record": true,
	"(legacy)": true,
}

func (Home) KnownType(t string) bool {
	env, _, _ := strings.Cut(t, "/")
	return codexEnvelopeTypes[env]
}

type codexLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// legacy (pre-envelope) lines
	RecordType   string          `json:"record_type"`
	Instructions json.RawMessage `json:"instructions"`
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
}

type codexPayload struct {
	Type string `json:"type"`
	// session_meta
	ID        string `json:"id"`
	CWD       string `json:"cwd"`
	CLIVer    string `json:"cli_version"`
	Timestamp string `json:"timestamp"`
	// turn_context
	Model string `json:"model"`
	// response_item
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	// event_msg
	Message    json.RawMessage `json:"message"`
	Info       *codexInfo      `json:"info"`
	NumTurns   session.FlexInt `json:"num_turns"`
	Window     session.FlexInt `json:"model_context_window"`
	ThreadName string          `json:"thread_name"`
	// token_usage_record
	ResponseID string      `json:"response_id"`
	Usage      *codexUsage `json:"usage"`
	// compacted
	ReplacementHistory json.RawMessage `json:"replacement_history"`
}

type codexInfo struct {
	Total  *codexUsage     `json:"total_token_usage"`
	Last   *codexUsage     `json:"last_token_usage"`
	Window session.FlexInt `json:"model_context_window"`
}

type codexUsage struct {
	Input     session.FlexInt `json:"input_tokens"`
	Cached    session.FlexInt `json:"cached_input_tokens"`
	Output    session.FlexInt `json:"output_tokens"`
	Reasoning session.FlexInt `json:"reasoning_output_tokens"`
	Total     session.FlexInt `json:"total_tokens"`
}

// usage converts OpenAI usage to the Anthropic split (Input excludes cached).
func (u *codexUsage) usage() *session.Usage {
	in := u.Input.V - u.Cached.V
	if in < 0 {
		in = 0
	}
	return &session.Usage{Input: in, CacheRead: u.Cached.V, Output: u.Output.V, Reasoning: u.Reasoning.V}
}

func (Home) Decode(obj []byte, r *session.Record) { decode(obj, r, false) }

// replayHome is Home with a decoder that leaves out what the replay of a
// rollout does not read (replayFile): the texts of everything but user
// messages, the calls' arguments, the outputs, usage. It classifies every
// line as Home does (TestReplayLiteAsFull).
type replayHome struct{ Home }

func (replayHome) Decode(obj []byte, r *session.Record) {
	if !liteFast(obj, r) {
		decode(obj, r, true)
	}
}

// codexPayloadLite is what of a payload the replay reads.
type codexPayloadLite struct {
	Type     string          `json:"type"`
	Role     string          `json:"role"`
	Content  json.RawMessage `json:"content"`
	Name     string          `json:"name"`
	CallID   string          `json:"call_id"`
	NumTurns session.FlexInt `json:"num_turns"`
}

func decodePayload(b []byte, p *codexPayload, lite bool) {
	if !lite {
		session.Unmarshal(b, p)
		return
	}
	var q codexPayloadLite
	session.Unmarshal(b, &q)
	*p = codexPayload{Type: q.Type, Role: q.Role, Content: q.Content, Name: q.Name, CallID: q.CallID, NumTurns: q.NumTurns}
}

func decode(obj []byte, r *session.Record, lite bool) {
	var l codexLine
	if err := session.Unmarshal(obj, &l); err != nil {
		r.Kind = session.KindUnknown
		r.Type = "(undecodable)"
		return
	}
	// before 2025-09 lines had no envelope: bare ResponseItems such as
	// {"type":"message","role":…} and {"record_type":"state"}
	if l.Type == "" || (len(l.Payload) == 0 && !codexEnvelopeTypes[l.Type]) {
		r.Timestamp = session.ParseTime(l.Timestamp)
		codexLegacy(&l, obj, r, lite)
		return
	}
	var p codexPayload
	if len(l.Payload) > 0 {
		decodePayload(l.Payload, &p, lite)
	}
	envelope(&l, &p, r, lite)
}

// envelope makes the record of an enveloped line l (not a legacy one)
// with its payload p decoded.
func envelope(l *codexLine, p *codexPayload, r *session.Record, lite bool) {
	r.Timestamp = session.ParseTime(l.Timestamp)
	r.Type = l.Type
	if p.Type != "" && (l.Type == "response_item" || l.Type == "event_msg") {
		r.Type = l.Type + "/" + p.Type
	}
	switch l.Type {
	case "session_meta":
		r.Kind = session.KindMetadata
		r.SessionID = p.ID
		r.CWD = p.CWD
		r.Version = p.CLIVer
	case "turn_context":
		r.Kind = session.KindMetadata
		r.Model = p.Model
		r.CWD = p.CWD
	case "response_item":
		codexItem(p, r, lite)
	case "event_msg":
		r.Kind = session.KindMetadata
		switch p.Type {
		case "token_count":
			r.Kind = session.KindUsage
			if p.Info != nil {
				if p.Info.Last != nil {
					r.Usage = p.Info.Last.usage()
					if p.Info.Last.Total.OK {
						r.ContextTokens = p.Info.Last.Total.V
					}
				}
				if p.Info.Total != nil {
					r.CumulativeUsage = p.Info.Total.usage()
				}
				r.ContextWindow = p.Info.Window.V
			}
		case "context_compacted":
			r.Kind = session.KindCompaction
		case "thread_rolled_back":
			r.RollbackTurns = int(p.NumTurns.V)
		case "task_started", "turn_started":
			r.ContextWindow = p.Window.V
		case "thread_name_updated":
			r.Title = p.ThreadName
		}
	case "compacted":
		r.Kind = session.KindCompaction
		r.Role = session.RoleUser
		r.Text = session.RawText(p.Message)
	case "token_usage_record":
		r.Kind = session.KindUsage
		r.MessageID = p.ResponseID
		if p.Usage != nil {
			r.Usage = p.Usage.usage()
		}
	case "world_state":
		r.Kind = session.KindMetadata
	default:
		r.Kind = session.KindUnknown
	}
}

// codexItem decodes a response item; lite leaves out the texts of all but
// user messages, and the calls' inputs.
func codexItem(p *codexPayload, r *session.Record, lite bool) {
	r.Kind = session.KindMessage
	text := func(raw []byte) string {
		if lite {
			return ""
		}
		return session.TextOf(raw)
	}
	switch p.Type {
	case "message":
		r.Role = session.Role(p.Role)
		if p.Role == "user" || !lite {
			r.Text = session.TextOf(p.Content)
		}
		if p.Role == "user" {
			if Contextual(r.Text) {
				r.Synthetic = true
			} else {
				r.UserPrompt = true
				r.Prompt = r.Text
			}
		}
	case "reasoning":
		r.Role = session.RoleAssistant
		r.Thinking = text(p.Summary)
	case "function_call":
		r.Role = session.RoleAssistant
		r.ToolCalls = []session.ToolCall{{ID: p.CallID, Name: p.Name, Input: session.RawText(p.Arguments)}}
	case "custom_tool_call":
		r.Role = session.RoleAssistant
		r.ToolCalls = []session.ToolCall{{ID: p.CallID, Name: p.Name, Input: session.RawText(p.Input)}}
	case "local_shell_call":
		r.Role = session.RoleAssistant
		r.ToolCalls = []session.ToolCall{{ID: p.CallID, Name: "local_shell", Input: session.RawText(p.Action)}}
	case "function_call_output", "custom_tool_call_output":
		r.Role = session.RoleTool
		r.ToolResults = []session.ToolResult{{CallID: p.CallID, Output: text(p.Output)}}
		r.Text = r.ToolResults[0].Output
	case "web_search_call", "image_generation_call", "tool_search_call", "tool_search_output":
		r.Role = session.RoleAssistant
	case "ghost_snapshot":
		r.Kind = session.KindMetadata
	case "compaction", "compaction_summary":
		r.Kind = session.KindCompaction
	default:
		r.Kind = session.KindUnknown
	}
}

// codexLegacy handles rollouts from before September 2025 (no envelope):
// the header line, state lines, and bare response items.
func codexLegacy(l *codexLine, obj []byte, r *session.Record, lite bool) {
	r.Type = "(legacy)"
	switch {
	case l.RecordType != "" || len(l.Instructions) > 0:
		r.Kind = session.KindMetadata
	case l.Type != "":
		var p codexPayload
		decodePayload(obj, &p, lite)
		codexItem(&p, r, lite)
		r.Type = "(legacy)/" + l.Type
	default:
		r.Kind = session.KindMetadata
	}
}
