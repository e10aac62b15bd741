// Package layout is what compact asks of an agent's home: the interface
// (Writer, Layout) through which the home writes a compaction the way its
// client writes its own, and the few helpers every layout uses. The homes
// implement it; pkg/compact runs the operation (the live context, the
// split, the summary, the tail rules, the rewrite).
//
// It is a package of its own, below pkg/compact, so that a home importing it
// does not import the rewrite machinery (whose own tests link the homes in).
package layout

import (
	"context"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// Writer is how an agent's sessions are compacted: each home that can
// compact implements it, and Compact reaches it with
// session.As[layout.Writer](agent). What is the same for every agent (the
// live context, the split, the summary, the tail rules) is here; how the
// client stores a compaction is the home's.
type Writer interface {
	// CompactLayout begins the compaction of the file src reads. It reads
	// what the layout needs and refuses a file the client itself could not
	// resume.
	CompactLayout(ctx context.Context, src Source) (Layout, error)
}

// Layout writes one file's compaction the way its client writes its own.
//
// pkg/compact reads the live context from the home's conversation model
// (session.Conversation.History, in the order the client sends it): the
// messages before the split are summarised, the messages from the split on
// are the kept tail. The layout sees the compacted messages (Compacted),
// turns each kept message into an Item from its line (Item), and writes the
// result (Write).
type Layout interface {
	// SameResponse reports whether the assistant message m continues the
	// model response of prev, the assistant message right before it: one
	// response counts once for --keep.
	SameResponse(prev, m *session.Message) bool
	// Compacted sees each message of the compacted part, in send order;
	// part is its place among the live messages of its line.
	Compacted(m *session.Message, part int)
	// EarlierSummary is the summary an earlier compaction's summary
	// message holds, without the client's words around it.
	EarlierSummary(text string) string
	// Item makes the tail item of the kept message m from raw, its line
	// as it is in the file (without its end of line); part is m's place
	// among the live messages of that line. nil leaves m out of the tail.
	Item(m *session.Message, raw []byte, part int) (*Item, error)
	// Shorten shortens the tool outputs of it with f and returns how many
	// it shortened.
	Shorten(it *Item, f func(string) (string, bool)) int
	// Aborted makes the result of a kept call that has none.
	Aborted(call session.ToolCall, from *Item) *Item
	// SummaryText is the summary message as the model will read it.
	SummaryText(c *Compaction) string
	// Write lays out the compaction.
	Write(c *Compaction) (*Output, error)
}

// Item is one record of the kept tail.
type Item struct {
	// Value is the record as the client stores it (the line, or Codex's
	// response item), edited in place; ojson.Compact copies what is
	// unchanged byte for byte.
	Value   *ojson.Value
	Role    session.Role
	Text    string
	Calls   []session.ToolCall
	Results []session.ToolResult
	// Line and Offset locate the line in the original file; Line is 0 for
	// a record sessctl made.
	Line   int
	Offset int64
	// Start is set on the record that starts a --keep unit.
	Start bool
	// Injected marks context the client injected (kept where it is).
	Injected bool
	// Aborted marks a result sessctl made for a call without one.
	Aborted bool
}

// Unchanged reports whether the item is written exactly as it was read.
func (it *Item) Unchanged() bool { return it.Line > 0 && !it.Aborted && it.Value.Bytes() != nil }

// Compaction is what a layout writes.
type Compaction struct {
	Path    string
	Summary string // the summary, without the client's words around it
	Tail    []*Item
	// DroppedResults counts the tool results left out of the tail (their
	// call was compacted away): the tail is not the file's as it was.
	DroppedResults int
	Files          []string
	Now            time.Time
	// PreTokens is the context before (the recorded size when there is
	// one), PostTokens the summary message and the tail.
	PreTokens      int64
	PostTokens     int64
	SummaryTokens  int
	RecordedBefore int64
	// SplitOffset is the byte offset of the tail's first line.
	SplitOffset int64
}

// Output is a laid-out compaction.
type Output struct {
	Lines [][]byte
	// Append puts the lines after the original bytes (Claude Code, Codex,
	// clawdcode); otherwise they are the whole new file (Kimi).
	Append bool
	EOL    string
	// Recorded is the context size the lines record, -1 if none.
	Recorded int64
	// LeftOut counts lines of the original that the new file leaves out
	// because the client cannot use them (corrupt, rejected), before the
	// split and in the tail. They stay in the rotation.
	LeftOutCompacted, LeftOutTail int
	// Notes say what the user should know about how it was written.
	Notes []string
}

// ShortenText applies f to a content value that is a string or an array
// of parts with "text" strings, and returns the new value and how many
// texts it shortened.
func ShortenText(v *ojson.Value, f func(string) (string, bool)) (*ojson.Value, int) {
	switch v.Kind() {
	case ojson.String:
		if s, ok := f(v.Text()); ok {
			return ojson.Str(s), 1
		}
	case ojson.Array:
		n := 0
		for _, part := range v.Elems() {
			if t := part.Get("text"); t.Is(ojson.String) {
				if s, ok := f(t.Text()); ok {
					part.Set("text", ojson.Str(s))
					n++
				}
			}
		}
		return v, n
	}
	return v, 0
}

// Stamp is a JavaScript/Rust-style UTC timestamp with milliseconds.
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// ZeroNumbers returns a copy of v with every number in it set to 0: the
// usage of a copied record, whose original keeps the counts.
func ZeroNumbers(v *ojson.Value) *ojson.Value {
	switch v.Kind() {
	case ojson.Number:
		return ojson.Int(0)
	case ojson.Object:
		var ms []ojson.Member
		for _, m := range v.Members() {
			ms = append(ms, ojson.KV(m.Key, ZeroNumbers(m.Val)))
		}
		return ojson.Obj(ms...)
	case ojson.Array:
		var es []*ojson.Value
		for _, e := range v.Elems() {
			es = append(es, ZeroNumbers(e))
		}
		return ojson.Arr(es...)
	}
	return v.Clone()
}

// Source reads the lines of the file being compacted where a layout needs
// them, without reading the whole file again: one line at an offset, the
// lines from an offset on, or the last lines backwards.
type Source interface {
	// Path is the file's path.
	Path() string
	// LineAt returns the line that starts at byte offset off, without its
	// end of line.
	LineAt(off int64) ([]byte, error)
	// Backward calls fn with each line from the end of the file towards
	// its start (offset, bytes without the end of line) until fn says stop.
	// The bytes are only valid during the call.
	Backward(ctx context.Context, fn func(off int64, raw []byte) (stop bool, err error)) error
	// Forward calls fn with each line from byte offset from (a line start)
	// to the end of the file, as a jsonl.Reader reads them. The line is
	// only valid during the call; jsonl.ErrStop ends the read.
	Forward(ctx context.Context, from int64, fn func(l *jsonl.Line) error) error
}

// RawLine is the jsonl.Line of a line read by a Source.
func RawLine(off int64, raw []byte) jsonl.Line {
	return jsonl.Line{Offset: off, Raw: raw, Len: int64(len(raw)), EOL: jsonl.LF, Status: jsonl.Classify(raw, true), RawControl: true}
}
