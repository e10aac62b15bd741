package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ---- OpenAI Chat Completions API (Kimi Code) ----
//
// Kimi Code 2.1.0 with a provider of type "openai" posts to
// /v1/chat/completions, streamed, with stream_options.include_usage.

type chatRequest struct {
	Model         string            `json:"model"`
	Stream        bool              `json:"stream"`
	Messages      []chatMessage     `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"` // a string, parts or null
	ReasoningContent string          `json:"reasoning_content"`
	ToolCalls        []chatToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func decodeChat(body []byte) (*chatRequest, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("chat completions request body: %w", err)
	}
	return &req, nil
}

// texts returns the texts of a message's content: a string, or the text
// parts of a parts array. null content yields none.
func (m chatMessage) texts() []string {
	return partsText(m.Content)
}

// promptTexts returns the user-authored texts of a message: its texts
// except <system-reminder> ones (Kimi Code sends the date and the
// permission mode as user messages of their own after the prompt).
func (m chatMessage) promptTexts() []string {
	var out []string
	for _, t := range m.texts() {
		if !isSystemReminder(t) {
			out = append(out, t)
		}
	}
	return out
}

func (req *chatRequest) userTexts() []string {
	out := []string{}
	for _, m := range req.Messages {
		if m.Role == "user" {
			out = append(out, m.promptTexts()...)
		}
	}
	return out
}

// items flattens a Chat Completions request: every messages[] entry in
// order; a message's text parts joined by "\n" make one text item (an
// empty or null content makes none when the message has tool calls), its
// reasoning_content a thinking item before it, each tool call a tool call
// item, and a role "tool" message a tool result.
func (req *chatRequest) items() []Item {
	var out []Item
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, Item{Role: "tool", Type: ItemToolResult, ID: m.ToolCallID, Text: strings.Join(m.texts(), "\n")})
			continue
		}
		if m.ReasoningContent != "" {
			out = append(out, Item{Role: m.Role, Type: ItemThinking, Text: m.ReasoningContent})
		}
		text := strings.Join(m.texts(), "\n")
		if text != "" || len(m.ToolCalls) == 0 {
			out = append(out, Item{Role: m.Role, Type: ItemText, Text: text})
		}
		for _, c := range m.ToolCalls {
			out = append(out, Item{Role: m.Role, Type: ItemToolCall, Name: c.Function.Name, ID: c.ID, Text: c.Function.Arguments})
		}
	}
	return out
}

// PlanChat decides the reply to a Chat Completions request body, with the
// rules of Plan: the last meaningful message (system messages and user
// messages made only of <system-reminder> texts skipped) is a tool result
// or a prompt steered by the keywords (NOTOOL, THINK: a reasoning_content
// delta, BIGUSAGE: prompt_tokens 200000 with 150000 cached, READ:<path>: a
// Read {"path": …} call, SLOWTOOL). The default tool call is Kimi Code's
// Bash {"command":"ls"}. Kimi Code's compaction request ("Create a handoff
// summary") gets the summary text; BIGUSAGE is ignored once the history
// holds a compaction summary (it quotes the prompt).
func PlanChat(body []byte) (Plan, error) {
	req, err := decodeChat(body)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{API: KindChat, Model: req.Model, Stream: req.Stream}
	if p.Model == "" {
		p.Model = defaultModelOpenAI
	}
	var prompt string
	for i := len(req.Messages) - 1; i >= 0 && prompt == ""; i-- {
		if m := req.Messages[i]; m.Role == "user" {
			prompt = strings.Join(m.promptTexts(), "\n")
		}
	}
	p.Prompt = clip(prompt, 200)

	var last *chatMessage
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := &req.Messages[i]
		if m.Role == "system" || m.Role == "developer" || (m.Role == "user" && len(m.promptTexts()) == 0) {
			continue
		}
		last = m
		break
	}
	toolResult := last != nil && last.Role == "tool"

	compacted := false // the history holds Kimi Code's compaction summary
	for _, m := range req.Messages {
		if m.Role == "user" && strings.HasPrefix(strings.Join(m.texts(), "\n"), kimiSummaryPrefix) {
			compacted = true
		}
	}

	switch {
	case !toolResult && strings.Contains(prompt, kimiCompactMarker):
		p.Reason = ReasonCompaction
		p.Text = summaryText(req.userTexts(), kimiCompactMarker)
	case toolResult:
		p.Reason = ReasonToolResult
		p.Text = "Done. The tool returned: " + clip(collapse(strings.Join(last.texts(), "\n")), 200)
	case last != nil && last.Role == "assistant":
		p.Reason = ReasonAssistantLast
		p.Text = ack(prompt)
	case len(req.Tools) == 0:
		p.Reason = ReasonNoTools
		p.Text = ack(prompt)
	case strings.Contains(prompt, KeywordNoTool):
		p.Reason = ReasonNoTool
		p.Text = ack(prompt)
	case readPath(prompt) != "":
		p.Reason = ReasonRead
		p.Text = "Let me read the file."
		p.Tool = &ToolCall{Name: "Read", Input: mustJSON(map[string]string{"path": readPath(prompt)})}
	default:
		p.Reason = ReasonDefault
		p.Text = "Let me list the files."
		p.Tool = &ToolCall{Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}
		if strings.Contains(prompt, KeywordSlowTool) {
			p.Tool.Input = mustJSON(map[string]string{"command": slowCommand})
		}
	}
	if p.Reason != ReasonCompaction && strings.Contains(prompt, KeywordThink) {
		p.Thinking = thinkingText
	}

	// Chat Completions usage: prompt_tokens includes the cached tokens.
	// BIGUSAGE not after a compaction: its summary quotes the prompt, and
	// Kimi Code would compact again and again
	p.openAIUsage(body, !toolResult && !compacted && p.Reason != ReasonCompaction && strings.Contains(prompt, KeywordBigUsage))
	return p, nil
}

// Kimi Code 2.1.0's compaction: the request's last user message starts
// "You are about to run out of context. Create a handoff summary …"; the
// summary then enters the history as a user message starting
// kimiSummaryPrefix.
const (
	kimiCompactMarker = "Create a handoff summary"
	kimiSummaryPrefix = "The conversation so far has been compacted"
)

func (p *Plan) finishReason() string {
	if p.Tool != nil {
		return "tool_calls"
	}
	return "stop"
}

func (p *Plan) chatUsage() obj {
	u := p.Usage
	o := obj{
		{"prompt_tokens", u.InputTokens},
		{"completion_tokens", u.OutputTokens},
		{"total_tokens", u.TotalTokens},
		{"prompt_tokens_details", obj{{"cached_tokens", u.CachedTokens}}},
	}
	if u.ReasoningTokens > 0 {
		o = append(o, kv{"completion_tokens_details", obj{{"reasoning_tokens", u.ReasoningTokens}}})
	}
	return o
}

func (p *Plan) chatToolCalls(withIndex bool) []obj {
	if p.Tool == nil {
		return nil
	}
	c := obj{}
	if withIndex {
		c = append(c, kv{"index", 0})
	}
	c = append(c, kv{"id", p.Tool.ID}, kv{"type", "function"},
		kv{"function", obj{{"name", p.Tool.Name}, {"arguments", string(p.Tool.Input)}}})
	return []obj{c}
}

// data writes one Chat Completions stream event: "data: <JSON>\n\n" (no
// event name), flushed.
func (s *sse) data(b []byte) {
	if s.err != nil {
		return
	}
	if _, s.err = fmt.Fprintf(s.w, "data: %s\n\n", b); s.err != nil {
		return
	}
	s.err = s.rc.Flush()
}

func serveChat(w http.ResponseWriter, p Plan, includeUsage bool) {
	if !p.Stream {
		msg := obj{{"role", "assistant"}, {"content", nilIfEmpty(p.Text)}}
		if p.Thinking != "" {
			msg = append(msg, kv{"reasoning_content", p.Thinking})
		}
		if p.Tool != nil {
			msg = append(msg, kv{"tool_calls", p.chatToolCalls(false)})
		}
		writeJSON(w, http.StatusOK, obj{
			{"id", p.ID}, {"object", "chat.completion"}, {"created", createdAt}, {"model", p.Model},
			{"choices", []obj{{{"index", 0}, {"message", msg}, {"finish_reason", p.finishReason()}}}},
			{"usage", p.chatUsage()},
		})
		return
	}
	s := newSSE(w, map[string]string{"x-request-id": "req_" + strings.TrimPrefix(p.ID, "chatcmpl-")})
	chunk := func(delta obj, finish any, usage any) {
		o := obj{{"id", p.ID}, {"object", "chat.completion.chunk"}, {"created", createdAt}, {"model", p.Model}}
		if delta == nil {
			o = append(o, kv{"choices", []any{}})
		} else {
			o = append(o, kv{"choices", []obj{{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}}})
		}
		if usage != nil {
			o = append(o, kv{"usage", usage})
		}
		b, err := json.Marshal(o)
		if err != nil {
			s.err = err
			return
		}
		s.data(b)
	}
	chunk(obj{{"role", "assistant"}, {"content", ""}}, nil, nil)
	for _, part := range split(p.Thinking) {
		if part != "" {
			chunk(obj{{"reasoning_content", part}}, nil, nil)
		}
	}
	for _, part := range split(p.Text) {
		if part != "" {
			chunk(obj{{"content", part}}, nil, nil)
		}
	}
	if p.Tool != nil {
		chunk(obj{{"tool_calls", []obj{{{"index", 0}, {"id", p.Tool.ID}, {"type", "function"},
			{"function", obj{{"name", p.Tool.Name}, {"arguments", ""}}}}}}}, nil, nil)
		for _, part := range split(string(p.Tool.Input)) {
			chunk(obj{{"tool_calls", []obj{{{"index", 0}, {"function", obj{{"arguments", part}}}}}}}, nil, nil)
		}
	}
	chunk(obj{}, p.finishReason(), nil)
	if includeUsage {
		chunk(nil, nil, p.chatUsage())
	}
	if s.err == nil {
		if _, s.err = s.w.Write([]byte("data: [DONE]\n\n")); s.err == nil {
			s.err = s.rc.Flush()
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// chatIncludeUsage reports whether a Chat Completions request asked for
// usage in the stream (stream_options.include_usage).
func chatIncludeUsage(body []byte) bool {
	req, err := decodeChat(body)
	return err == nil && req.StreamOptions != nil && req.StreamOptions.IncludeUsage
}
