package kimi

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

func (Home) KnownType(t string) bool {
	switch t {
	case "user", "assistant", "tool", "system", "_system_prompt", "_checkpoint", "_usage":
		return true
	}
	return false
}

type kimiLine struct {
	Role       *string         `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []kimiToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	ID         json.RawMessage `json:"id"`
	TokenCount json.RawMessage `json:"token_count"`
}

type kimiToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// kimiSyntheticPrefixes start user messages that Kimi injects itself.
var kimiSyntheticPrefixes = []string{
	"<system>", "<system-reminder>", "<notification",
}

func (Home) Decode(obj []byte, r *session.Record) {
	var l kimiLine
	if err := session.Unmarshal(obj, &l); err != nil || l.Role == nil {
		r.Kind = session.KindUnknown
		r.Type = "(no role)"
		return
	}
	role := *l.Role
	r.Type = role
	switch role {
	case "_system_prompt":
		r.Kind = session.KindSystemPrompt
		r.Role = session.RoleSystem
		r.Text = session.TextOf(l.Content)
	case "_checkpoint":
		id, ok := pythonInt(l.ID)
		if !ok {
			r.Kind = session.KindUnknown
			r.Type = "_checkpoint(bad id)"
			return
		}
		r.Kind = session.KindCheckpoint
		r.CheckpointID = int(id)
	case "_usage":
		n, ok := pythonInt(l.TokenCount)
		if !ok {
			r.Kind = session.KindUnknown
			r.Type = "_usage(bad token_count)"
			return
		}
		r.Kind = session.KindUsage
		r.ContextTokens = n
	case "user", "assistant", "tool", "system":
		r.Kind = session.KindMessage
		r.Role = session.Role(role)
		text, thinking := kimiContent(l.Content)
		r.Text, r.Thinking = text, thinking
		for _, tc := range l.ToolCalls {
			r.ToolCalls = append(r.ToolCalls, session.ToolCall{ID: tc.ID, Name: tc.Function.Name, Input: session.RawText(tc.Function.Arguments)})
		}
		if role == "tool" {
			r.ToolResults = []session.ToolResult{{CallID: l.ToolCallID, Output: text,
				IsError: strings.HasPrefix(text, "<system>ERROR")}}
		}
		if role == "user" {
			if session.HasAnyPrefix(text, kimiSyntheticPrefixes...) {
				r.Synthetic = true
			} else {
				r.UserPrompt = strings.TrimSpace(text) != ""
				r.Prompt = text
			}
		}
	default:
		r.Kind = session.KindUnknown
	}
}

// pythonInt accepts what Python's isinstance(x, int) accepts: integers and
// booleans (true is 1).
func pythonInt(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "true":
		return 1, true
	case "false":
		return 0, true
	case "", "null":
		return 0, false
	}
	if raw[0] == '"' {
		return 0, false // json.Number would accept "3"; Python's int check does not
	}
	var n json.Number
	if session.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil {
		return 0, false
	}
	return i, true
}

// kimiContent returns the text parts and the think parts of a content value.
func kimiContent(raw json.RawMessage) (text, thinking string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return session.TextOf(raw), ""
	}
	var parts []struct {
		Type  string `json:"type"`
		Text  string `json:"text"`
		Think string `json:"think"`
	}
	if session.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	var t, th []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			t = append(t, p.Text)
		case "think":
			th = append(th, p.Think)
		}
	}
	return strings.Join(t, "\n"), strings.Join(th, "\n")
}
