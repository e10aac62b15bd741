package claude

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// The conversation Claude Code rebuilds on resume. These are 2.1.197's
// rules (docs/formats/claude-code.md says how they were found; the e2e
// oracle holds them to the real client, and testdata/oracle keeps what it
// found):
//
//   - The entries are the lines of type user, assistant, attachment and
//     system that have a uuid (a later line with the same uuid replaces
//     the entry but keeps its place); a progress line is skipped, its
//     children hang from its parent instead.
//   - A compaction boundary whose metadata lists a preserved segment
//     (compactMetadata.preservedMessages, else the preservedSegment walk
//     from tailUuid up to headUuid) relinks it: the segment hangs from the
//     anchor (the summary), and what hung from the anchor hangs from the
//     segment's tail. Once any boundary has preserved a segment, every
//     entry before the newest boundary is dropped (except the segment).
//   - The leaf: the newest last-prompt record names one (a boundary
//     forgets the last-prompt records before it); when the newest entry of
//     the file descends from it, that entry is the leaf instead; with no
//     last-prompt, the newest entry. (With a preserved segment, the leaves
//     of the whole graph are considered, and the one of the last-prompt,
//     or the newest entry, wins when there are several.) The leaf goes up
//     to the nearest user or assistant entry.
//   - The chain runs from the leaf up the parent links; a parent that is
//     missing (a garbled line) is replaced by the entry written at most
//     5 s before (by timestamp) on the same side (main or sidechain).
//   - Lines of one assistant message (message.id) that are not on the
//     chain, and the tool results answering them, join the chain after
//     its last line of that message.
//   - An assistant line whose tool calls all lack a result on the chain
//     (an interrupted call) is not sent, wherever it is; then neither is a
//     line of thinking only whose response has nothing else left. A file
//     Claude Code 2.1.330 or later wrote last keeps such lines when they
//     end the chain: that client sends them with a result of its own.
//   - The client adds "No response requested." (and, after a tool result
//     or an attachment, "Continue from where you left off." before it)
//     when the chain ends with a user message, and writes them in the run
//     that leads to the new prompt: they belong to that prompt's turn.
//   - Sidechain (subagent) lines are never the leaf, and a missing parent
//     is never bridged across sides.
//
// Files over 5 MiB are read differently by the client (it skips what
// precedes the last compaction, or keeps only the chain of the last line);
// sessctl applies the rules above to them too (unverified there).
//
// Turns are the user prompts of the main file in file order, numbered from
// 0; the copy of a prompt that sessctl's compaction writes into the kept
// tail (same promptId, or same text and timestamp) is the same turn, not a
// new one.

// bridgeWindow is how far back (by timestamp) the client looks for the
// entry that replaces a missing parent.
const bridgeWindow = 5000 * time.Millisecond

// node is one entry line of a file, as the chain walk needs it. A file has
// one per line: its fields are laid out with no padding to spare (96
// bytes).
type node struct {
	line   int
	off    int64
	len    int64 // the line's length without its terminator
	self   uint64
	parent uint64 // 0: null
	ts     int64  // UnixMilli; noTime when the line has none
	msgID  uint64 // assistant message.id
	// preserved is the boundary's preserved segment (preservedMessages,
	// else preservedSegment)
	preserved *preserved
	// the ids of its tool calls (assistant), then the call ids its tool
	// results answer (user): nCalls and nResults of index.ids from idAt
	// (index.calls, index.results). Slices of their own cost each line 48
	// bytes and an allocation.
	idAt             int
	nCalls, nResults int32
	// prompt is the index of the turn a prompt line starts, -1 otherwise
	prompt    int32
	sidechain bool
	userAsst  bool // a user or assistant entry
	assistant bool // an assistant entry
	message   bool // a user or assistant line sessctl shows
	thinking  bool // an assistant line holding thinking only
	result    bool // a user line with tool results
	summary   bool // a compaction summary
	boundary  bool // a compact_boundary
	hit       bool // a user or assistant line that History's Want took
}

const noTime = -1 << 63

type preserved struct {
	listed           bool // preservedMessages: anchor and uuids
	anchor           uint64
	uuids            []uint64
	head, tail       uint64 // preservedSegment
	haveSeg, haveAny bool
}

// prompt is what the index keeps of a user prompt.
type prompt struct {
	key       uint64 // text and timestamp: sessctl's tail copies repeat both
	node      int32
	cut       int64
	cutLine   int // the number of the line that starts at cut
	uuid      string
	timestamp time.Time
	preview   string
}

// index is pass one over a file.
type index struct {
	seed    maphash.Seed
	nodes   []node
	prompts []prompt
	// the client's map of entries: uuid -> newest node, and the uuids in
	// the order they were first seen
	byID  map[uint64]int32
	order []uint64
	ids   []uint64 // the nodes' call and result ids (node.idAt)
	// progress lines: uuid -> the parent their children get instead
	progress map[uint64]uint64
	// what the last lines said about the leaf
	newest   uint64 // the newest main-side entry
	lastLeaf uint64 // newest last-prompt leafUuid since the last boundary
	explicit bool   // that last-prompt was explicit, and no entry followed
	cleared  bool   // an explicit last-prompt with a null leafUuid, no entry after
	size     int64
	// version is the newest client version a line names: the client that
	// wrote the file last, whose rules sessctl predicts the resume by
	version string
}

// calls are the ids of n's tool calls, results the call ids its tool
// results answer; neither may be appended to.
func (ix *index) calls(n *node) []uint64 {
	return ix.ids[n.idAt : n.idAt+int(n.nCalls) : n.idAt+int(n.nCalls)]
}

func (ix *index) results(n *node) []uint64 {
	at := n.idAt + int(n.nCalls)
	return ix.ids[at : at+int(n.nResults) : at+int(n.nResults)]
}

func (ix *index) hash(s string) uint64 {
	if s == "" {
		return 0
	}
	return maphash.String(ix.seed, s)
}

// claudeMeta is what pass one reads beyond the Record.
type claudeMeta struct {
	PromptID        string  `json:"promptId"`
	LeafUUID        *string `json:"leafUuid"`
	Explicit        bool    `json:"explicit"`
	CompactMetadata *struct {
		PreservedSegment *struct {
			Head   string `json:"headUuid"`
			Anchor string `json:"anchorUuid"`
			Tail   string `json:"tailUuid"`
		} `json:"preservedSegment"`
		PreservedMessages *struct {
			Anchor string   `json:"anchorUuid"`
			UUIDs  []string `json:"uuids"`
		} `json:"preservedMessages"`
	} `json:"compactMetadata"`
}

// entryType reports whether a record type is one the client keeps as an
// entry of its map.
func entryType(t string) bool {
	return t == "user" || t == "assistant" || t == "attachment" || strings.HasPrefix(t, "system/")
}

// indexBuilder builds the index of a transcript from its records, handed
// to add one by one in file order.
type indexBuilder struct {
	ix *index
	// Claude Code writes queue-operation and file-history-snapshot records
	// just before a prompt, and a prompt typed while a tool call was
	// pending follows the assistant's tool_use lines: those belong to the
	// new turn, so a cut before the turn goes before them.
	runStart, toolStart int64
	// the numbers of the lines that start there
	runLine, toolLine int
}

func newIndexBuilder() *indexBuilder {
	return &indexBuilder{ix: &index{seed: maphash.MakeSeed(), byID: map[uint64]int32{}, progress: map[uint64]uint64{}},
		runStart: -1, toolStart: -1}
}

// buildIndex reads a file once for its structure (scanFacts: the fields
// the index needs, on every core), decoding in full only the lines the
// structure scanner leaves to the full decoder. want, when not nil, is
// asked of every user and assistant line (node.hit).
func buildIndex(ctx context.Context, path string, want func(raw []byte) bool) (*index, error) {
	b := newIndexBuilder()
	decode := decodeFactsLazy
	if want != nil {
		decode = func(l *jsonl.Line, f *facts) {
			decodeFactsLazy(l, f)
			f.hit = (f.typ == "user" || f.typ == "assistant") && want(l.Raw)
		}
	}
	err := session.ScanFileLazy(ctx, path, decode, func(l *jsonl.Line, f *facts) error {
		b.add(l, f)
		return nil
	})
	return b.ix, err
}

func (b *indexBuilder) add(l *jsonl.Line, r *facts) {
	b.ix.size = l.End()
	if r.skip {
		return
	}
	if r.version != "" {
		b.ix.version = r.version
	}
	off := l.Offset
	if r.userPrompt && r.uuid != "" {
		cut, cutLine := off, l.Num
		if b.runStart >= 0 {
			cut, cutLine = b.runStart, b.runLine
		}
		if b.toolStart >= 0 && b.toolStart < cut {
			cut, cutLine = b.toolStart, b.toolLine
		}
		b.ix.prompts = append(b.ix.prompts, prompt{
			key: b.ix.hash(r.promptKey), node: int32(len(b.ix.nodes)),
			cut: cut, cutLine: cutLine, uuid: r.uuid, timestamp: r.ts, preview: r.preview})
	}
	switch {
	case r.typ == "queue-operation" || r.typ == "file-history-snapshot" || r.continuePair:
		if b.runStart < 0 {
			b.runStart, b.runLine = off, l.Num
		}
	default:
		b.runStart = -1
	}
	if r.uuid != "" && !r.sidechain {
		if r.callsOnly {
			if b.toolStart < 0 {
				b.toolStart, b.toolLine = off, l.Num
			}
		} else {
			b.toolStart = -1
		}
	}
	switch {
	case r.typ == "progress" && r.uuid != "":
		p := b.ix.hash(r.parent)
		if q, ok := b.ix.progress[p]; ok {
			p = q
		}
		b.ix.progress[b.ix.hash(r.uuid)] = p
	case r.typ == "last-prompt":
		m := r.meta
		if m == nil {
			return
		}
		switch {
		case m.LeafUUID != nil && *m.LeafUUID != "":
			leaf := b.ix.hash(*m.LeafUUID)
			b.ix.explicit = m.Explicit || b.ix.explicit && leaf == b.ix.lastLeaf
			b.ix.lastLeaf, b.ix.cleared = leaf, false
		case m.LeafUUID == nil && m.Explicit:
			// (absent and null decode alike; the client checks for null)
			b.ix.cleared, b.ix.lastLeaf, b.ix.explicit = true, 0, false
		}
	case entryType(r.typ) && r.uuid != "":
		b.ix.add(l, r)
	}
}

// NewTurnTracker implements session.TurnTracking: the turns numbered from
// the records a caller reads anyway (stats), as Turns numbers them.
func (Home) NewTurnTracker() session.TurnTracker { return turnTracker{newIndexBuilder()} }

type turnTracker struct{ b *indexBuilder }

func (t turnTracker) Add(r *session.Record) {
	var f facts
	factsOf(r, &f)
	t.b.add(&r.Line, &f)
}

func (t turnTracker) Turns() []session.Turn {
	ix := t.b.ix
	return ix.turns(ix.walk()).turns
}

// The synthetic pair Claude Code sends, and writes, before a prompt when
// the history it resumes ends with a user message.
const (
	continueText   = "Continue from where you left off."
	noResponseText = "No response requested."
)

// continuePair reports whether r is a line of that pair: written by the run
// that writes the prompt after it, so part of the prompt's turn.
func continuePair(r *session.Record) bool {
	switch r.Role {
	case session.RoleUser:
		return !r.UserPrompt && strings.TrimSpace(r.Text) == continueText
	case session.RoleAssistant:
		return r.Synthetic && strings.TrimSpace(r.Text) == noResponseText
	}
	return false
}

func (ix *index) add(l *jsonl.Line, r *facts) {
	n := node{line: l.Num, off: l.Offset, len: l.Len, self: ix.hash(r.uuid), parent: ix.hash(r.parent),
		ts: noTime, sidechain: r.sidechain, prompt: -1}
	if q, ok := ix.progress[n.parent]; ok && n.parent != 0 {
		n.parent = q
	}
	if !r.ts.IsZero() {
		n.ts = r.ts.UnixMilli()
	}
	n.userAsst = r.typ == "user" || r.typ == "assistant"
	n.assistant = r.typ == "assistant"
	n.message = n.userAsst
	n.idAt, n.nCalls, n.nResults = len(ix.ids), int32(len(r.calls)), int32(len(r.results))
	for _, c := range r.calls {
		ix.ids = append(ix.ids, ix.hash(c))
	}
	for _, t := range r.results {
		ix.ids = append(ix.ids, ix.hash(t))
	}
	n.thinking = r.thinkingOnly
	n.result = r.result
	n.summary = r.summary
	n.hit = r.hit
	n.boundary = r.typ == "system/compact_boundary"
	if r.typ == "assistant" {
		n.msgID = ix.hash(r.msgID)
	}
	if n.boundary {
		if m := r.meta; m != nil && m.CompactMetadata != nil {
			p := &preserved{}
			if pm := m.CompactMetadata.PreservedMessages; pm != nil {
				p.listed, p.haveAny, p.anchor = true, true, ix.hash(pm.Anchor)
				for _, u := range pm.UUIDs {
					p.uuids = append(p.uuids, ix.hash(u))
				}
			}
			if ps := m.CompactMetadata.PreservedSegment; ps != nil {
				p.haveSeg, p.haveAny = true, true
				p.head, p.tail = ix.hash(ps.Head), ix.hash(ps.Tail)
				if !p.listed {
					p.anchor = ix.hash(ps.Anchor)
				}
			}
			if p.haveAny {
				n.preserved = p
			}
		}
	}
	if r.userPrompt && len(ix.prompts) > 0 && ix.prompts[len(ix.prompts)-1].node == int32(len(ix.nodes)) {
		n.prompt = int32(len(ix.prompts) - 1)
	}
	if _, seen := ix.byID[n.self]; !seen {
		ix.order = append(ix.order, n.self)
	}
	ix.byID[n.self] = int32(len(ix.nodes)) // a later line with the same uuid replaces the entry
	if !n.sidechain {
		ix.newest, ix.explicit, ix.cleared = n.self, false, false
	}
	if n.boundary {
		ix.lastLeaf, ix.explicit = 0, false
	}
	ix.nodes = append(ix.nodes, n)
}

// graph is the client's map after the compaction relink: the entries that
// are left and their parents.
type graph struct {
	ix      *index
	parent  map[uint64]uint64 // uuid -> parent (0: null), for the entries left
	dropped map[uint64]bool   // entries before the newest boundary, dropped
	// segTail is the tail of the preserved segment the relink used, 0
	// when none
	segTail uint64
}

func (g *graph) has(u uint64) bool {
	if u == 0 || g.dropped[u] {
		return false
	}
	_, ok := g.ix.byID[u]
	return ok
}

func (g *graph) node(u uint64) *node { return &g.ix.nodes[g.ix.byID[u]] }

// relink applies the preserved segment of the compaction boundaries, as the
// client does when it loads the file.
func (ix *index) relink() *graph {
	g := &graph{ix: ix, parent: make(map[uint64]uint64, len(ix.order)), dropped: map[uint64]bool{}}
	last, lastPreserved := int32(-1), int32(-1)
	var meta *preserved
	for p, u := range ix.order {
		n := &ix.nodes[ix.byID[u]]
		g.parent[u] = n.parent
		if n.boundary {
			last = int32(p)
			if n.preserved != nil {
				lastPreserved, meta = int32(p), n.preserved
			}
		}
	}
	if meta == nil {
		return g
	}
	var seg []uint64
	anchor := meta.anchor
	if lastPreserved == last {
		switch {
		case meta.listed:
			seg = meta.uuids
		case meta.haveSeg:
			seen := map[uint64]bool{}
			ok := false
			for u := meta.tail; u != 0 && !seen[u]; u = g.parent[u] {
				if _, in := ix.byID[u]; !in {
					break
				}
				seen[u] = true
				seg = append(seg, u)
				if u == meta.head {
					ok = true
					break
				}
			}
			if !ok {
				return g // the client gives up on a broken segment and changes nothing
			}
			for i, j := 0, len(seg)-1; i < j; i, j = i+1, j-1 {
				seg[i], seg[j] = seg[j], seg[i]
			}
		}
		for _, u := range seg {
			if _, in := ix.byID[u]; !in {
				return g // a listed message is missing: nothing changes
			}
		}
	}
	inSeg := make(map[uint64]bool, len(seg))
	for _, u := range seg {
		inSeg[u] = true
	}
	if len(seg) > 0 {
		g.segTail = seg[len(seg)-1]
		prev := anchor
		for _, u := range seg {
			g.parent[u] = prev
			prev = u
		}
		for _, u := range ix.order {
			if g.parent[u] == anchor && u != seg[0] {
				g.parent[u] = g.segTail
			}
		}
	}
	for p, u := range ix.order {
		if int32(p) < last && !inSeg[u] {
			g.dropped[u] = true
		}
	}
	if len(seg) > 0 && len(g.dropped) > 0 {
		for _, u := range ix.order {
			if !g.dropped[u] && g.node(u).userAsst && g.dropped[g.parent[u]] {
				g.parent[u] = g.segTail
			}
		}
	}
	return g
}

// up walks from u to the nearest user or assistant entry (u itself
// included), 0 when there is none.
func (g *graph) up(u uint64) uint64 {
	seen := map[uint64]bool{}
	for g.has(u) && !seen[u] {
		seen[u] = true
		if g.node(u).userAsst {
			return u
		}
		u = g.parent[u]
	}
	return 0
}

// leaf picks the entry the client resumes from, 0 for none.
func (g *graph) leaf() uint64 {
	ix := g.ix
	if ix.cleared {
		return 0
	}
	relinked := g.segTail != 0
	named := ix.explicit && g.has(ix.lastLeaf) && !g.node(ix.lastLeaf).sidechain
	var leaves []uint64
	if !relinked || named {
		ne := uint64(0)
		if g.has(ix.lastLeaf) {
			ne = ix.lastLeaf
		}
		if ne != 0 && !ix.explicit && g.has(ix.newest) && ix.newest != ne {
			seen := map[uint64]bool{}
			for u := ix.newest; u != 0 && !seen[u]; u = g.parent[u] {
				if u == ne {
					ne = ix.newest // the file went on from the named leaf
					break
				}
				seen[u] = true
				if !g.has(u) {
					break
				}
			}
		}
		if !relinked && ne == 0 {
			ne = ix.newest
		}
		if u := g.up(ne); u != 0 {
			leaves = []uint64{u}
		}
	}
	if leaves == nil {
		hasChild := map[uint64]bool{}
		hasMsgChild := map[uint64]bool{}
		for _, u := range ix.order {
			if g.dropped[u] {
				continue
			}
			if p := g.parent[u]; p != 0 {
				hasChild[p] = true
				if g.node(u).userAsst {
					hasMsgChild[p] = true
				}
			}
		}
		in := map[uint64]bool{}
		for _, u := range ix.order {
			if g.dropped[u] || hasChild[u] {
				continue
			}
			if m := g.up(u); m != 0 && !hasMsgChild[m] && !in[m] {
				in[m] = true
				leaves = append(leaves, m)
			}
		}
		if len(leaves) > 1 {
			ne := ix.newest
			if in[ix.lastLeaf] {
				ne = ix.lastLeaf
			}
			if g.has(ne) {
				if m := g.up(ne); m != 0 {
					leaves = []uint64{m}
				}
			}
		}
	}
	// the newest of the leaves (by timestamp) that is a main-side message
	best, bestTS := uint64(0), int64(noTime)
	for _, u := range ix.order {
		if g.dropped[u] {
			continue
		}
		n := g.node(u)
		if n.sidechain || !n.userAsst || n.ts == noTime || n.ts <= bestTS {
			continue
		}
		for _, l := range leaves {
			if l == u {
				best, bestTS = u, n.ts
			}
		}
	}
	if best == 0 && len(leaves) == 0 {
		// no leaf at all: the newest main-side entry of any type
		for _, u := range ix.order {
			if n := g.node(u); !g.dropped[u] && !n.sidechain && n.ts != noTime && n.ts > bestTS {
				best, bestTS = u, n.ts
			}
		}
	}
	return best
}

// chain is the result of the walk: the live nodes in the order the client
// sends them, and the states of the others.
type chain struct {
	live     map[int32]bool // node -> on the resumed chain
	order    []int32        // live nodes in send order
	boundary int32          // the boundary the chain starts at, -1 when none
	g        *graph
}

// walk finds the resumed chain.
func (ix *index) walk() *chain {
	g := ix.relink()
	c := &chain{live: map[int32]bool{}, boundary: -1, g: g}
	leaf := g.leaf()
	if leaf == 0 {
		return c
	}
	var rev []uint64
	on := map[uint64]bool{}
	for u := leaf; u != 0; {
		on[u] = true
		rev = append(rev, u)
		p := g.parent[u]
		if p == 0 {
			break
		}
		if !g.has(p) || on[p] {
			p = g.bridge(u, on)
		}
		u = p
	}
	order := make([]uint64, 0, len(rev))
	for k := len(rev) - 1; k >= 0; k-- {
		order = append(order, rev[k])
	}
	order = g.recoverSplit(order, on)
	order = g.dropUnanswered(order)
	for _, u := range order {
		i := ix.byID[u]
		c.live[i] = true
		c.order = append(c.order, i)
		if ix.nodes[i].boundary && c.boundary < 0 {
			c.boundary = i
		}
	}
	return c
}

// dropUnanswered leaves out what the client drops when it loads the chain
// for a resume: an assistant line whose tool calls all lack a result on
// the chain (an interrupted call; the whole line goes, whatever else it
// holds), then a line of thinking only whose message has no other
// content left.
//
// Claude Code 2.1.330 keeps the unanswered calls at the tip (the last
// user or assistant entries of the chain): it sends them with a result
// of its own ("[Tool call interrupted: …]") and "No response requested.",
// which it writes into the file. For a file 2.1.330 or later wrote last,
// those stay; calls further up are still dropped (what 2.1.330 does with
// them is not known).
func (g *graph) dropUnanswered(order []uint64) []uint64 {
	answered := map[uint64]bool{}
	for _, u := range order {
		for _, id := range g.ix.results(g.node(u)) {
			answered[id] = true
		}
	}
	tip := len(order) // where the run of unanswered assistant entries at the end starts
	if versionAtLeast(g.ix.version, 2, 1, 330) {
		for k := len(order) - 1; k >= 0; k-- {
			n := g.node(order[k])
			if !n.userAsst {
				continue
			}
			if !n.assistant {
				break
			}
			tip = k // the lines of the last response
		}
	}
	kept := order[:0:0]
	for k, u := range order {
		n := g.node(u)
		if n.nCalls > 0 && n.userAsst && k < tip {
			all := true
			for _, id := range g.ix.calls(n) {
				if answered[id] {
					all = false
				}
			}
			if all {
				continue
			}
		}
		kept = append(kept, u)
	}
	content := map[uint64]bool{} // message ids with more than thinking
	for _, u := range kept {
		if n := g.node(u); n.msgID != 0 && !n.thinking && n.userAsst {
			content[n.msgID] = true
		}
	}
	out := kept[:0]
	for _, u := range kept {
		if n := g.node(u); n.thinking && !content[n.msgID] {
			continue
		}
		out = append(out, u)
	}
	return out
}

// bridge is the entry that replaces the missing parent of u: the one
// written at most bridgeWindow before it, the closest, on the same side.
func (g *graph) bridge(u uint64, on map[uint64]bool) uint64 {
	n := g.node(u)
	if n.ts == noTime {
		return 0
	}
	best, bestD := uint64(0), int64(bridgeWindow/time.Millisecond)+1
	for _, v := range g.ix.order {
		if on[v] || g.dropped[v] {
			continue
		}
		m := g.node(v)
		if m.sidechain != n.sidechain || m.ts == noTime {
			continue
		}
		if d := n.ts - m.ts; d >= 0 && d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// recoverSplit adds the lines of each assistant message of the chain that
// are not on it (the client writes one line per content block, and a
// revert or a parallel tool call can leave some on a side branch), with
// the tool results that answer them, after the chain's last line of that
// message.
func (g *graph) recoverSplit(order []uint64, on map[uint64]bool) []uint64 {
	last := map[uint64]uint64{} // message.id -> last chain line with it
	var ids []uint64
	for _, u := range order {
		if n := g.node(u); n.msgID != 0 {
			if _, seen := last[n.msgID]; !seen {
				ids = append(ids, n.msgID)
			}
			last[n.msgID] = u
		}
	}
	if len(ids) == 0 {
		return order
	}
	lines := map[uint64][]uint64{}   // message.id -> assistant entries
	results := map[uint64][]uint64{} // parent -> tool result entries
	for _, u := range g.ix.order {
		if g.dropped[u] {
			continue
		}
		n := g.node(u)
		switch {
		case n.msgID != 0:
			lines[n.msgID] = append(lines[n.msgID], u)
		case n.result && g.parent[u] != 0:
			results[g.parent[u]] = append(results[g.parent[u]], u)
		}
	}
	after := map[uint64][]uint64{}
	added := 0
	for _, id := range ids {
		var m, r []uint64
		for _, u := range lines[id] {
			if !on[u] {
				m = append(m, u)
			}
			for _, v := range results[u] {
				if !on[v] {
					r = append(r, v)
				}
			}
		}
		if len(m)+len(r) == 0 {
			continue
		}
		g.sortByTime(m)
		g.sortByTime(r)
		add := append(m, r...)
		for _, u := range add {
			on[u] = true
		}
		added += len(add)
		after[last[id]] = add
	}
	if added == 0 {
		return order
	}
	out := make([]uint64, 0, len(order)+added)
	for _, u := range order {
		out = append(out, u)
		out = append(out, after[u]...)
	}
	return out
}

// sortByTime orders entries by timestamp, keeping the order of equals.
func (g *graph) sortByTime(us []uint64) {
	for i := 1; i < len(us); i++ {
		for j := i; j > 0 && g.node(us[j]).ts < g.node(us[j-1]).ts; j-- {
			us[j], us[j-1] = us[j-1], us[j]
		}
	}
}

// History implements session.Conversation.
func (h Home) History(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) error {
	wanting := opt.Want != nil && !opt.All
	var hit func([]byte) bool
	if wanting {
		hit = opt.Want
		if opt.LiveMaps != nil {
			if done, err := h.historyByLiveMap(ctx, path, opt, fn); done {
				return err
			}
		}
	}
	ix, err := buildIndex(ctx, path, hit)
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
	// Live messages come in send order: file order, except where the chain
	// goes back in the file (the preserved segment after its summary, a
	// message's lines recovered from a side branch): those wait.
	var held []session.Message
	next := 0 // the next place in send order to emit
	// with Want (asked in the structure pass: node.hit), the live
	// messages it rejects are not decoded; they keep their place in send
	// order, and are not given. Those that hold a call or a result with
	// the id of a result that is given are decoded all the same: the
	// caller names a result after the call it answers, and forgets the
	// name once a result answered it (show.Items), so the name of each
	// result given comes out as if every line were decoded.
	// TestWantedLinesSameHits and TestWantedLinesNames hold it to that.
	var want func(i int32) bool
	undecoded := map[int]bool{} // lines of held messages not decoded
	if wanting {
		named := map[uint64]bool{} // the call ids of the results given
		for i := range ix.nodes {
			if n := &ix.nodes[i]; n.hit && n.message && c.live[int32(i)] {
				for _, r := range ix.results(n) {
					named[r] = true
				}
			}
		}
		want = func(i int32) bool {
			n := &ix.nodes[i]
			if n.hit {
				return true
			}
			for _, id := range ix.calls(n) {
				if named[id] {
					return true
				}
			}
			for _, id := range ix.results(n) {
				if named[id] {
					return true
				}
			}
			return false
		}
	}
	emit := func(m *session.Message) error {
		if undecoded[m.Line] {
			delete(undecoded, m.Line)
			return nil
		}
		return fn(m)
	}
	// emitHeld emits the held messages whose turn in send order has come
	emitHeld := func() error {
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
	}
	handle := func(r *session.Record) error {
		i, isNode := byLine[r.Line.Num]
		if !isNode || !ix.nodes[i].message {
			return nil
		}
		if r.Undecoded {
			if !c.live[i] {
				return nil
			}
			if pos[i] != next {
				held = append(held, session.Message{Line: r.Line.Num})
				undecoded[r.Line.Num] = true
				return nil
			}
			next++
			return emitHeld()
		}
		m := message(r)
		m.Turn = turns.at.At(r.Line.Offset)
		switch {
		case c.live[i]:
			m.State = session.Live
		case r.Sidechain:
			m.State = session.Sidechain
		case c.g.dropped[ix.nodes[i].self] || c.boundary >= 0 && i < c.boundary:
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
		return emitHeld()
	}
	if !wanting {
		return session.ReadFileContext(ctx, path, h, handle)
	}
	// The live messages in file order: those wanted are read (each
	// alone: the bytes between them are not read again), the others
	// pass as undecoded, keeping their place.
	var (
		live   []int32
		wanted []bool
		at     []session.LineAt
	)
	for i := range ix.nodes {
		n := &ix.nodes[i]
		if !n.message || !c.live[int32(i)] {
			continue
		}
		w := want(int32(i))
		live, wanted = append(live, int32(i)), append(wanted, w)
		if w {
			at = append(at, session.LineAt{Num: n.line, Offset: n.off, Len: n.len})
		}
	}
	k := 0
	// upTo hands over the undecoded live messages before line
	upTo := func(line int) error {
		for ; k < len(live) && ix.nodes[live[k]].line < line; k++ {
			if wanted[k] {
				continue
			}
			n := &ix.nodes[live[k]]
			r := session.Record{Agent: Agent, Line: jsonl.Line{Num: n.line, Offset: n.off}, ContextTokens: -1, Undecoded: true}
			if err := handle(&r); err != nil {
				return err
			}
		}
		return nil
	}
	err = session.ReadLinesAt(ctx, path, h, at, func(r *session.Record) error {
		if err := upTo(r.Line.Num); err != nil {
			return err
		}
		return handle(r)
	})
	if err != nil {
		return err
	}
	return upTo(math.MaxInt)
}

// InjectedContext reports whether an item of a conversation is context
// Claude Code adds on its own whenever it sends a request: entries with
// role system (it puts agent and skill listings there, from its
// attachment records) and <system-reminder> texts. It is the one rule by
// which the e2e oracle leaves injected context out (docs/show.md, "What the
// oracle compares"); show marks every such item injected. Command echoes,
// caveats and the synthetic "Continue from where you left off." pair are
// injected too, but they are messages of the transcript that the client
// sends back as they are, so the oracle compares them.
func (Home) InjectedContext(role session.Role, text string) bool {
	return role == session.RoleSystem || strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "<system-reminder>")
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
	case Home{}.InjectedContext(r.Role, r.Text):
		m.Injected = true
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
	ix, err := buildIndex(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	return ix.turns(ix.walk()).turns, nil
}

// turns numbers the prompts of the main chain side in file order. A copy
// of an earlier prompt (sessctl's compaction tail: same promptId, or same
// words and time) is the same turn; when the copy is the live one, the
// turn is live.
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
		case c.g.dropped[n.self] || boundaryOff >= 0 && n.off < boundaryOff:
			st = session.Compacted
		}
		if k, ok := byKey[p.key]; ok {
			// A copy in a compaction's kept tail: the turn is live through
			// it, but it began where the original is, and a revert to it
			// goes back to before the original (and the compaction that
			// followed it), as the session was then.
			if st == session.Live {
				tl.turns[k].State = st
			}
			continue
		}
		k := len(tl.turns)
		byKey[p.key] = k
		tl.turns = append(tl.turns, session.Turn{N: k, Line: n.line, Offset: n.off, Cut: p.cut, CutLine: p.cutLine, UUID: p.uuid,
			Timestamp: p.timestamp, Prompt: p.preview, State: st, CompactedAfter: lastCompaction > n.off})
		tl.at.Add(p.cut, k)
	}
	tl.at.Sort()
	return tl
}

// unmarshalLine decodes a line into v.
func unmarshalLine(l *jsonl.Line, v any) error {
	raw := l.Raw
	if l.RawControl {
		raw = jsonl.Strict(raw)
	}
	return json.Unmarshal(raw, v)
}

// versionAtLeast reports whether a client version "A.B.C" is at least
// major.minor.patch; an unreadable version is not.
func versionAtLeast(v string, major, minor, patch int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) != 3 {
		return false
	}
	var nums [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return false
		}
		nums[i] = n
	}
	a, b, c := nums[0], nums[1], nums[2]
	if a != major {
		return a > major
	}
	if b != minor {
		return b > minor
	}
	return c >= patch
}
