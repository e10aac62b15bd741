package kimicode

import (
	"context"
	"errors"
	"fmt"

	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// sessctl's compaction of a Kimi Code wire (kimi-code.md §7) is one
// appended context.apply_compaction record in the shape Kimi Code's replay
// reads as a "legacy tail" one (legacyTail: true, no keptUserMessageCount):
// the context becomes the summary, then the messages after the first
// compactedCount of the history — the kept tail, left where it is in the
// file. Nothing else is written and no line is copied; tool outputs of the
// tail cannot be shortened (they stay as they are).

// CompactLayout implements layout.Writer.
func (Home) CompactLayout(ctx context.Context, src layout.Source) (layout.Layout, error) {
	f, err := scan(ctx, src.Path(), nil)
	if err != nil {
		return nil, err
	}
	return &compactLayout{fold: f}, nil
}

type compactLayout struct{ fold *fold }

// SameResponse implements layout.Layout: each assistant message is one
// step, one model response.
func (*compactLayout) SameResponse(prev, m *session.Message) bool { return false }

// Compacted implements layout.Layout.
func (*compactLayout) Compacted(*session.Message, int) {}

// EarlierSummary implements layout.Layout.
func (*compactLayout) EarlierSummary(text string) string { return text }

// Item implements layout.Layout: the kept message as it is (it stays in
// the file; the item only counts it).
func (*compactLayout) Item(m *session.Message, raw []byte, _ int) (*layout.Item, error) {
	v, err := ojson.Parse(raw)
	if err != nil || !v.Is(ojson.Object) {
		return nil, errors.New("a kept line is not a JSON object")
	}
	return &layout.Item{Value: v, Role: m.Role, Text: m.Text, Calls: m.ToolCalls, Results: m.ToolResults, Injected: m.Injected}, nil
}

// Shorten implements layout.Layout: the tail stays in place, unshortened.
func (*compactLayout) Shorten(*layout.Item, func(string) (string, bool)) int { return 0 }

// Aborted implements layout.Layout: Kimi Code answers a call without a
// result itself when it resumes (interruptedOutput); nothing is written.
func (*compactLayout) Aborted(call session.ToolCall, from *layout.Item) *layout.Item {
	return &layout.Item{Value: ojson.Obj(), Role: session.RoleTool, Aborted: true,
		Results: []session.ToolResult{{CallID: call.ID, Output: interruptedOutput, IsError: true}}}
}

// SummaryText implements layout.Layout: the record's summary is the
// message the model reads.
func (*compactLayout) SummaryText(c *layout.Compaction) string { return c.Summary }

// Write implements layout.Layout.
func (l *compactLayout) Write(c *layout.Compaction) (*layout.Output, error) {
	// compactedCount counts Kimi Code's history (before its request
	// projection merges prompts): the live messages before the split
	k := 0
	for _, m := range l.fold.msgs {
		if m.m.Offset < c.SplitOffset {
			k++
		}
	}
	if k == 0 || k >= len(l.fold.msgs) {
		return nil, fmt.Errorf("the split leaves %d of %d messages of the history to compact", k, len(l.fold.msgs))
	}
	rec := ojson.Obj(
		ojson.KV("type", ojson.Str("context.apply_compaction")),
		ojson.KV("agentId", ojson.Str("main")),
		ojson.KV("summary", ojson.Str(c.Summary)),
		ojson.KV("compactedCount", ojson.Int(int64(k))),
		ojson.KV("tokensBefore", ojson.Int(c.PreTokens)),
		ojson.KV("tokensAfter", ojson.Int(c.PostTokens)),
		ojson.KV("legacyTail", ojson.Bool(true)),
		ojson.KV("time", ojson.Int(c.Now.UnixMilli())),
	)
	return &layout.Output{Append: true, EOL: "\n", Recorded: -1, Lines: [][]byte{ojson.Compact.Encode(rec)},
		Notes: []string{"Kimi Code keeps the tail where it is: tool outputs in it are not shortened"}}, nil
}
