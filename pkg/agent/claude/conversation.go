package claude

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// The conversation Claude Code rebuilds on resume (claude-code.md §5,
// docs/e2e.md, docs/show.md):
//
//   - every DAG line (one with a uuid) points at its parent; the client
//     resumes the chain that ends at the leaf named by the newest
//     last-prompt record, when that uuid is a leaf, else at the newest
//     leaf of the file;
//   - an assistant tool_use left without its result at the tip is dropped
//     (the chain resumes from its parent);
//   - a compact_boundary is a root (parentUuid null): the walk stops there,
//     and the summary after it is the first message sent; the segment the
//     boundary preserved (compactMetadata.preservedSegment, head to tail,
//     before the boundary in the file) is sent right after the summary;
//   - sidechain lines belong to subagents, never to the main chain;
//   - a parent that is missing (a garbled line) is bridged to the DAG line
//     before it in the file, as 2.1.197 was seen to do.
//
// Turns are the user prompts of the main file in file order, numbered from
// 0; the copy of a prompt that sessctl's compaction writes into the kept
// tail (same text, same timestamp) is the same turn, not a new one.

// node is one DAG line of a file, as the chain walk needs it.
type node struct {
	line      int
	off       int64
	self      uint64
	parent    uint64 // 0: null
	sidechain bool
	toolTip   bool // an assistant line holding tool calls only
	message   bool // a user or assistant line
	summary   bool // a compaction summary
	// a compact_boundary, and the segment it preserved
	boundary           bool
	head, tail, anchor uint64
	// prompt is the index of the turn a prompt line starts, -1 otherwise
	prompt int32
}

// prompt is what the index keeps of a user prompt.
type prompt struct {
	key       uint64 // text and timestamp: sessctl's tail copies repeat both
	node      int32
	cut       int64
	uuid      string
	timestamp time.Time
	preview   string
}

// index is pass one over a file.
type index struct {
	seed     maphash.Seed
	nodes    []node
	prompts  []prompt
	byID     map[uint64]int32 // uuid hash -> node
	children map[uint64]int32 // parent hash -> number of children
	lastLeaf uint64           // newest last-prompt leafUuid
	size     int64
}

func (ix *index) hash(s string) uint64 {
	if s == "" {
		return 0
	}
	return maphash.String(ix.seed, s)
}

// claudeMeta is what pass one reads beyond the Record.
type claudeMeta struct {
	LeafUUID        string `json:"leafUuid"`
	CompactMetadata *struct {
		PreservedSegment *struct {
			Head   string `json:"headUuid"`
			Anchor string `json:"anchorUuid"`
			Tail   string `json:"tailUuid"`
		} `json:"preservedSegment"`
	} `json:"compactMetadata"`
}

func buildIndex(ctx context.Context, path string) (*index, error) {
	ix := &index{seed: maphash.MakeSeed(), byID: map[uint64]int32{}, children: map[uint64]int32{}}
	// Claude Code writes queue-operation and file-history-snapshot records
	// just before a prompt, and a prompt typed while a tool call was
	// pending follows the assistant's tool_use lines: those belong to the
	// new turn, so a cut before the turn goes before them.
	runStart, toolStart := int64(-1), int64(-1)
	err := session.ReadFileContext(ctx, path, Home{}, func(r *session.Record) error {
		ix.size = r.Line.End()
		if r.Kind == session.KindCorrupt || r.Kind == session.KindBlank {
			return nil
		}
		off := r.Line.Offset
		if r.UserPrompt && r.UUID != "" {
			cut := off
			if runStart >= 0 {
				cut = runStart
			}
			if toolStart >= 0 && toolStart < cut {
				cut = toolStart
			}
			ix.prompts = append(ix.prompts, prompt{
				key: ix.hash(session.PromptKey(r)), node: int32(len(ix.nodes)),
				cut: cut, uuid: r.UUID, timestamp: r.Timestamp, preview: session.Preview(r.Prompt, session.PreviewLen)})
		}
		switch r.Type {
		case "queue-operation", "file-history-snapshot":
			if runStart < 0 {
				runStart = off
			}
		default:
			runStart = -1
		}
		if r.UUID != "" && !r.Sidechain {
			if r.Role == session.RoleAssistant && len(r.ToolCalls) > 0 && r.Text == "" && r.Thinking == "" {
				if toolStart < 0 {
					toolStart = off
				}
			} else {
				toolStart = -1
			}
		}
		if r.Type == "last-prompt" || r.Type == "system/compact_boundary" {
			var m claudeMeta
			if decodeObject(r, &m) == nil {
				if m.LeafUUID != "" {
					ix.lastLeaf = ix.hash(m.LeafUUID)
				}
				if r.Type == "system/compact_boundary" && m.CompactMetadata != nil && m.CompactMetadata.PreservedSegment != nil {
					ps := m.CompactMetadata.PreservedSegment
					ix.add(r, node{boundary: true, head: ix.hash(ps.Head), tail: ix.hash(ps.Tail), anchor: ix.hash(ps.Anchor)})
					return nil
				}
			}
		}
		if r.UUID == "" {
			return nil
		}
		ix.add(r, node{boundary: r.Type == "system/compact_boundary"})
		return nil
	})
	return ix, err
}

func (ix *index) add(r *session.Record, n node) {
	if r.UUID == "" {
		return
	}
	n.line, n.off = r.Line.Num, r.Line.Offset
	n.self = ix.hash(r.UUID)
	n.parent = ix.hash(r.ParentUUID)
	n.sidechain = r.Sidechain
	n.message = r.Type == "user" || r.Type == "assistant" || r.Type == "(usage)"
	n.toolTip = r.Role == session.RoleAssistant && len(r.ToolCalls) > 0 && strings.TrimSpace(r.Text) == ""
	n.summary = r.Kind == session.KindCompaction && r.Role == session.RoleUser
	n.prompt = -1
	if r.UserPrompt && len(ix.prompts) > 0 && ix.prompts[len(ix.prompts)-1].node == int32(len(ix.nodes)) {
		n.prompt = int32(len(ix.prompts) - 1)
	}
	if _, dup := ix.byID[n.self]; !dup { // a replayed copy of a uuid: the oldest wins
		ix.byID[n.self] = int32(len(ix.nodes))
	}
	if n.parent != 0 {
		ix.children[n.parent]++
	}
	ix.nodes = append(ix.nodes, n)
}

// chain is the result of the walk: the live nodes in the order the client
// sends them, and the states of the others.
type chain struct {
	live     map[int32]bool // node -> on the resumed chain
	order    []int32        // live nodes in send order
	boundary int32          // the boundary the chain starts at, -1 when none
}

// walk finds the resumed chain.
func (ix *index) walk() *chain {
	c := &chain{live: map[int32]bool{}, boundary: -1}
	leaf := int32(-1)
	if i, ok := ix.byID[ix.lastLeaf]; ok && ix.lastLeaf != 0 && ix.children[ix.lastLeaf] == 0 && !ix.nodes[i].sidechain {
		leaf = i
	}
	if leaf < 0 {
		for i := len(ix.nodes) - 1; i >= 0; i-- {
			n := &ix.nodes[i]
			if !n.sidechain && n.message && ix.children[n.self] == 0 {
				leaf = int32(i)
				break
			}
		}
	}
	// an unanswered tool call at the tip is dropped
	for leaf >= 0 && ix.nodes[leaf].toolTip {
		p, ok := ix.byID[ix.nodes[leaf].parent]
		if !ok {
			leaf = -1
			break
		}
		leaf = p
	}
	var rev []int32
	seen := map[int32]bool{}
	for i := leaf; i >= 0 && !seen[i]; {
		seen[i] = true
		rev = append(rev, i)
		n := &ix.nodes[i]
		if n.boundary || n.parent == 0 {
			if n.boundary {
				c.boundary = i
			}
			break
		}
		p, ok := ix.byID[n.parent]
		if !ok {
			p = ix.bridge(i) // a missing parent: the DAG line before it
		}
		i = p
	}
	// root first; the preserved segment goes right after its anchor
	var preserved []int32
	if c.boundary >= 0 {
		b := &ix.nodes[c.boundary]
		if t, ok := ix.byID[b.tail]; ok && b.tail != 0 {
			var seg []int32
			segSeen := map[int32]bool{}
			for i := t; i >= 0 && !segSeen[i]; {
				segSeen[i] = true
				seg = append(seg, i)
				if ix.nodes[i].self == b.head {
					break
				}
				p, ok := ix.byID[ix.nodes[i].parent]
				if !ok {
					break
				}
				i = p
			}
			for k := len(seg) - 1; k >= 0; k-- {
				preserved = append(preserved, seg[k])
			}
		}
	}
	for k := len(rev) - 1; k >= 0; k-- {
		i := rev[k]
		c.live[i] = true
		c.order = append(c.order, i)
		if len(preserved) > 0 && (ix.nodes[i].self == ix.nodes[c.boundary].anchor || ix.nodes[i].summary) {
			for _, p := range preserved {
				if !c.live[p] {
					c.live[p] = true
					c.order = append(c.order, p)
				}
			}
			preserved = nil
		}
	}
	return c
}

// bridge returns the node before i in the file that is on the main chain
// side (not a sidechain), or -1.
func (ix *index) bridge(i int32) int32 {
	for k := i - 1; k >= 0; k-- {
		if !ix.nodes[k].sidechain {
			return k
		}
	}
	return -1
}

// History implements session.Conversation.
func (h Home) History(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) error {
	ix, err := buildIndex(ctx, path)
	if err != nil {
		return err
	}
	c := ix.walk()
	turns := ix.turns(c)
	byLine := map[int]int32{}
	for i := range ix.nodes {
		byLine[ix.nodes[i].line] = int32(i)
	}
	pos := map[int32]int{} // live message node -> place in send order
	for _, i := range c.order {
		if ix.nodes[i].message {
			pos[i] = len(pos)
		}
	}
	// Live messages come in send order: file order, except the preserved
	// segment, which waits for its anchor (the summary).
	var held []session.Message
	next := 0 // the next place in send order to emit
	emit := func(m *session.Message) error { return fn(m) }
	return session.ReadFileContext(ctx, path, h, func(r *session.Record) error {
		i, isNode := byLine[r.Line.Num]
		if !isNode || !ix.nodes[i].message {
			return nil
		}
		m := message(r)
		m.Turn = turns.at.At(r.Line.Offset)
		switch {
		case c.live[i]:
			m.State = session.Live
		case r.Sidechain:
			m.State = session.Sidechain
		case c.boundary >= 0 && i < c.boundary:
			m.State = session.Compacted
		default:
			m.State = session.OffChain
		}
		if opt.All {
			return emit(&m)
		}
		if m.State != session.Live {
			return nil
		}
		if pos[i] != next {
			held = append(held, cloneMessage(&m))
			return nil
		}
		if err := emit(&m); err != nil {
			return err
		}
		next++
		for len(held) > 0 {
			progress := false
			for k := range held {
				if pos[byLine[held[k].Line]] == next {
					if err := emit(&held[k]); err != nil {
						return err
					}
					held = append(held[:k], held[k+1:]...)
					next++
					progress = true
					break
				}
			}
			if !progress {
				break
			}
		}
		return nil
	})
}

// message makes the Message of a user or assistant record.
func message(r *session.Record) session.Message {
	m := session.Message{Turn: -1, Role: r.Role, Text: r.Text, Thinking: r.Thinking, ToolCalls: r.ToolCalls,
		ToolResults: r.ToolResults, Line: r.Line.Num, Offset: r.Line.Offset, ID: r.UUID, Model: r.Model,
		Timestamp: r.Timestamp}
	m.Prompt = r.UserPrompt
	m.Summary = r.Kind == session.KindCompaction
	if len(r.ToolResults) > 0 && r.Text == "" {
		m.Text = r.ToolResults[0].Output
	}
	switch {
	case r.Synthetic:
		m.Injected = true
	case r.Role == session.RoleUser && !r.UserPrompt && !m.Summary:
		m.Injected = true // meta messages, command echoes, reminders
	}
	return m
}

func cloneMessage(m *session.Message) session.Message {
	c := *m
	c.Text = strings.Clone(m.Text)
	c.Thinking = strings.Clone(m.Thinking)
	c.ToolCalls = append([]session.ToolCall(nil), m.ToolCalls...)
	c.ToolResults = append([]session.ToolResult(nil), m.ToolResults...)
	return c
}

// turnList is the turns of a file and the index of where each applies.
type turnList struct {
	turns []session.Turn
	at    session.TurnIndex
}

// Turns implements session.Conversation.
func (h Home) Turns(ctx context.Context, path string) ([]session.Turn, error) {
	ix, err := buildIndex(ctx, path)
	if err != nil {
		return nil, err
	}
	return ix.turns(ix.walk()).turns, nil
}

// turns numbers the prompts of the main chain side in file order. A copy
// of an earlier prompt (sessctl's compaction tail: same words, same time)
// is the same turn; when the copy is the live one, the turn is there now.
func (ix *index) turns(c *chain) *turnList {
	tl := &turnList{}
	byKey := map[uint64]int{} // prompt key -> turn
	boundaryOff := int64(-1)
	if c.boundary >= 0 {
		boundaryOff = ix.nodes[c.boundary].off
	}
	lastCompaction := int64(-1)
	for i := range ix.nodes {
		if n := &ix.nodes[i]; n.boundary && !n.sidechain {
			lastCompaction = n.off
		}
	}
	for _, p := range ix.prompts {
		n := &ix.nodes[p.node]
		if n.sidechain {
			continue
		}
		st := session.OffChain
		switch {
		case c.live[p.node]:
			st = session.Live
		case boundaryOff >= 0 && n.off < boundaryOff:
			st = session.Compacted
		}
		if k, ok := byKey[p.key]; ok {
			if st == session.Live {
				t := &tl.turns[k]
				t.Line, t.Offset, t.Cut, t.UUID, t.State = n.line, n.off, p.cut, p.uuid, st
				tl.at.Add(p.cut, k)
			}
			continue
		}
		k := len(tl.turns)
		byKey[p.key] = k
		tl.turns = append(tl.turns, session.Turn{N: k, Line: n.line, Offset: n.off, Cut: p.cut, UUID: p.uuid,
			Timestamp: p.timestamp, Prompt: p.preview, State: st, CompactedAfter: lastCompaction > n.off})
		tl.at.Add(p.cut, k)
	}
	tl.at.Sort()
	return tl
}

// decodeObject decodes a record's line into v.
func decodeObject(r *session.Record, v any) error {
	raw := r.Line.Raw
	if r.Line.RawControl {
		raw = jsonl.Strict(raw)
	}
	return json.Unmarshal(raw, v)
}
