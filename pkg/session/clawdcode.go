package session

import (
	"encoding/json"
)

// clawdFormat decodes clawdcode session lines (clawdcode.md §2–§3).
type clawdFormat struct{}

func (clawdFormat) Agent() Agent { return Clawdcode }

func (clawdFormat) KnownType(t string) bool {
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
			Input  flexInt `json:"input_tokens"`
			Output flexInt `json:"output_tokens"`
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
		PostTokens flexInt `json:"postTokens"`
	} `json:"compactMetadata"`
}

func (clawdFormat) decode(obj []byte, r *Record) {
	var l clawdLine
	if err := json.Unmarshal(obj, &l); err != nil {
		r.Kind = KindUnknown
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
	r.Timestamp = parseTime(l.Timestamp)
	if l.CompactMetadata != nil && l.CompactMetadata.PostTokens.ok {
		r.ContextTokens = l.CompactMetadata.PostTokens.v
	}
	if l.Message != nil {
		r.Model = l.Message.Model
		r.Text = rawTextOrParts(l.Message.Content)
		if l.Message.Usage != nil {
			r.Usage = &Usage{Input: l.Message.Usage.Input.v, Output: l.Message.Usage.Output.v}
		}
	}
	switch l.Type {
	case "user":
		r.Role = RoleUser
		if l.IsCompactSummary {
			r.Kind = KindCompaction
		} else {
			r.UserPrompt = true
			r.Prompt = r.Text
		}
	case "assistant":
		r.Role = RoleAssistant
	case "tool_use":
		r.Role = RoleAssistant
		if l.Tool != nil {
			r.ToolCalls = []ToolCall{{ID: l.Tool.ID, Name: l.Tool.Name, Input: rawText(l.Tool.Input)}}
		}
	case "tool_result":
		r.Role = RoleTool
		if l.ToolResult != nil {
			isErr := len(l.ToolResult.Error) > 0 && string(l.ToolResult.Error) != "null"
			r.ToolResults = []ToolResult{{CallID: l.ToolResult.ID, Output: rawText(l.ToolResult.Output), IsError: isErr}}
			r.Text = r.ToolResults[0].Output
		}
	case "system":
		r.Role = RoleSystem
		if l.Subtype == "compact_boundary" {
			r.Kind = KindCompaction
			r.Type = "system/compact_boundary"
		}
	default:
		r.Kind = KindUnknown
	}
}

// rawTextOrParts renders clawdcode content, which may be any JSON value.
func rawTextOrParts(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '[' {
		return textOf(raw)
	}
	return rawText(raw)
}
