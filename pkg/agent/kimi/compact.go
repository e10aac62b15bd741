package kimi

import (
	"context"
	"errors"
	"strings"

	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// Kimi CLI's compaction (kimi.md §4.7, docs/compact.md): Kimi's clear()
// layout, a fresh context.jsonl after the old one is rotated to
// context_N.jsonl: the last _system_prompt line (verbatim), _checkpoint 0
// (plus <system>CHECKPOINT 0</system> when the agent writes those), the
// summary user message, the kept messages, and a _usage record with Kimi's
// own estimate. Private records are written as json.dumps writes them,
// messages compact, as pydantic does.

// CompactLayout implements layout.Writer.
func (Home) CompactLayout(ctx context.Context, src layout.Source) (layout.Layout, error) {
	return &compactLayout{ctx: ctx, src: src}, nil
}

type compactLayout struct {
	ctx context.Context
	src layout.Source
}

// SameResponse implements layout.Layout: Kimi counts each assistant
// message (one per step) for its own compaction's preserved messages.
func (*compactLayout) SameResponse(prev, m *session.Message) bool { return false }

// Compacted implements layout.Layout.
func (*compactLayout) Compacted(*session.Message, int) {}

// EarlierSummary implements layout.Layout.
func (*compactLayout) EarlierSummary(text string) string {
	return strings.TrimPrefix(strings.TrimPrefix(text, SummaryPrefix), "\n")
}

// Item implements layout.Layout. The line is read as Kimi reads it
// (invalid UTF-8 replaced); a message line in json.dumps style (older
// tools, test fixtures) is written back compact, as Kimi writes messages.
func (*compactLayout) Item(m *session.Message, raw []byte, _ int) (*layout.Item, error) {
	l := layout.RawLine(m.Offset, raw)
	Repair(&l)
	r := session.Decode(Home{}, &l)
	if r.Kind != session.KindMessage {
		return nil, nil
	}
	v, err := ojson.Parse(l.Raw)
	if err != nil || !v.Is(ojson.Object) {
		return nil, errors.New("a kept line is not a JSON object")
	}
	if strings.HasPrefix(string(l.Raw), `{"role": `) {
		if v, err = ojson.Parse(ojson.Fresh.Encode(v)); err != nil {
			return nil, err
		}
	}
	return &layout.Item{Value: v, Role: r.Role, Text: r.Text, Calls: r.ToolCalls, Results: r.ToolResults, Injected: m.Injected}, nil
}

// Shorten implements layout.Layout.
func (*compactLayout) Shorten(it *layout.Item, f func(string) (string, bool)) int {
	if it.Value.GetString("role") != "tool" {
		return 0
	}
	c, n := layout.ShortenText(it.Value.Get("content"), f)
	if n > 0 {
		it.Value.Set("content", c)
	}
	return n
}

// Aborted implements layout.Layout.
func (*compactLayout) Aborted(call session.ToolCall, _ *layout.Item) *layout.Item {
	text := "<system>ERROR: aborted (no result was recorded before the context was compacted)</system>"
	v := ojson.Obj(ojson.KV("role", ojson.Str("tool")), ojson.KV("content", ojson.Str(text)), ojson.KV("tool_call_id", ojson.Str(call.ID)))
	return &layout.Item{Value: v, Role: session.RoleTool, Text: text, Aborted: true,
		Results: []session.ToolResult{{CallID: call.ID, Output: text, IsError: true}}}
}

// SummaryText implements layout.Layout.
func (*compactLayout) SummaryText(c *layout.Compaction) string {
	return SummaryPrefix + "\n" + c.Summary
}

// usageEstimate is Kimi's own estimate after a compaction: the summary's
// tokens plus the tail's text characters // 4.
func usageEstimate(summaryTokens int, tail []*layout.Item) int64 {
	chars := 0
	for _, it := range tail {
		chars += len([]rune(it.Text))
	}
	return int64(summaryTokens + chars/4)
}

// contextScan is what the layout reads of the whole context file.
type contextScan struct {
	systemPrompt []byte // the last _system_prompt line, verbatim
	dmail        bool   // the agent writes CHECKPOINT messages
	crlf         bool
	// lines Kimi cannot use (corrupt, or rejected by its restore), before
	// the split and from it on
	badBefore, badTail int
}

func (l *compactLayout) scan(split int64) (*contextScan, error) {
	sc := &contextScan{}
	first := true
	err := l.src.Forward(l.ctx, 0, func(ln *jsonl.Line) error {
		if first {
			first = false
			sc.crlf = ln.EOL == jsonl.CRLF
		}
		Repair(ln)
		r := session.Decode(Home{}, ln)
		bad := r.Kind != session.KindBlank && !accepted(&r)
		switch {
		case r.Kind == session.KindSystemPrompt:
			sc.systemPrompt = append(sc.systemPrompt[:0], ln.Raw...)
		case r.Role == session.RoleUser && strings.HasPrefix(r.Text, "<system>CHECKPOINT "):
			sc.dmail = true
		}
		if bad {
			if ln.Offset < split {
				sc.badBefore++
			} else {
				sc.badTail++
			}
		}
		return nil
	})
	return sc, err
}

// Write implements layout.Layout.
func (l *compactLayout) Write(c *layout.Compaction) (*layout.Output, error) {
	sc, err := l.scan(c.SplitOffset)
	if err != nil {
		return nil, err
	}
	out := &layout.Output{EOL: "\n", LeftOutCompacted: sc.badBefore, LeftOutTail: sc.badTail}
	if sc.crlf {
		out.EOL = "\r\n"
	}
	if sc.systemPrompt != nil {
		out.Lines = append(out.Lines, sc.systemPrompt)
	}
	out.Lines = append(out.Lines, ojson.Python.Encode(ojson.Obj(ojson.KV("role", ojson.Str("_checkpoint")), ojson.KV("id", ojson.Int(0)))))
	if sc.dmail {
		out.Lines = append(out.Lines, ojson.Compact.Encode(ojson.Obj(ojson.KV("role", ojson.Str("user")), ojson.KV("content", ojson.Str("<system>CHECKPOINT 0</system>")))))
	}
	msg := ojson.Obj(ojson.KV("role", ojson.Str("user")), ojson.KV("content", ojson.Arr(
		ojson.Obj(ojson.KV("type", ojson.Str("text")), ojson.KV("text", ojson.Str(SummaryPrefix))),
		ojson.Obj(ojson.KV("type", ojson.Str("text")), ojson.KV("text", ojson.Str(c.Summary))),
	)))
	out.Lines = append(out.Lines, ojson.Compact.Encode(msg))
	for _, it := range c.Tail {
		out.Lines = append(out.Lines, ojson.Compact.Encode(it.Value))
	}
	est := usageEstimate(c.SummaryTokens, c.Tail)
	out.Lines = append(out.Lines, ojson.Python.Encode(ojson.Obj(ojson.KV("role", ojson.Str("_usage")), ojson.KV("token_count", ojson.Int(est)))))
	out.Recorded = est
	return out, nil
}
