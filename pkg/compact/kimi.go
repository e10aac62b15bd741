package compact

import (
	"bytes"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// KimiSummaryPrefix is the first text part of Kimi's compaction summary
// message (kimi.md §4.7).
const KimiSummaryPrefix = "<system>Previous context has been compacted. Here is the compaction output:</system>"

// kimiWriter writes Kimi's clear() layout: _system_prompt (kept),
// _checkpoint 0, the summary user message, the kept tail, a _usage estimate.
type kimiWriter struct {
	systemPrompt []byte // the last _system_prompt line, verbatim
	dmail        bool   // the agent writes CHECKPOINT messages
	crlf         bool
	first        bool
}

func (w *kimiWriter) observe(r *session.Record) {
	if !w.first {
		w.first = true
		w.crlf = r.Line.EOL == jsonl.CRLF
	}
	switch {
	case r.Kind == session.KindSystemPrompt:
		w.systemPrompt = append(w.systemPrompt[:0], r.Line.Raw...)
	case r.Role == session.RoleUser && strings.HasPrefix(r.Text, "<system>CHECKPOINT "):
		w.dmail = true
	}
}

func (w *kimiWriter) seeCompacted(*session.Record) {}

func (w *kimiWriter) tailItem(r *session.Record) *titem {
	if r.Kind != session.KindMessage {
		return nil
	}
	it := parseItem(r)
	if it != nil && bytes.HasPrefix(it.raw, []byte(`{"role": `)) {
		// a message line in json.dumps style (older tools, test fixtures):
		// Kimi writes messages back compact, so does sessctl
		it.raw = style{}.encode(nil, it.val)
	}
	return it
}

func (w *kimiWriter) truncate(it *titem, f func(string) (string, bool)) int {
	if it.val.getStr("role") != "tool" {
		return 0
	}
	c, n := shortenContent(it.val.get("content"), f)
	if n > 0 {
		it.val.set("content", c)
	}
	return n
}

func (w *kimiWriter) aborted(call session.ToolCall, _ *titem) *titem {
	text := "<system>ERROR: aborted (no result was recorded before the context was compacted)</system>"
	v := jobj(kv("role", jstr("tool")), kv("content", jstr(text)), kv("tool_call_id", jstr(call.ID)))
	return &titem{val: v, role: session.RoleTool, text: text, aborted: true,
		results: []session.ToolResult{{CallID: call.ID, Output: text, IsError: true}}}
}

func (w *kimiWriter) summaryText(c *compaction) string {
	return KimiSummaryPrefix + "\n" + c.summary
}

// kimiUsageEstimate is Kimi's own estimate after a compaction: the summary's
// tokens plus the tail's text characters // 4.
func kimiUsageEstimate(summaryTokens int, tail []*titem) int64 {
	chars := 0
	for _, it := range tail {
		chars += len([]rune(it.text))
	}
	return int64(summaryTokens + chars/4)
}

func (w *kimiWriter) lines(c *compaction) ([][]byte, int64, error) {
	var out [][]byte
	if w.systemPrompt != nil {
		out = append(out, w.systemPrompt)
	}
	out = append(out, pythonStyle.encode(nil, jobj(kv("role", jstr("_checkpoint")), kv("id", jint(0)))))
	if w.dmail {
		out = append(out, compactStyle.encode(nil, jobj(kv("role", jstr("user")), kv("content", jstr("<system>CHECKPOINT 0</system>")))))
	}
	msg := jobj(kv("role", jstr("user")), kv("content", jarr(
		jobj(kv("type", jstr("text")), kv("text", jstr(KimiSummaryPrefix))),
		jobj(kv("type", jstr("text")), kv("text", jstr(c.summary))),
	)))
	out = append(out, compactStyle.encode(nil, msg))
	for _, it := range c.tail {
		out = append(out, it.bytes())
	}
	est := kimiUsageEstimate(int(c.summaryTokens), c.tail)
	out = append(out, pythonStyle.encode(nil, jobj(kv("role", jstr("_usage")), kv("token_count", jint(est)))))
	return out, est, nil
}

func (w *kimiWriter) appends() bool { return false }

func (w *kimiWriter) eol() string {
	if w.crlf {
		return "\r\n"
	}
	return "\n"
}
