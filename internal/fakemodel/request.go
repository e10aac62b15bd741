package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Request is one logged request, as written to the log (one JSON line).
type Request struct {
	N        int               `json:"n"` // 1-based arrival number
	Time     string            `json:"t"` // arrival time, RFC 3339 UTC (the only nondeterministic field)
	Kind     string            `json:"kind"`
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Query    string            `json:"query,omitempty"`
	Headers  map[string]string `json:"headers"`             // lower-case names; credentials removed
	Body     json.RawMessage   `json:"body,omitempty"`      // the JSON body, compacted
	BodyText string            `json:"body_text,omitempty"` // a body that is not JSON
	Error    string            `json:"error,omitempty"`     // why the request was refused
	Reply    *Plan             `json:"reply,omitempty"`     // what the server answered
}

// Header returns the value of a request header (case-insensitive name).
func (r Request) Header(name string) string { return r.Headers[strings.ToLower(name)] }

// IsModelCall reports whether r asked a model for an answer (a Messages or
// Responses request).
func (r Request) IsModelCall() bool {
	return r.Kind == KindMessages || r.Kind == KindResponses || r.Kind == KindChat
}

// CodexTurnMetadata decodes Codex's X-Codex-Turn-Metadata header (a JSON
// object with session_id, thread_id, turn_id, window_number, request_kind,
// history_initialization, …). It returns nil if the header is absent or is
// not a JSON object.
func (r Request) CodexTurnMetadata() map[string]any {
	h := r.Header("X-Codex-Turn-Metadata")
	if h == "" {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(h), &m) != nil {
		return nil
	}
	return m
}

// UserTexts returns the user-authored texts the client sent, in order:
//
//   - Messages API: for every messages[] entry with role "user", the string
//     content or each "text" block, except <system-reminder> blocks (tool_result
//     blocks are not user texts);
//   - Responses API: for every input[] item of type "message" with role
//     "user", each input_text part, except the context Codex injects
//     (<environment_context>, <user_instructions>, AGENTS.md, …);
//   - Chat Completions: for every messages[] entry with role "user", the
//     string content or each text part.
//
// Texts that clients synthesise as user messages (Claude's "Continue from
// where you left off.", /compact command echoes, Codex's compaction bridge
// message) are included: they are what the model saw.
func (r Request) UserTexts() ([]string, error) {
	switch r.Kind {
	case KindMessages:
		req, err := decodeAnthropic(r.Body)
		if err != nil {
			return nil, err
		}
		return req.userTexts(), nil
	case KindResponses:
		req, err := decodeResponses(r.Body)
		if err != nil {
			return nil, err
		}
		return req.userTexts(), nil
	case KindChat:
		req, err := decodeChat(r.Body)
		if err != nil {
			return nil, err
		}
		return req.userTexts(), nil
	}
	return nil, fmt.Errorf("fakemodel: request %d (%s %s) is not a model call", r.N, r.Method, r.Path)
}

// ---- Anthropic Messages API ----

type anthropicRequest struct {
	Model    string             `json:"model"`
	Stream   bool               `json:"stream"`
	Messages []anthropicMessage `json:"messages"`
	Tools    []json.RawMessage  `json:"tools"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
}

func decodeAnthropic(body []byte) (*anthropicRequest, error) {
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("messages request body: %w", err)
	}
	return &req, nil
}

// blocks returns a message's content as blocks; a string becomes one text
// block. Content that is neither yields no blocks.
func (m anthropicMessage) blocks() []anthropicBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	if json.Unmarshal(m.Content, &bs) != nil {
		return nil
	}
	return bs
}

func isSystemReminder(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "<system-reminder>")
}

// texts returns the user-authored text blocks of a message.
func (m anthropicMessage) texts() []string {
	var out []string
	for _, b := range m.blocks() {
		if b.Type == "text" && !isSystemReminder(b.Text) {
			out = append(out, b.Text)
		}
	}
	return out
}

func (req *anthropicRequest) userTexts() []string {
	out := []string{}
	for _, m := range req.Messages {
		if m.Role == "user" {
			out = append(out, m.texts()...)
		}
	}
	return out
}

// toolResultText flattens a tool_result content (a string or text blocks).
func toolResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []anthropicBlock
	if json.Unmarshal(raw, &bs) != nil {
		return ""
	}
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ---- OpenAI Responses API ----

type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Input  []responsesItem   `json:"input"`
	Tools  []json.RawMessage `json:"tools"`
	// raw is input[] undecoded (Items decodes it in full).
	raw []json.RawMessage
}

type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or parts
	CallID  string          `json:"call_id"`
	Name    string          `json:"name"`
	Output  json.RawMessage `json:"output"` // a string or parts
}

type responsesPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func decodeResponses(body []byte) (*responsesRequest, error) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("responses request body: %w", err)
	}
	var raw struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("responses request body: %w", err)
	}
	req.raw = raw.Input
	return &req, nil
}

// partsText returns the texts of a string or of text parts (input_text,
// output_text, text).
func partsText(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var ps []responsesPart
	if json.Unmarshal(raw, &ps) != nil {
		return nil
	}
	var out []string
	for _, p := range ps {
		switch p.Type {
		case "input_text", "output_text", "text":
			out = append(out, p.Text)
		}
	}
	return out
}

// injectedPrefixes start the user-role messages Codex injects as context.
var injectedPrefixes = []string{
	"<environment_context>",
	"<user_instructions>",
	"<skills_instructions>",
	"<permissions instructions>",
	"<user_shell_command>",
	"# AGENTS.md instructions",
}

// IsCodexInjectedContext reports whether a user-role text is context Codex
// injects rather than something the user typed.
func IsCodexInjectedContext(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range injectedPrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// userTexts returns the user-authored texts of a user message item.
func (it responsesItem) userTexts() []string {
	if !isMessage(it) || it.Role != "user" {
		return nil
	}
	var out []string
	for _, t := range partsText(it.Content) {
		if !IsCodexInjectedContext(t) {
			out = append(out, t)
		}
	}
	return out
}

func (req *responsesRequest) userTexts() []string {
	out := []string{}
	for _, it := range req.Input {
		out = append(out, it.userTexts()...)
	}
	return out
}
