package clawdcode

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// clawdcode's compaction (clawdcode.md §4–5, docs/compact.md): the
// compact_boundary + isCompactSummary pair as clawdcode writes it (the same
// compactMetadata on both lines, a null parent on the boundary, no
// gitBranch on the summary), then copies of the kept tail: clawdcode loads
// only what follows the last boundary. A copy keeps its record's time (a
// prompt copied with its words and time is the same turn) and carries zero
// usage (the original keeps the count).

// BoundaryText is the content of clawdcode's compaction boundary.
const BoundaryText = "=== 上下文压缩边界 ==="

// CompactLayout implements layout.Writer.
func (Home) CompactLayout(context.Context, layout.Source) (layout.Layout, error) {
	return compactLayout{}, nil
}

type compactLayout struct{}

// SameResponse implements layout.Layout: an assistant text and the
// tool_use records after it are one response.
func (compactLayout) SameResponse(prev, m *session.Message) bool { return true }

// Compacted implements layout.Layout.
func (compactLayout) Compacted(*session.Message, int) {}

// EarlierSummary implements layout.Layout: clawdcode's summary message is
// the summary itself.
func (compactLayout) EarlierSummary(text string) string { return text }

// Item implements layout.Layout.
func (compactLayout) Item(m *session.Message, raw []byte, _ int) (*layout.Item, error) {
	v, err := ojson.Parse(raw)
	if err != nil || !v.Is(ojson.Object) {
		return nil, errors.New("a kept line is not a JSON object")
	}
	switch v.GetString("type") {
	case "user", "assistant", "tool_use", "tool_result":
	default:
		return nil, nil
	}
	l := layout.RawLine(m.Offset, raw)
	r := session.Decode(Home{}, &l)
	return &layout.Item{Value: v, Role: r.Role, Text: r.Text, Calls: r.ToolCalls, Results: r.ToolResults, Injected: m.Injected}, nil
}

// Shorten implements layout.Layout.
func (compactLayout) Shorten(it *layout.Item, f func(string) (string, bool)) int {
	tr := it.Value.Get("toolResult")
	if tr == nil {
		return 0
	}
	o, n := layout.ShortenText(tr.Get("output"), f)
	if n > 0 {
		tr.Set("output", o)
	}
	return n
}

// put appends k: v when v is set (JSON.stringify leaves out undefined).
func put(ms []ojson.Member, k string, v *ojson.Value) []ojson.Member {
	if v == nil {
		return ms
	}
	return append(ms, ojson.KV(k, v.Clone()))
}

// Aborted implements layout.Layout.
func (compactLayout) Aborted(call session.ToolCall, from *layout.Item) *layout.Item {
	f := from.Value
	ms := []ojson.Member{ojson.KV("uuid", ojson.NullValue()), ojson.KV("parentUuid", ojson.NullValue())}
	ms = put(ms, "sessionId", f.Get("sessionId"))
	ts := f.Get("timestamp")
	if ts == nil {
		ts = ojson.NullValue()
	}
	ms = append(ms, ojson.KV("timestamp", ts.Clone()), ojson.KV("type", ojson.Str("tool_result")))
	ms = put(ms, "cwd", f.Get("cwd"))
	ms = put(ms, "gitBranch", f.Get("gitBranch"))
	ms = put(ms, "version", f.Get("version"))
	ms = append(ms, ojson.KV("message", ojson.Obj(ojson.KV("role", ojson.Str("assistant")), ojson.KV("content", ojson.Str("")))),
		ojson.KV("toolResult", ojson.Obj(ojson.KV("id", ojson.Str(call.ID)), ojson.KV("output", ojson.Str("aborted")), ojson.KV("error", ojson.Str("aborted")))))
	return &layout.Item{Value: ojson.Obj(ms...), Role: session.RoleTool, Aborted: true,
		Results: []session.ToolResult{{CallID: call.ID, Output: "aborted", IsError: true}}}
}

// SummaryText implements layout.Layout.
func (compactLayout) SummaryText(c *layout.Compaction) string { return c.Summary }

// Write implements layout.Layout.
func (compactLayout) Write(c *layout.Compaction) (*layout.Output, error) {
	var template *ojson.Value
	for _, it := range c.Tail {
		if it.Line > 0 {
			template = it.Value.Clone()
		}
	}
	if template == nil {
		return nil, errors.New("no clawdcode message line to copy the session fields from")
	}
	sid, cwd, branch, ver := template.Get("sessionId"), template.Get("cwd"), template.Get("gitBranch"), template.Get("version")
	now := layout.Stamp(c.Now)
	files := make([]*ojson.Value, 0, len(c.Files))
	for _, f := range c.Files {
		files = append(files, ojson.Str(f))
	}
	meta := func() *ojson.Value {
		fs := make([]*ojson.Value, len(files))
		for i, f := range files {
			fs[i] = f.Clone()
		}
		return ojson.Obj(ojson.KV("trigger", ojson.Str("manual")), ojson.KV("preTokens", ojson.Int(c.PreTokens)),
			ojson.KV("postTokens", ojson.Int(c.PostTokens)), ojson.KV("filesIncluded", ojson.Arr(fs...)))
	}
	boundaryID, summaryID := newNanoid(), newNanoid()
	b := []ojson.Member{ojson.KV("uuid", ojson.Str(boundaryID)), ojson.KV("parentUuid", ojson.NullValue())}
	b = put(b, "sessionId", sid)
	b = append(b, ojson.KV("timestamp", ojson.Str(now)), ojson.KV("type", ojson.Str("system")), ojson.KV("subtype", ojson.Str("compact_boundary")))
	b = put(b, "cwd", cwd)
	b = put(b, "gitBranch", branch)
	b = put(b, "version", ver)
	b = append(b, ojson.KV("message", ojson.Obj(ojson.KV("role", ojson.Str("system")), ojson.KV("content", ojson.Str(BoundaryText)))),
		ojson.KV("compactMetadata", meta()))

	s := []ojson.Member{ojson.KV("uuid", ojson.Str(summaryID)), ojson.KV("parentUuid", ojson.Str(boundaryID))}
	s = put(s, "sessionId", sid)
	s = append(s, ojson.KV("timestamp", ojson.Str(now)), ojson.KV("type", ojson.Str("user")), ojson.KV("isCompactSummary", ojson.Bool(true)))
	s = put(s, "cwd", cwd)
	s = put(s, "version", ver)
	s = append(s, ojson.KV("message", ojson.Obj(ojson.KV("role", ojson.Str("user")), ojson.KV("content", ojson.Str(c.Summary)))),
		ojson.KV("compactMetadata", meta()))

	out := &layout.Output{Append: true, EOL: "\n", Recorded: c.PostTokens,
		Lines: [][]byte{ojson.Compact.Encode(ojson.Obj(b...)), ojson.Compact.Encode(ojson.Obj(s...))}}
	parent := summaryID
	for _, it := range c.Tail {
		id := newNanoid()
		it.Value.Set("uuid", ojson.Str(id))
		it.Value.Set("parentUuid", ojson.Str(parent))
		if msg := it.Value.Get("message"); msg.Get("usage").Is(ojson.Object) {
			msg.Set("usage", layout.ZeroNumbers(msg.Get("usage")))
		}
		out.Lines = append(out.Lines, ojson.Compact.Encode(it.Value))
		parent = id
	}
	return out, nil
}

const nanoidAlphabet = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict"

// newNanoid returns a 21-character nanoid, like clawdcode's ids.
func newNanoid() string {
	var b [21]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = nanoidAlphabet[b[i]&63]
	}
	return string(b[:])
}
