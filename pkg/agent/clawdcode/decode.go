package clawdcode

import (
	"encoding/json"

	"github.com/sessctl/sessctl/pkg/session"
)

func (Home) KnownType(t string) bool {
	switch t {
	case "user", "assistant", "tool_use", "tool_result", "system", "system/compact_boundary":
		return true
	}
	return false
}

type clawdLine struct {
	UUID             string  `json:"uuid"`
	ParentUUID       *string `json:"parentUuid"`
	SessionID        string  `json:"sessionId"`
	Timestamp        string  `json:"timestamp"`
	Type             string  `json:"type"`
	Subtype          string  `json:"subtype"`
	CWD              string  `json:"cwd"`
	Version          string  `json:"version"`
	IsCompactSummary bool    `json:"isCompactSummary"`
	Message          *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Model   string          `json:"model"`
		Usage   *struct {
			Input  session.FlexInt `json:"input_tokens"`
			Output session.FlexInt `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Tool *struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"tool"`
	ToolResult *struct {
		ID     string          `json:"id"`
		Output json.RawMessage `json:"output"`
		Error  json.RawMessage `json:"error"`
	} `json:"toolResult"`
	CompactMetadata *struct {
		PostTokens session.FlexInt `json:"postTokens"`
	} `json:"compactMetadata"`
}

func (Home) Decode(obj []byte, r *session.Record) {
	var l clawdLine
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
	r.SessionID = l.SessionID
	r.CWD = l.CWD
	r.Version = l.Version
	r.Timestamp = session.ParseTime(l.Timestamp)
	if l.CompactMetadata != nil && l.CompactMetadata.PostTokens.OK {
		r.ContextTokens = l.CompactMetadata.PostTokens.V
	}
	if l.Message != nil {
		r.Model = l.Message.Model
		r.Text = rawTextOrParts(l.Message.Content)
		if l.Message.Usage != nil {
			r.Usage = &session.Usage{Input: l.Message.Usage.Input.V, Output: l.Message.Usage.Output.V}
		}
	}
	switch l.Type {
	case "user":
		r.Role = session.RoleUser
		if l.IsCompactSummary {
			r.Kind = session.KindCompaction
		} else {
			r.UserPrompt = true
			r.Prompt = r.Text
		}
	case "assistant":
		r.Role = session.RoleAssistant
	case "tool_use":
		r.Role = session.RoleAssistant
		if l.Tool != nil {
			r.ToolCalls = []session.ToolCall{{ID: l.Tool.ID, Name: l.Tool.Name, Input: session.RawText(l.Tool.Input)}}
		}
	case "tool_result":
		r.Role = session.RoleTool
		if l.ToolResult != nil {
			isErr := len(l.ToolResult.Error) > 0 && string(l.ToolResult.Error) != "null"
			r.ToolResults = []session.ToolResult{{CallID: l.ToolResult.ID, Output: session.RawText(l.ToolResult.Output), IsError: isErr}}
			r.Text = r.ToolResults[0].Output
		}
	case "system":
		r.Role = session.RoleSystem
		if l.Subtype == "compact_boundary" {
			r.Kind = session.KindCompaction
			r.Type = "system/compact_boundary"
		}
	default:
		r.Kind = session.KindUnknown
	}
}

// rawTextOrParts renders clawdcode content, which may be any JSON value.
func rawTextOrParts(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '[' {
		return session.TextOf(raw)
	}
	return session.RawText(raw)
}
