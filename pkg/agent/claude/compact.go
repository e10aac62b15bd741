package claude

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// Claude Code's compaction (claude-code.md §6, docs/compact.md): a system
// compact_boundary line (a root: parentUuid null, logicalParentUuid the
// last message), then the isCompactSummary user line chained to it, then a
// last-prompt naming the new leaf, as Claude Code's own /compact writes.
//
// The kept tail is sent after the summary either by reference, the way
// Claude Code's own /compact keeps its recent messages
// (compactMetadata.preservedSegment {headUuid, anchorUuid, tailUuid}: the
// chain from head to tail is sent right after the anchor, the summary), or,
// when a kept line must change (a shortened output, a dropped orphan
// result, an added aborted result) or the kept messages are not one piece
// of the chain, as copies chained from the summary. A copy keeps its
// prompt's words and time (so it is the same turn for checkpoints and
// show) and gets new ids (Claude Code merges the lines of one message.id
// and answers a tool_use id with the first result for it in the file) and
// all-zero usage (the original lines keep the counts).

// Claude Code's compaction summary text around the summary itself
// (claude-code.md §6, the 2.1.197 example).
const (
	SummaryHead      = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
	summaryTail      = "\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: %s\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened."
	summaryTailStart = "\n\nIf you need specific details from before compaction"
)

// envKeys are the envelope fields copied from a kept line.
var envKeys = map[string]bool{
	"userType": true, "entrypoint": true, "cwd": true, "sessionId": true, "version": true, "gitBranch": true, "slug": true,
}

// CompactLayout implements layout.Writer.
func (Home) CompactLayout(ctx context.Context, src layout.Source) (layout.Layout, error) {
	return &compactLayout{ctx: ctx, src: src}, nil
}

type compactLayout struct {
	ctx context.Context
	src layout.Source

	// what the file says of its client (scanState): written by Claude
	// Code 2.1.330 or later (it holds one of that release's record types),
	// and the tools its newest tools-used record names
	scanned bool
	v330    bool
	tools   []string
}

// SameResponse implements layout.Layout: Claude Code writes each content
// block of a response as its own line, one after the other (same
// message.id), so consecutive assistant lines are one response.
func (*compactLayout) SameResponse(prev, m *session.Message) bool { return true }

// Compacted implements layout.Layout.
func (*compactLayout) Compacted(*session.Message, int) {}

// EarlierSummary implements layout.Layout.
func (*compactLayout) EarlierSummary(text string) string {
	if strings.HasPrefix(text, "This session is being continued") {
		if i := strings.Index(text, "\nSummary:\n"); i >= 0 {
			text = text[i+len("\nSummary:\n"):]
		}
	}
	if i := strings.Index(text, summaryTailStart); i >= 0 {
		text = text[:i]
	}
	return text
}

// Item implements layout.Layout. The state SummaryText needs is read
// before the first item is made: that read goes back over the file line by
// line, and a huge line then is one more copy of it, better held while the
// tail holds nothing yet (compact of a 20 MB line peaked 19 MB higher
// with the read after the tail).
func (l *compactLayout) Item(m *session.Message, raw []byte, _ int) (*layout.Item, error) {
	l.scanState()
	v, err := ojson.Parse(raw)
	if err != nil || !v.Is(ojson.Object) {
		return nil, fmt.Errorf("a kept line is not a JSON object")
	}
	if t := v.GetString("type"); t != "user" && t != "assistant" {
		return nil, nil
	}
	line := layout.RawLine(m.Offset, raw)
	r := session.Decode(Home{}, &line)
	return &layout.Item{Value: v, Role: r.Role, Text: r.Text, Calls: r.ToolCalls, Results: r.ToolResults, Injected: m.Injected}, nil
}

// Shorten implements layout.Layout. A shortened tool_result loses its
// toolUseResult (the tool's own full copy of the output).
func (*compactLayout) Shorten(it *layout.Item, f func(string) (string, bool)) int {
	n := 0
	for _, b := range it.Value.Get("message").Get("content").Elems() {
		if b.GetString("type") != "tool_result" {
			continue
		}
		if c, k := layout.ShortenText(b.Get("content"), f); k > 0 {
			b.Set("content", c)
			n += k
		}
	}
	if n > 0 {
		it.Value.Del("toolUseResult")
	}
	return n
}

// shape is the key layout of a file's lines: where the envelope goes
// (after isSidechain in ≤ 2.1.39, at the end in 2.1.1xx) and its fields.
type shape struct {
	newStyle bool
	env      []ojson.Member
	prompt   bool // lines carry promptId
}

func shapeOf(v *ojson.Value) shape {
	s := shape{newStyle: true}
	typeAt, userTypeAt := -1, -1
	for i, m := range v.Members() {
		switch m.Key {
		case "type":
			typeAt = i
		case "userType":
			userTypeAt = i
		case "entrypoint":
			s.prompt = true // 2.1.1xx lines; their user lines carry promptId
		}
		if envKeys[m.Key] {
			s.env = append(s.env, ojson.KV(m.Key, m.Val.Clone()))
		}
	}
	if userTypeAt >= 0 && typeAt >= 0 && userTypeAt < typeAt {
		s.newStyle = false
	}
	return s
}

// build lays out head, envelope and body in the file's order.
func (s shape) build(head, body []ojson.Member) *ojson.Value {
	var ms []ojson.Member
	ms = append(ms, head...)
	env := make([]ojson.Member, len(s.env))
	for i, m := range s.env {
		env[i] = ojson.KV(m.Key, m.Val.Clone())
	}
	if s.newStyle {
		ms = append(ms, body...)
		ms = append(ms, env...)
	} else {
		ms = append(ms, env...)
		ms = append(ms, body...)
	}
	return ojson.Obj(ms...)
}

// Aborted implements layout.Layout: an is_error tool_result, timed as the
// call.
func (*compactLayout) Aborted(call session.ToolCall, from *layout.Item) *layout.Item {
	block := ojson.Obj(ojson.KV("tool_use_id", ojson.Str(call.ID)), ojson.KV("type", ojson.Str("tool_result")),
		ojson.KV("content", ojson.Str("aborted")), ojson.KV("is_error", ojson.Bool(true)))
	ts := ojson.NullValue()
	if t := from.Value.Get("timestamp"); t != nil {
		ts = t.Clone()
	}
	v := shapeOf(from.Value).build(
		[]ojson.Member{ojson.KV("parentUuid", ojson.NullValue()), ojson.KV("isSidechain", ojson.Bool(false))},
		[]ojson.Member{ojson.KV("type", ojson.Str("user")),
			ojson.KV("message", ojson.Obj(ojson.KV("role", ojson.Str("user")), ojson.KV("content", ojson.Arr(block)))),
			ojson.KV("uuid", ojson.NullValue()), ojson.KV("timestamp", ts),
			ojson.KV("sourceToolAssistantUUID", ojson.Str(from.Value.GetString("uuid")))},
	)
	return &layout.Item{Value: v, Role: session.RoleTool, Aborted: true,
		Results: []session.ToolResult{{CallID: call.ID, Output: "aborted", IsError: true}}}
}

// Claude Code 2.1.330's compaction summary adds, before "Summary:", the
// tools the conversation had used that the kept messages do not call
// (from its tools-used latch), and after the tail, when messages are kept,
// a note on them (docs/formats/claude-code.md §7).
const (
	toolsUsedTag = "tools-used-before-summary"
	keptNote330  = "\n\nThe messages after this summary are the most recent messages from before compaction, kept verbatim. The summary was written without seeing them, so something it says has not happened yet may already have happened in them."
	// unreadableTool stands for a tool name the client would not write
	// as it is (its own placeholder)
	unreadableTool = "unreadable-" + toolsUsedTag
)

// toolName reports whether t is a tool name Claude Code writes in the
// summary as it is: what ^[A-Za-z0-9_.:-]{1,256}$ matches. (Compiled, that
// regexp was 1.5 ms of every run's start-up.)
func toolName(t string) bool {
	if len(t) == 0 || len(t) > 256 {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// SummaryText implements layout.Layout.
func (l *compactLayout) SummaryText(c *layout.Compaction) string {
	l.scanState()
	head := SummaryHead
	if tools := l.toolsBefore(c); len(tools) > 0 {
		head = strings.TrimSuffix(SummaryHead, "Summary:\n") + "<system-reminder>\n<" + toolsUsedTag + ">" +
			strings.Join(tools, ", ") + "</" + toolsUsedTag + ">\n</system-reminder>\nSummary:\n"
	}
	text := head + c.Summary + fmt.Sprintf(summaryTail, c.Path)
	if l.v330 && len(c.Tail) > 0 {
		text += keptNote330
	}
	return text
}

// toolsBefore lists, sorted, the tools of the newest tools-used record that
// no kept message calls.
func (l *compactLayout) toolsBefore(c *layout.Compaction) []string {
	called := map[string]bool{}
	for _, it := range c.Tail {
		for _, call := range it.Calls {
			called[call.Name] = true
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range l.tools {
		if called[t] {
			continue
		}
		if !toolName(t) {
			t = unreadableTool
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// scanState reads, once, whether the file holds Claude Code 2.1.330's
// records and the newest tools-used list, from the end of the file back to
// the newest tools-used record. Only lines that name one of those types
// are decoded.
func (l *compactLayout) scanState() {
	if l.scanned {
		return
	}
	l.scanned = true
	l.src.Backward(l.ctx, func(_ int64, raw []byte) (bool, error) {
		if !bytes.Contains(raw, []byte(`"tools-used"`)) && !bytes.Contains(raw, []byte(`"cost-state"`)) &&
			!bytes.Contains(raw, []byte(`"api-request`)) && !bytes.Contains(raw, []byte(`"atis-latch"`)) {
			return false, nil
		}
		var rec struct {
			Type  string   `json:"type"`
			Tools []string `json:"tools"`
		}
		if json.Unmarshal(raw, &rec) != nil {
			return false, nil
		}
		switch rec.Type {
		case "tools-used":
			l.v330, l.tools = true, rec.Tools
			return true, nil
		case "cost-state", "api-request", "api-request-shape", "api-request-blob", "atis-latch":
			l.v330 = true
		}
		return false, nil
	})
}

// region is what the lines from the tail's first line on say: the chain
// links (uuid → parentUuid of the main-chain lines) and whether the client
// writes last-prompt records.
type region struct {
	parent     map[string]string
	lastPrompt bool
}

func (l *compactLayout) readRegion(from int64) (*region, error) {
	rg := &region{parent: map[string]string{}}
	err := l.src.Forward(l.ctx, from, func(ln *jsonl.Line) error {
		r := session.Decode(Home{}, ln)
		if r.Type == "last-prompt" {
			rg.lastPrompt = true
		}
		if r.UUID != "" && !r.Sidechain {
			rg.parent[r.UUID] = r.ParentUUID
		}
		return nil
	})
	return rg, err
}

// byReference reports whether the tail can stay where it is: every kept
// line unchanged, nothing dropped, and the kept messages one piece of the
// chain, in order (each one's parent chain reaches the one before it
// through lines that are not kept messages).
func byReference(c *layout.Compaction, rg *region) bool {
	if c.DroppedResults > 0 || len(c.Tail) == 0 {
		return false
	}
	kept := map[string]bool{}
	for _, it := range c.Tail {
		if !it.Unchanged() {
			return false
		}
		kept[it.Value.GetString("uuid")] = true
	}
	for i := 1; i < len(c.Tail); i++ {
		want := c.Tail[i-1].Value.GetString("uuid")
		p := c.Tail[i].Value.GetString("parentUuid")
		for hops := 0; p != want; hops++ {
			next, ok := rg.parent[p]
			if !ok || kept[p] || hops > 64 {
				return false
			}
			p = next
		}
	}
	return true
}

// Write implements layout.Layout.
func (l *compactLayout) Write(c *layout.Compaction) (*layout.Output, error) {
	// the last kept line gives the envelope; the lines from the first kept
	// one on tell how the kept lines are chained
	var template *ojson.Value
	from := int64(-1)
	for _, it := range c.Tail {
		if it.Line > 0 {
			template = it.Value.Clone()
			if from < 0 || it.Offset < from {
				from = it.Offset
			}
		}
	}
	if template == nil {
		return nil, errors.New("no Claude Code conversation line to copy the envelope from")
	}
	rg, err := l.readRegion(from)
	if err != nil {
		return nil, err
	}
	sh := shapeOf(template)
	leaf := template.GetString("uuid")
	sessionID := template.GetString("sessionId")
	now := layout.Stamp(c.Now)
	boundaryID, summaryID := newUUID(), newUUID()
	ref := byReference(c, rg)

	meta := []ojson.Member{ojson.KV("trigger", ojson.Str("manual")), ojson.KV("preTokens", ojson.Int(c.PreTokens))}
	if ref {
		meta = append(meta, ojson.KV("preservedSegment", ojson.Obj(
			ojson.KV("headUuid", ojson.Str(c.Tail[0].Value.GetString("uuid"))),
			ojson.KV("anchorUuid", ojson.Str(summaryID)),
			ojson.KV("tailUuid", ojson.Str(leaf)))))
	}
	meta = append(meta, ojson.KV("postTokens", ojson.Int(c.PostTokens)))
	logical := ojson.NullValue()
	if leaf != "" {
		logical = ojson.Str(leaf)
	}
	boundary := sh.build(
		[]ojson.Member{ojson.KV("parentUuid", ojson.NullValue()), ojson.KV("logicalParentUuid", logical), ojson.KV("isSidechain", ojson.Bool(false))},
		[]ojson.Member{ojson.KV("type", ojson.Str("system")), ojson.KV("subtype", ojson.Str("compact_boundary")),
			ojson.KV("content", ojson.Str("Conversation compacted")), ojson.KV("isMeta", ojson.Bool(false)),
			ojson.KV("timestamp", ojson.Str(now)), ojson.KV("uuid", ojson.Str(boundaryID)), ojson.KV("level", ojson.Str("info")),
			ojson.KV("compactMetadata", ojson.Obj(meta...))},
	)
	head := []ojson.Member{ojson.KV("parentUuid", ojson.Str(boundaryID)), ojson.KV("isSidechain", ojson.Bool(false))}
	if sh.newStyle && sh.prompt {
		head = append(head, ojson.KV("promptId", ojson.Str(newUUID())))
	}
	summary := sh.build(head,
		[]ojson.Member{ojson.KV("type", ojson.Str("user")),
			ojson.KV("message", ojson.Obj(ojson.KV("role", ojson.Str("user")), ojson.KV("content", ojson.Str(l.SummaryText(c))))),
			ojson.KV("isVisibleInTranscriptOnly", ojson.Bool(true)), ojson.KV("isCompactSummary", ojson.Bool(true)),
			ojson.KV("uuid", ojson.Str(summaryID)), ojson.KV("timestamp", ojson.Str(now))},
	)
	out := &layout.Output{Append: true, EOL: "\n", Recorded: c.PostTokens,
		Lines: [][]byte{ojson.Compact.Encode(boundary), ojson.Compact.Encode(summary)}}
	newLeaf := summaryID
	if ref {
		out.Notes = append(out.Notes, "kept tail: by reference (compactMetadata.preservedSegment), as Claude Code's own /compact keeps it")
	} else {
		out.Notes = append(out.Notes, "kept tail: copied after the summary (a kept line changed, or the kept messages are not one piece of the chain)")
		var lines [][]byte
		lines, newLeaf = copies(c.Tail, summaryID)
		out.Lines = append(out.Lines, lines...)
	}
	if rg.lastPrompt {
		// as after Claude Code's own /compact: the newest last-prompt names
		// the leaf to resume from
		lp := ojson.Obj(ojson.KV("type", ojson.Str("last-prompt")), ojson.KV("leafUuid", ojson.Str(newLeaf)),
			ojson.KV("sessionId", ojson.Str(sessionID)))
		out.Lines = append(out.Lines, ojson.Compact.Encode(lp))
	}
	return out, nil
}

// copies writes the kept tail chained from parent, with new uuids,
// message and tool ids, zero usage, and the original times. It returns the
// lines and the uuid of the last.
func copies(tail []*layout.Item, parent string) ([][]byte, string) {
	var out [][]byte
	ids, msgIDs, toolIDs := map[string]string{}, map[string]string{}, map[string]string{}
	renew := func(m map[string]string, old, prefix string) string {
		if n, ok := m[old]; ok {
			return n
		}
		n := prefix + strings.ReplaceAll(newUUID(), "-", "")[:24]
		m[old] = n
		return n
	}
	for _, it := range tail {
		v := it.Value
		if msg := v.Get("message"); msg.Is(ojson.Object) {
			if old := msg.GetString("id"); old != "" {
				msg.Set("id", ojson.Str(renew(msgIDs, old, "msg_")))
			}
			if u := msg.Get("usage"); u.Is(ojson.Object) {
				msg.Set("usage", layout.ZeroNumbers(u))
			}
			for _, b := range msg.Get("content").Elems() {
				switch b.GetString("type") {
				case "tool_use", "server_tool_use":
					if old := b.GetString("id"); old != "" {
						b.Set("id", ojson.Str(renew(toolIDs, old, "toolu_")))
					}
				case "tool_result":
					if old := b.GetString("tool_use_id"); old != "" {
						if n, ok := toolIDs[old]; ok {
							b.Set("tool_use_id", ojson.Str(n))
						}
					}
				}
			}
		}
		id := newUUID()
		if old := v.GetString("uuid"); old != "" {
			ids[old] = id
		}
		v.Set("parentUuid", ojson.Str(parent))
		v.Set("uuid", ojson.Str(id))
		if src := v.GetString("sourceToolAssistantUUID"); src != "" {
			if nid, ok := ids[src]; ok {
				v.Set("sourceToolAssistantUUID", ojson.Str(nid))
			}
		}
		out = append(out, ojson.Compact.Encode(v))
		parent = id
	}
	return out, parent
}

// newUUID returns a random UUID (version 4).
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
