package codex

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// Codex's compaction (codex.md §6, docs/compact.md), written as a turn of
// its own, the way Codex runs its own /compact: a task_started event, the
// compacted record whose replacement_history is the new history (summary,
// kept response items, the most recent injected context), a synthetic
// token_count with the new context size (as Codex writes after its own
// compaction), and a task_complete event. On resume Codex starts from the
// newest replacement_history that is not part of a rolled-back turn; a
// compacted record with no task_started between it and a rollback before it
// would be taken as part of the rolled-back turn and dropped (see
// conversation.go), which the turn of its own prevents.

// CompactLayout implements layout.Writer. It refuses rollouts Codex itself
// cannot resume.
func (Home) CompactLayout(ctx context.Context, src layout.Source) (layout.Layout, error) {
	first, err := src.LineAt(0)
	if err != nil {
		first = nil // an empty file: refused below
	}
	l := layout.RawLine(0, first)
	if r := session.Decode(Home{}, &l); r.Type != "session_meta" {
		return nil, errors.New("a rollout without session_meta (written before September 2025, or damaged): current Codex cannot resume it, so sessctl does not compact it")
	}
	lay := &compactLayout{src: src, ordinal: -1}
	n := 0
	err = src.Backward(ctx, func(off int64, raw []byte) (bool, error) {
		n++
		if n == 1 {
			if o, ok := Ordinal(raw); ok {
				lay.ordinal = o // the file has ordinals: continue them
			}
		}
		l := layout.RawLine(off, raw)
		r := session.Decode(Home{}, &l)
		switch {
		case lay.tokenCount == nil && r.Type == "event_msg/token_count" && r.ContextTokens >= 0:
			lay.tokenCount = append([]byte(nil), raw...)
		case lay.started == nil && (r.Type == "event_msg/task_started" || r.Type == "event_msg/turn_started"):
			lay.started = append([]byte(nil), raw...)
		case lay.complete == nil && (r.Type == "event_msg/task_complete" || r.Type == "event_msg/turn_complete"):
			lay.complete = append([]byte(nil), raw...)
		}
		done := lay.tokenCount != nil && lay.started != nil && lay.complete != nil
		return done || n >= templateLookBehind, nil
	})
	if err != nil {
		return nil, err
	}
	return lay, nil
}

// templateLookBehind bounds how far back the records copied for the
// compaction turn are looked for.
const templateLookBehind = 20000

type compactLayout struct {
	src layout.Source
	// ordinal is the last record's envelope ordinal, -1 without ordinals
	ordinal int64
	// the newest token_count with info, task_started, task_complete
	tokenCount, started, complete []byte
	// the most recent group of injected context in the compacted part
	ctx     []ref
	ctxOpen bool
}

// ref points at a live message: its line, and its place in it.
type ref struct {
	off  int64
	part int
}

// SameResponse implements layout.Layout: a response's reasoning, text and
// calls are consecutive items.
func (*compactLayout) SameResponse(prev, m *session.Message) bool { return true }

// Compacted implements layout.Layout: the newest run of injected context
// (permissions, environment, skills) is carried into the new history when
// the tail has none.
func (l *compactLayout) Compacted(m *session.Message, part int) {
	if m.Injected {
		if !l.ctxOpen {
			l.ctx, l.ctxOpen = nil, true
		}
		l.ctx = append(l.ctx, ref{m.Offset, part})
		return
	}
	l.ctxOpen = false
}

// EarlierSummary implements layout.Layout.
func (*compactLayout) EarlierSummary(text string) string {
	return strings.TrimPrefix(strings.TrimPrefix(text, SummaryPrefix), "\n")
}

// responseItem returns the response item a live message was read from:
// the payload of a response_item line, or item part of a compacted line's
// replacement history (its summary message when it has none).
func responseItem(raw []byte, part int) (*ojson.Value, error) {
	v, err := ojson.Parse(raw)
	if err != nil || !v.Is(ojson.Object) {
		return nil, errors.New("a kept line is not a JSON object")
	}
	p := v.Get("payload")
	if v.GetString("type") != "compacted" {
		if !p.Is(ojson.Object) {
			return nil, errors.New("a kept record has no payload")
		}
		return p.Clone(), nil
	}
	h := p.Get("replacement_history")
	if h == nil {
		return userMessage(p.GetString("message")), nil
	}
	if part >= len(h.Elems()) {
		return nil, fmt.Errorf("item %d of a replacement history of %d", part, len(h.Elems()))
	}
	return h.Elems()[part].Clone(), nil
}

func userMessage(text string) *ojson.Value {
	return ojson.Obj(ojson.KV("type", ojson.Str("message")), ojson.KV("role", ojson.Str("user")),
		ojson.KV("content", ojson.Arr(ojson.Obj(ojson.KV("type", ojson.Str("input_text")), ojson.KV("text", ojson.Str(text))))))
}

// decodeItem decodes a response item as the response_item line it was.
func decodeItem(off int64, item *ojson.Value) session.Record {
	raw := append(append([]byte(`{"type":"response_item","payload":`), ojson.Compact.Encode(item)...), '}')
	l := jsonl.Line{Offset: off, Raw: raw, Len: int64(len(raw)), EOL: jsonl.LF, Status: jsonl.Classify(raw, true), RawControl: true}
	return session.Decode(Home{}, &l)
}

// Item implements layout.Layout.
func (*compactLayout) Item(m *session.Message, raw []byte, part int) (*layout.Item, error) {
	v, err := responseItem(raw, part)
	if err != nil {
		return nil, err
	}
	r := decodeItem(m.Offset, v)
	if r.Role != m.Role {
		return nil, fmt.Errorf("the history and the file disagree: a %s message is a %s item", m.Role, r.Role)
	}
	return &layout.Item{Value: v, Role: r.Role, Text: r.Text, Calls: r.ToolCalls, Results: r.ToolResults, Injected: m.Injected}, nil
}

// Shorten implements layout.Layout.
func (*compactLayout) Shorten(it *layout.Item, f func(string) (string, bool)) int {
	switch it.Value.GetString("type") {
	case "function_call_output", "custom_tool_call_output":
	default:
		return 0
	}
	o, n := layout.ShortenText(it.Value.Get("output"), f)
	if n > 0 {
		it.Value.Set("output", o)
	}
	return n
}

// Aborted implements layout.Layout: the output Codex itself sends for a
// call without one.
func (*compactLayout) Aborted(call session.ToolCall, from *layout.Item) *layout.Item {
	typ := "function_call_output"
	if from.Value.GetString("type") == "custom_tool_call" {
		typ = "custom_tool_call_output"
	}
	v := ojson.Obj(ojson.KV("type", ojson.Str(typ)), ojson.KV("call_id", ojson.Str(call.ID)), ojson.KV("output", ojson.Str("aborted")))
	return &layout.Item{Value: v, Role: session.RoleTool, Aborted: true,
		Results: []session.ToolResult{{CallID: call.ID, Output: "aborted"}}}
}

// SummaryText implements layout.Layout.
func (*compactLayout) SummaryText(c *layout.Compaction) string {
	return SummaryPrefix + "\n" + c.Summary
}

// envelope makes a record with the next ordinal when the file has them.
func (l *compactLayout) envelope(t time.Time, typ string, payload *ojson.Value) *ojson.Value {
	ms := []ojson.Member{ojson.KV("timestamp", ojson.Str(layout.Stamp(t)))}
	if l.ordinal >= 0 {
		l.ordinal++
		ms = append(ms, ojson.KV("ordinal", ojson.Int(l.ordinal)))
	}
	return ojson.Obj(append(ms, ojson.KV("type", ojson.Str(typ)), ojson.KV("payload", payload))...)
}

// Write implements layout.Layout.
func (l *compactLayout) Write(c *layout.Compaction) (*layout.Output, error) {
	summary := userMessage(l.SummaryText(c))
	var tail []*ojson.Value
	lastUser, hasCtx := -1, false
	for _, it := range c.Tail {
		if it.Injected {
			hasCtx = true
		}
		if it.Role == session.RoleUser && it.Start && !it.Injected {
			lastUser = len(tail)
		}
		tail = append(tail, it.Value)
	}
	var ctx []*ojson.Value
	if !hasCtx {
		for _, r := range l.ctx {
			raw, err := l.src.LineAt(r.off)
			if err != nil {
				return nil, err
			}
			v, err := responseItem(raw, r.part)
			if err != nil {
				return nil, err
			}
			ctx = append(ctx, v)
		}
	}
	// Codex puts the injected context just before the last real user
	// message, or before the summary when there is none
	var hist []*ojson.Value
	if lastUser >= 0 {
		hist = append(hist, summary)
		hist = append(hist, tail[:lastUser]...)
		hist = append(hist, ctx...)
		hist = append(hist, tail[lastUser:]...)
	} else {
		hist = append(hist, ctx...)
		hist = append(hist, summary)
		hist = append(hist, tail...)
	}
	turn := newUUIDv7(c.Now)
	started := l.turnEvent(l.started, "task_started", turn, c.Now)
	compacted := l.envelope(c.Now, "compacted", ojson.Obj(ojson.KV("message", ojson.Str(l.SummaryText(c))),
		ojson.KV("replacement_history", ojson.Arr(hist...))))
	out := &layout.Output{Append: true, EOL: "\n", Recorded: -1,
		Lines: [][]byte{ojson.Compact.Encode(started), ojson.Compact.Encode(compacted)}}
	if tc := l.tokenCountAfter(c); tc != nil {
		out.Lines = append(out.Lines, ojson.Compact.Encode(tc))
		out.Recorded = c.PostTokens
	}
	complete := l.turnEvent(l.complete, "task_complete", turn, c.Now.Add(time.Millisecond))
	out.Lines = append(out.Lines, ojson.Compact.Encode(complete))
	return out, nil
}

// turnEvent makes the task_started or task_complete event of the
// compaction's turn, shaped like the file's newest one of that kind (the
// version's own fields), with the new turn's id and times.
func (l *compactLayout) turnEvent(template []byte, typ, turn string, now time.Time) *ojson.Value {
	var p *ojson.Value
	if template != nil {
		if v, err := ojson.Parse(template); err == nil && v.Get("payload").Is(ojson.Object) {
			p = v.Get("payload").Clone()
		}
	}
	if p == nil {
		p = ojson.Obj(ojson.KV("type", ojson.Str(typ)), ojson.KV("turn_id", ojson.Str(turn)))
	}
	for _, k := range []string{"turn_id", "root_turn_id"} {
		if p.Get(k) != nil {
			p.Set(k, ojson.Str(turn))
		}
	}
	if a := p.Get("turn_attribution"); a.Is(ojson.Object) {
		for _, k := range []string{"turn_id", "root_turn_id"} {
			if a.Get(k) != nil {
				a.Set(k, ojson.Str(turn))
			}
		}
	}
	unix := ojson.Int(now.Unix())
	for _, k := range []string{"started_at", "completed_at"} {
		if p.Get(k).Is(ojson.Number) {
			p.Set(k, unix.Clone())
		}
	}
	if p.Get("duration_ms").Is(ojson.Number) {
		p.Set("duration_ms", ojson.Int(0))
	}
	if p.Get("last_agent_message") != nil {
		p.Set("last_agent_message", ojson.NullValue())
	}
	return l.envelope(now, "event_msg", p)
}

// tokenCountAfter is a copy of the newest token_count whose last usage is
// zero but for total_tokens, the new context size, as Codex writes after
// its own compaction; nil when the file has none.
func (l *compactLayout) tokenCountAfter(c *layout.Compaction) *ojson.Value {
	if l.tokenCount == nil {
		return nil
	}
	tc, err := ojson.Parse(l.tokenCount)
	if err != nil {
		return nil
	}
	last := tc.Get("payload").Get("info").Get("last_token_usage")
	if !last.Is(ojson.Object) {
		return nil
	}
	for _, m := range last.Members() {
		switch {
		case m.Key == "total_tokens":
			last.Set(m.Key, ojson.Int(c.PostTokens))
		case m.Val.Is(ojson.Number):
			last.Set(m.Key, ojson.Int(0))
		}
	}
	tc.Set("timestamp", ojson.Str(layout.Stamp(c.Now.Add(time.Millisecond))))
	if l.ordinal >= 0 {
		l.ordinal++
		tc.Set("ordinal", ojson.Int(l.ordinal))
	}
	return tc
}

// newUUIDv7 is a time-ordered UUID, as Codex 0.169 makes its ids.
func newUUIDv7(t time.Time) string {
	var b [16]byte
	rand.Read(b[:])
	ms := uint64(t.UnixMilli())
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], ms)
	copy(b[0:6], ts[2:8])
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
