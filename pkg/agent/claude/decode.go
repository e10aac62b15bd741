package claude

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

var claudeTypes = map[string]bool{
	"user": true, "assistant": true, "system": true, "attachment": true, "progress": true,
	"summary": true, "file-history-snapshot": true, "queue-operation": true, "last-prompt": true,
	"mode": true, "permission-mode": true, "custom-title": true, "ai-title": true, "agent-name": true,
	"agent-color": true, "pr-link": true, "agent-setting": true, "turn_end": true,
	"marble-origami-commit": true, "tag": true,
	// Claude Code 2.1.330 (docs/formats/claude-code.md, "2.1.330"): the
	// request journal and the session's state records
	"api-request": true, "api-request-shape": true, "api-request-blob": true,
	"cost-state": true, "tools-used": true, "atis-latch": true,
	"(usage)": true, // ccusage-style usage-only lines without a type
}

func (Home) KnownType(t string) bool { return claudeTypes[t] }

type claudeLine struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	UUID              string          `json:"uuid"`
	ParentUUID        *string         `json:"parentUuid"`
	LogicalParentUUID string          `json:"logicalParentUuid"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	IsAPIError        bool            `json:"isApiErrorMessage"`
	AgentID           string          `json:"agentId"`
	SessionID         string          `json:"sessionId"`
	CWD               string          `json:"cwd"`
	Version           string          `json:"version"`
	Timestamp         string          `json:"timestamp"`
	RequestID         string          `json:"requestId"`
	Message           messageField    `json:"message"`
	Content           json.RawMessage `json:"content"`
	Summary           string          `json:"summary"`
	CustomTitle       string          `json:"customTitle"`
	AITitle           string          `json:"aiTitle"`
	Title             string          `json:"title"`
	// Params are an api-request's (2.1.330): the model it asked for.
	// (raw, so that an odd value cannot make the whole line undecodable)
	Params          json.RawMessage `json:"params"`
	CompactMetadata *struct {
		PreTokens  session.FlexInt `json:"preTokens"`
		PostTokens session.FlexInt `json:"postTokens"`
	} `json:"compactMetadata"`
}

// messageField decodes a line's message straight from the line (no copy
// of it as raw JSON first: a message can be a huge paste); a message that
// is not an object, or not a valid one, is left nil.
type messageField struct{ *claudeMessage }

func (f *messageField) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var m claudeMessage
	if session.Unmarshal(b, &m) == nil {
		f.claudeMessage = &m
	}
	return nil
}

type claudeMessage struct {
	ID      string       `json:"id"`
	Role    string       `json:"role"`
	Model   string       `json:"model"`
	Content contentField `json:"content"`
	Usage   *claudeUsage `json:"usage"`
}

// contentField is a message.content, read once from the line: the text of
// a string, or the blocks of an array (no raw copy of it is kept: it can
// be a huge paste).
type contentField struct {
	text   string
	blocks []claudeBlock
	array  bool
}

func (c *contentField) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		c.text = session.TextOf(b)
		return nil
	}
	c.array = true
	if session.Unmarshal(b, &c.blocks) != nil {
		c.blocks = nil
	}
	return nil
}

type claudeUsage struct {
	Input         session.FlexInt `json:"input_tokens"`
	Output        session.FlexInt `json:"output_tokens"`
	CacheCreation session.FlexInt `json:"cache_creation_input_tokens"`
	CacheRead     session.FlexInt `json:"cache_read_input_tokens"`
	Split         *struct {
		M5 session.FlexInt `json:"ephemeral_5m_input_tokens"`
		H1 session.FlexInt `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

func (u *claudeUsage) usage() *session.Usage {
	out := &session.Usage{Input: u.Input.V, Output: u.Output.V, CacheRead: u.CacheRead.V, CacheCreation: u.CacheCreation.V}
	if u.Split != nil {
		// the part of the cache writes that went to the 1-hour cache
		out.CacheCreation1h = u.Split.H1.V
	}
	return out
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeInjectedPrefixes start user-role texts that the client wrote, not the
// user: slash-command echoes, caveats, reminders, interruption notes.
var claudeInjectedPrefixes = []string{
	"<local-command-", "<command-name>", "<command-message>", "<command-args>", "Caveat:",
	"<system-reminder>", "[Request interrupted", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
	"<user-prompt-submit-hook>", "<task-notification>", "<ide_opened_file>", "<ide_selection>",
	"<ide_diagnostics>",
}

func (Home) Decode(obj []byte, r *session.Record) {
	var l claudeLine
	if err := session.Unmarshal(obj, &l); err != nil {
		r.Kind = session.KindUnknown
		r.Type = "(undecodable)"
		return
	}
	r.Type = l.Type
	r.UUID = l.UUID
	if l.ParentUUID != nil {
		r.ParentUUID = *l.ParentUUID
	}
	r.LogicalParentUUID = l.LogicalParentUUID
	r.Sidechain = l.IsSidechain
	r.AgentID = l.AgentID
	r.SessionID = l.SessionID
	r.CWD = l.CWD
	r.Version = l.Version
	r.RequestID = l.RequestID
	r.Timestamp = session.ParseTime(l.Timestamp)
	if l.CompactMetadata != nil && l.CompactMetadata.PostTokens.OK {
		r.ContextTokens = l.CompactMetadata.PostTokens.V
	}
	if l.Type == "" {
		if l.Message.claudeMessage == nil {
			r.Kind = session.KindUnknown
			r.Type = "(no type)"
			return
		}
		r.Type = "(usage)"
		l.Type = l.Message.Role
	}
	switch l.Type {
	case "user", "assistant":
		r.Kind = session.KindMessage
		r.Role = session.Role(l.Type)
		if l.Message.claudeMessage == nil {
			return
		}
		m := l.Message
		r.Model = m.Model
		r.MessageID = m.ID
		if m.Usage != nil && l.Type == "assistant" {
			r.Usage = m.Usage.usage()
		}
		r.Synthetic = m.Model == "<synthetic>" || l.IsAPIError
		claudeContent(m.Content, r)
		if l.Type == "user" {
			switch {
			case l.IsCompactSummary:
				r.Kind = session.KindCompaction
			case len(r.ToolResults) > 0, l.IsMeta, l.IsSidechain:
			default:
				r.Prompt = claudePrompt(m.Content, r.Text)
				r.UserPrompt = r.Prompt != ""
			}
			if len(r.ToolResults) > 0 {
				r.Role = session.RoleTool
			}
		}
	case "system":
		r.Role = session.RoleSystem
		if l.Subtype == "compact_boundary" {
			r.Kind = session.KindCompaction
		} else {
			r.Kind = session.KindMetadata
		}
		r.Type = "system/" + l.Subtype
		r.Text = session.TextOf(l.Content)
	case "summary":
		r.Kind = session.KindMetadata
		r.Title = l.Summary
	case "custom-title", "ai-title":
		r.Kind = session.KindMetadata
		r.Title = firstNonEmpty(l.CustomTitle, l.AITitle, l.Title)
	case "api-request":
		// the model a request asked for; its response names it again
		r.Kind = session.KindMetadata
		var params struct {
			Model string `json:"model"`
		}
		if len(l.Params) > 0 && l.Params[0] == '{' && session.Unmarshal(l.Params, &params) == nil {
			r.Model = params.Model
		}
	default:
		if claudeTypes[l.Type] {
			r.Kind = session.KindMetadata
		} else {
			r.Kind = session.KindUnknown
		}
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// claudeContent fills text, thinking, tool calls and results from a
// message.content value (a string or an array of blocks).
func claudeContent(c contentField, r *session.Record) {
	if !c.array {
		r.Text = c.text
		return
	}
	var text, think []string
	for _, b := range c.blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "thinking":
			think = append(think, b.Thinking)
		case "tool_use", "server_tool_use":
			r.ToolCalls = append(r.ToolCalls, session.ToolCall{ID: b.ID, Name: b.Name, Input: session.RawText(b.Input)})
		case "tool_result":
			r.ToolResults = append(r.ToolResults, session.ToolResult{CallID: b.ToolUseID, Output: session.TextOf(b.Content), IsError: b.IsError})
		}
	}
	r.Text = strings.Join(text, "\n")
	r.Thinking = strings.Join(think, "\n")
}

// claudePrompt is the user's own text of a user message: its text blocks
// without the ones the client injected (IDE context, reminders, command
// echoes).
func claudePrompt(c contentField, text string) string {
	if !c.array {
		if session.HasAnyPrefix(text, claudeInjectedPrefixes...) {
			return ""
		}
		return strings.TrimSpace(text)
	}
	var out []string
	for _, b := range c.blocks {
		if b.Type == "text" && !session.HasAnyPrefix(b.Text, claudeInjectedPrefixes...) && strings.TrimSpace(b.Text) != "" {
			out = append(out, b.Text)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
