package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Item is one piece of the conversation a model call carried, in the
// order the client sent it: a text, a tool call, a tool result or a
// thinking (reasoning) item. A message with two text blocks and a tool
// call is three items; consecutive messages are not merged. The e2e
// oracle compares these with what `sessctl show --json` predicted.
type Item struct {
	// Role is the message's role: "user", "assistant", "system",
	// "developer"; tool results are "tool" (whatever message carries them).
	Role string `json:"role"`
	// Type is ItemText, ItemToolCall, ItemToolResult or ItemThinking, or
	// the wire type of anything else ("image", "web_search_call", …), so
	// that an unexpected item shows up in a comparison instead of vanishing.
	Type string `json:"type"`
	// Text is the text; a tool call's input (JSON); a tool result's
	// output (its text parts joined with "\n"); a thinking block's text or
	// a reasoning item's summary.
	Text string `json:"text,omitempty"`
	// Name is a tool call's tool; ID the call id (tool calls and results).
	Name string `json:"name,omitempty"`
	ID   string `json:"id,omitempty"`
}

// Item types.
const (
	ItemText       = "text"
	ItemToolCall   = "tool_call"
	ItemToolResult = "tool_result"
	ItemThinking   = "thinking"
)

func (it Item) String() string {
	s := it.Role + " " + it.Type
	if it.Name != "" {
		s += " " + it.Name
	}
	if it.ID != "" {
		s += " [" + it.ID + "]"
	}
	return s + " " + fmt.Sprintf("%q", clip(it.Text, 120))
}

// Items flattens the conversation of a model call into items, in the
// order sent:
//
//   - Messages API: every messages[] entry, each content block in order
//     (a string content is one text block); tool_use blocks are tool
//     calls, tool_result blocks tool results, thinking blocks thinking
//     (redacted_thinking with an empty text). The system prompt (the
//     top-level "system") is not part of it.
//   - Responses API: every input[] item: a message is one text item, its
//     text parts (input_text, output_text) joined by "\n" (as a rollout
//     keeps one message per line, and Codex sends each as it is, where
//     Claude Code merges lines into messages); function_call and
//     custom_tool_call are tool calls (their arguments or input as
//     text), function_call_output and custom_tool_call_output tool
//     results, reasoning a thinking item with its summary texts joined
//     by "\n".
//   - Chat Completions: every messages[] entry: its reasoning_content a
//     thinking item, its text parts joined by "\n" a text item (none for
//     an assistant message with only tool calls), each tool_calls entry a
//     tool call (arguments as text), a role "tool" message a tool result.
//
// Nothing is filtered: which items are the client's injected context is
// the e2e harness's business (one rule per agent, docs/show.md).
func (r Request) Items() ([]Item, error) {
	switch r.Kind {
	case KindMessages:
		req, err := decodeAnthropic(r.Body)
		if err != nil {
			return nil, err
		}
		return req.items(), nil
	case KindResponses:
		req, err := decodeResponses(r.Body)
		if err != nil {
			return nil, err
		}
		return req.items()
	case KindChat:
		req, err := decodeChat(r.Body)
		if err != nil {
			return nil, err
		}
		return req.items(), nil
	}
	return nil, fmt.Errorf("fakemodel: request %d (%s %s) is not a model call", r.N, r.Method, r.Path)
}

// fullBlock is a Messages API content block with every field the items
// need.
type fullBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func (req *anthropicRequest) items() []Item {
	var out []Item
	for _, m := range req.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			out = append(out, Item{Role: m.Role, Type: ItemText, Text: s})
			continue
		}
		var bs []fullBlock
		if json.Unmarshal(m.Content, &bs) != nil {
			out = append(out, Item{Role: m.Role, Type: "content?", Text: string(m.Content)})
			continue
		}
		for _, b := range bs {
			switch b.Type {
			case "text":
				out = append(out, Item{Role: m.Role, Type: ItemText, Text: b.Text})
			case "thinking":
				out = append(out, Item{Role: m.Role, Type: ItemThinking, Text: b.Thinking})
			case "redacted_thinking":
				out = append(out, Item{Role: m.Role, Type: ItemThinking})
			case "tool_use", "server_tool_use":
				out = append(out, Item{Role: m.Role, Type: ItemToolCall, Name: b.Name, ID: b.ID, Text: string(bytes.TrimSpace(b.Input))})
			case "tool_result":
				out = append(out, Item{Role: "tool", Type: ItemToolResult, ID: b.ToolUseID, Text: toolResultText(b.Content)})
			default:
				out = append(out, Item{Role: m.Role, Type: b.Type})
			}
		}
	}
	return out
}

// fullItem is a Responses API input item with every field the items need.
type fullItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	CallID    string          `json:"call_id"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Summary   []responsesPart `json:"summary"`
}

func (req *responsesRequest) items() ([]Item, error) {
	// responsesRequest keeps only what the script needs; decode the input
	// again in full.
	var out []Item
	for _, it := range req.raw {
		var f fullItem
		if err := json.Unmarshal(it, &f); err != nil {
			return nil, fmt.Errorf("responses input item: %w", err)
		}
		switch {
		case f.Type == "message" || f.Type == "" && f.Role != "":
			var texts []string
			for _, t := range partsText(f.Content) {
				if t != "" {
					texts = append(texts, t)
				}
			}
			out = append(out, Item{Role: f.Role, Type: ItemText, Text: strings.Join(texts, "\n")})
		case f.Type == "function_call":
			out = append(out, Item{Role: "assistant", Type: ItemToolCall, Name: f.Name, ID: f.CallID, Text: f.Arguments})
		case f.Type == "custom_tool_call":
			out = append(out, Item{Role: "assistant", Type: ItemToolCall, Name: f.Name, ID: f.CallID, Text: f.Input})
		case f.Type == "function_call_output" || f.Type == "custom_tool_call_output":
			out = append(out, Item{Role: "tool", Type: ItemToolResult, ID: f.CallID, Text: strings.Join(partsText(f.Output), "\n")})
		case f.Type == "reasoning":
			var texts []string
			for _, p := range f.Summary {
				texts = append(texts, p.Text)
			}
			out = append(out, Item{Role: "assistant", Type: ItemThinking, Text: strings.Join(texts, "\n")})
		default:
			out = append(out, Item{Role: f.Role, Type: f.Type})
		}
	}
	return out, nil
}
