package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// obj is a JSON object that keeps its key order, so events look like the
// real APIs' ("type" first).
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON implements json.Marshaler.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// sse writes Server-Sent Events: "event: <name>\ndata: <one-line JSON>\n\n",
// flushed after each event. The first write error stops all later writes
// (the client went away; there is nobody to tell).
type sse struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error
}

func newSSE(w http.ResponseWriter, extra map[string]string) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	for k, v := range extra {
		h.Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w)}
}

func (s *sse) event(name string, data any) {
	if s.err != nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		s.err = err
		return
	}
	if _, s.err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b); s.err != nil {
		return
	}
	s.err = s.rc.Flush()
}

// split cuts s into two pieces at a rune boundary near the middle, so
// clients have to concatenate deltas; short strings stay whole.
func split(s string) []string {
	if len(s) < 8 {
		return []string{s}
	}
	i := len(s) / 2
	for i < len(s) && !utf8RuneStart(s[i]) {
		i++
	}
	if i == len(s) {
		return []string{s}
	}
	return []string{s[:i], s[i:]}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// ---- Anthropic Messages API ----

func anthropicUsage(u Usage, outputTokens int) obj {
	return obj{
		{"input_tokens", u.InputTokens},
		{"cache_creation_input_tokens", u.CacheCreationInputTokens},
		{"cache_read_input_tokens", u.CacheReadInputTokens},
		{"output_tokens", outputTokens},
		{"service_tier", "standard"},
	}
}

func (p *Plan) stopReason() string {
	if p.Tool != nil {
		return "tool_use"
	}
	return "end_turn"
}

// anthropicContent is the reply's content blocks, complete.
func (p *Plan) anthropicContent() []obj {
	var c []obj
	if p.Thinking != "" {
		c = append(c, obj{{"type", "thinking"}, {"thinking", p.Thinking}, {"signature", p.Sig}})
	}
	if p.Text != "" {
		c = append(c, obj{{"type", "text"}, {"text", p.Text}})
	}
	if p.Tool != nil {
		c = append(c, obj{{"type", "tool_use"}, {"id", p.Tool.ID}, {"name", p.Tool.Name}, {"input", p.Tool.Input}})
	}
	return c
}

func requestID(p Plan) string { return "req_" + strings.TrimPrefix(p.ID, "msg_") }

func serveAnthropic(w http.ResponseWriter, p Plan) {
	extra := map[string]string{"request-id": requestID(p)}
	if !p.Stream {
		for k, v := range extra {
			w.Header().Set(k, v)
		}
		writeJSON(w, http.StatusOK, obj{
			{"id", p.ID}, {"type", "message"}, {"role", "assistant"}, {"model", p.Model},
			{"content", p.anthropicContent()},
			{"stop_reason", p.stopReason()}, {"stop_sequence", nil},
			{"usage", anthropicUsage(p.Usage, p.Usage.OutputTokens)},
		})
		return
	}
	s := newSSE(w, extra)
	s.event("message_start", obj{{"type", "message_start"}, {"message", obj{
		{"id", p.ID}, {"type", "message"}, {"role", "assistant"}, {"model", p.Model},
		{"content", []any{}}, {"stop_reason", nil}, {"stop_sequence", nil},
		{"usage", anthropicUsage(p.Usage, 1)},
	}}})
	s.event("ping", obj{{"type", "ping"}})
	index := 0
	block := func(start obj, deltas []obj) {
		s.event("content_block_start", obj{{"type", "content_block_start"}, {"index", index}, {"content_block", start}})
		for _, d := range deltas {
			s.event("content_block_delta", obj{{"type", "content_block_delta"}, {"index", index}, {"delta", d}})
		}
		s.event("content_block_stop", obj{{"type", "content_block_stop"}, {"index", index}})
		index++
	}
	if p.Thinking != "" {
		var ds []obj
		for _, part := range split(p.Thinking) {
			ds = append(ds, obj{{"type", "thinking_delta"}, {"thinking", part}})
		}
		ds = append(ds, obj{{"type", "signature_delta"}, {"signature", p.Sig}})
		block(obj{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, ds)
	}
	if p.Text != "" {
		var ds []obj
		for _, part := range split(p.Text) {
			ds = append(ds, obj{{"type", "text_delta"}, {"text", part}})
		}
		block(obj{{"type", "text"}, {"text", ""}}, ds)
	}
	if p.Tool != nil {
		var ds []obj
		for _, part := range split(string(p.Tool.Input)) {
			ds = append(ds, obj{{"type", "input_json_delta"}, {"partial_json", part}})
		}
		block(obj{{"type", "tool_use"}, {"id", p.Tool.ID}, {"name", p.Tool.Name}, {"input", obj{}}}, ds)
	}
	u := p.Usage
	s.event("message_delta", obj{{"type", "message_delta"},
		{"delta", obj{{"stop_reason", p.stopReason()}, {"stop_sequence", nil}}},
		{"usage", obj{
			{"input_tokens", u.InputTokens},
			{"cache_creation_input_tokens", u.CacheCreationInputTokens},
			{"cache_read_input_tokens", u.CacheReadInputTokens},
			{"output_tokens", u.OutputTokens},
		}},
	})
	s.event("message_stop", obj{{"type", "message_stop"}})
}

// ---- OpenAI Responses API ----

// createdAt is the fixed creation time of every response (2026-01-01 UTC),
// so replies are byte-for-byte deterministic.
const createdAt = 1767225600

func (p *Plan) responsesItems() (reasoning, message, call obj) {
	if p.Thinking != "" {
		reasoning = obj{{"type", "reasoning"}, {"id", p.ThinkID},
			{"summary", []obj{{{"type", "summary_text"}, {"text", p.Thinking}}}},
			{"content", nil}, {"encrypted_content", p.Sig}}
	}
	if p.Text != "" {
		message = obj{{"type", "message"}, {"id", p.TextID}, {"role", "assistant"}, {"status", "completed"},
			{"content", []obj{{{"type", "output_text"}, {"text", p.Text}, {"annotations", []any{}}}}}}
	}
	if p.Tool != nil {
		call = obj{{"type", "function_call"}, {"id", p.Tool.ItemID}, {"status", "completed"},
			{"name", p.Tool.Name}, {"arguments", string(p.Tool.Input)}, {"call_id", p.Tool.ID}}
	}
	return reasoning, message, call
}

func (p *Plan) responseObject(status string, output []obj) obj {
	o := obj{{"id", p.ID}, {"object", "response"}, {"created_at", createdAt}, {"model", p.Model},
		{"status", status}, {"output", output}}
	if status == "completed" {
		u := p.Usage
		o = append(o, kv{"usage", obj{
			{"input_tokens", u.InputTokens},
			{"input_tokens_details", obj{{"cached_tokens", u.CachedTokens}}},
			{"output_tokens", u.OutputTokens},
			{"output_tokens_details", obj{{"reasoning_tokens", u.ReasoningTokens}}},
			{"total_tokens", u.TotalTokens},
		}})
	}
	return o
}

func serveResponses(w http.ResponseWriter, p Plan) {
	reasoning, message, call := p.responsesItems()
	var output []obj
	for _, it := range []obj{reasoning, message, call} {
		if it != nil {
			output = append(output, it)
		}
	}
	if !p.Stream {
		writeJSON(w, http.StatusOK, p.responseObject("completed", output))
		return
	}
	s := newSSE(w, map[string]string{"x-request-id": "req_" + strings.TrimPrefix(p.ID, "resp_")})
	seq := 0
	ev := func(name string, fields ...kv) {
		s.event(name, append(obj{{"type", name}, {"sequence_number", seq}}, fields...))
		seq++
	}
	ev("response.created", kv{"response", p.responseObject("in_progress", []obj{})})
	ev("response.in_progress", kv{"response", p.responseObject("in_progress", []obj{})})
	idx := 0
	if reasoning != nil {
		ev("response.output_item.added", kv{"output_index", idx}, kv{"item", obj{{"type", "reasoning"},
			{"id", p.ThinkID}, {"summary", []any{}}, {"content", nil}, {"encrypted_content", nil}}})
		common := []kv{{"item_id", p.ThinkID}, {"output_index", idx}, {"summary_index", 0}}
		ev("response.reasoning_summary_part.added", append(common, kv{"part", obj{{"type", "summary_text"}, {"text", ""}}})...)
		for _, part := range split(p.Thinking) {
			ev("response.reasoning_summary_text.delta", append(common, kv{"delta", part})...)
		}
		ev("response.reasoning_summary_text.done", append(common, kv{"text", p.Thinking})...)
		ev("response.reasoning_summary_part.done", append(common, kv{"part", obj{{"type", "summary_text"}, {"text", p.Thinking}}})...)
		ev("response.output_item.done", kv{"output_index", idx}, kv{"item", reasoning})
		idx++
	}
	if message != nil {
		ev("response.output_item.added", kv{"output_index", idx}, kv{"item", obj{{"type", "message"},
			{"id", p.TextID}, {"role", "assistant"}, {"status", "in_progress"}, {"content", []any{}}}})
		common := []kv{{"output_index", idx}, {"item_id", p.TextID}, {"content_index", 0}}
		for _, part := range split(p.Text) {
			ev("response.output_text.delta", append(common, kv{"delta", part})...)
		}
		ev("response.output_text.done", append(common, kv{"text", p.Text})...)
		ev("response.output_item.done", kv{"output_index", idx}, kv{"item", message})
		idx++
	}
	if call != nil {
		args := string(p.Tool.Input)
		ev("response.output_item.added", kv{"output_index", idx}, kv{"item", obj{{"type", "function_call"},
			{"id", p.Tool.ItemID}, {"status", "in_progress"}, {"name", p.Tool.Name}, {"arguments", ""}, {"call_id", p.Tool.ID}}})
		common := []kv{{"output_index", idx}, {"item_id", p.Tool.ItemID}}
		for _, part := range split(args) {
			ev("response.function_call_arguments.delta", append(common, kv{"delta", part})...)
		}
		ev("response.function_call_arguments.done", append(common, kv{"arguments", args})...)
		ev("response.output_item.done", kv{"output_index", idx}, kv{"item", call})
	}
	ev("response.completed", kv{"response", p.responseObject("completed", output)})
}
