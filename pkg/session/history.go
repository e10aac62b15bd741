package session

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/maphash"
	"sort"
	"time"
)

// The conversation model: what a client sends the model when it resumes a
// session (its live history), and the turns a revert can go back to. Each
// home computes both from its own rules (compaction boundaries, rollbacks,
// the chain from the newest leaf, sessctl's own compaction copies), so
// that every operation (show, checkpoints, revert, compact, stats, grep,
// export) sees one answer.

// State says whether a message is part of what the client sends now, and
// if not, why.
type State uint8

// States. Live is the zero value.
const (
	Live       State = iota
	RolledBack       // Codex: removed from the history by a thread_rolled_back
	Compacted        // before the compaction the client resumes from (replaced by its summary)
	OffChain         // Claude Code, clawdcode: not on the chain the client resumes (rewound, dead branch, unanswered tip)
	Sidechain        // a subagent's message (its own context, not the session's)
	Rotated          // only in a rotated copy of the file (see pkg/show)
	Dropped          // the client skips the line when it reads the file (Kimi: invalid records)
)

var stateNames = [...]string{
	Live: "live", RolledBack: "rolled_back", Compacted: "compacted", OffChain: "off_chain",
	Sidechain: "sidechain", Rotated: "rotated", Dropped: "dropped",
}

// String returns the stable name used in JSON output.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state?"
}

// MarshalText implements encoding.TextMarshaler.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Message is one message of a conversation, as the model receives it.
type Message struct {
	// Turn is the turn the message belongs to, numbered as Turns numbers
	// them (the N of `checkpoints` and `revert --checkpoint N`): reverting
	// to Turn removes the message. -1 before the first turn.
	Turn int
	Role Role
	// Text is what the model reads (text parts joined by newlines); for a
	// tool result it is the result's output.
	Text        string
	Thinking    string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	// Prompt marks the user prompt that starts Turn.
	Prompt bool
	// Summary marks a compaction summary (the client's or sessctl's).
	Summary bool
	// Injected marks context the client added itself: reminders,
	// environment and permission blocks, command echoes, meta messages,
	// synthetic replies. The rule per agent is in docs/show.md.
	Injected bool
	// Synthetic marks a message the client makes up when it sends the
	// history and never writes (Codex's "aborted" output for a call that
	// has none): no line holds it, so writers skip it.
	Synthetic bool
	// State is Live for what the client sends; with HistoryOptions.All,
	// the other states say why a message is no longer sent.
	State State
	// Where the message comes from: the file (set by callers that read
	// several), the 1-based line and its byte offset. Messages made from
	// part of a line (a Codex compaction's replacement history) share the
	// line.
	File   string
	Line   int
	Offset int64
	// ID is the client's id of the message: Claude Code and clawdcode
	// uuid, Codex call id for tool items; "" when it has none.
	ID        string
	Model     string
	Timestamp time.Time
}

// HistoryOptions control History.
type HistoryOptions struct {
	// All includes the messages the client no longer sends, each with its
	// State, in file order; without it only Live messages come, in the
	// order the client sends them.
	All bool
	// Want, when set, lets History leave out the live messages of lines
	// it rejects (it is given each line's raw bytes, on several cores at
	// once): a caller that needs only some messages (grep: those whose line
	// holds the pattern) spares decoding the rest. Turns and states of the
	// messages given are unchanged, and so are their tool results' names:
	// the messages holding a call or a result with the id of a result
	// given are given too (the caller names a result after its call, and
	// forgets the name once a result answered it). A home may
	// ignore Want and give every message. It has no effect with All.
	Want func(raw []byte) bool
	// LiveMaps, when set with Want, keeps what a home's structure pass
	// finds of a file (where its live messages are, their turns, which
	// of them name each other's tool results) from one run to the next,
	// so that a later History with Want reads only the lines Want takes
	// and those it needs to name them. A home may ignore it.
	LiveMaps LiveMapCache
}

// LiveMapCache keeps the live map of a file that a home encodes (pkg/index
// keeps them): what build returns is stored under the file and tag, and
// given back while the file is unchanged.
type LiveMapCache interface {
	LiveMap(path, tag string, build func() ([]byte, error)) ([]byte, error)
}

// NoLiveMaps keeps nothing: every LiveMap builds (for a home whose search
// through a live map made on the spot costs less than one without).
var NoLiveMaps LiveMapCache = noLiveMaps{}

type noLiveMaps struct{}

func (noLiveMaps) LiveMap(_, _ string, build func() ([]byte, error)) ([]byte, error) { return build() }

// Turn is a point a session can be reverted to: a user prompt (Claude
// Code, Codex, clawdcode) or a checkpoint record (Kimi).
type Turn struct {
	// N is the number `revert --checkpoint N` takes: the checkpoint id
	// (Kimi) or the turn's place among the revertible turns, from 0. It is
	// -1 for a turn that cannot be reverted to (rolled back already).
	N int
	// Line and Offset locate the prompt or checkpoint record.
	Line   int
	Offset int64
	// Cut is where a revert that cuts the file cuts it for this turn (at
	// or before Offset: records the client writes just before a prompt
	// belong to its turn).
	Cut int64
	// CutLine is the number of the line that starts at Cut, when the home
	// knows it (0 otherwise): a revert then reads the file from the cut on
	// without counting the lines before it again.
	CutLine int
	// UUID is the prompt's uuid (Claude Code, clawdcode).
	UUID      string
	Timestamp time.Time
	// Prompt is the user's words that start the turn (Kimi: the first
	// real user input after the checkpoint).
	Prompt string
	// State is Live, Compacted (before the compaction the client resumes
	// from; a cut before it brings it back), RolledBack (Codex) or
	// OffChain (a rewound branch).
	State State
	// CompactedAfter is set when a compaction follows the turn.
	CompactedAfter bool
}

// Conversation is the live-history model of an agent's files. Every home
// implements it.
type Conversation interface {
	// History streams the messages of the transcript at path (a main
	// file of this agent, or one of its rotations) through fn, as
	// HistoryOptions say. fn's Message is only valid during the call.
	History(ctx context.Context, path string, opt HistoryOptions, fn func(*Message) error) error
	// Turns lists the turns of the transcript at path in file order.
	Turns(ctx context.Context, path string) ([]Turn, error)
	// TurnUnit names what Turns lists: "turn", or "checkpoint" (Kimi).
	TurnUnit() string
}

// TurnTracking is a Conversation that can number the turns of a
// transcript from its records as a caller reads them anyway (stats), so
// that the file is not read a second time for its turns.
type TurnTracking interface {
	NewTurnTracker() TurnTracker
}

// TurnTracker numbers turns from records handed to Add in file order:
// every record of the transcript, as ReadFile gives them (corrupt and
// blank ones too). Turns, after the last one, is what Conversation.Turns
// gives for the file. Every turn's Line is the line of a record with
// UserPrompt or of Kind KindCheckpoint.
type TurnTracker interface {
	Add(r *Record)
	Turns() []Turn
}

// Gauge is the context-size rule of an agent (tokens.md §5). Every home
// implements it.
type Gauge interface {
	// RecordedContext returns the context size a record records, with a
	// name for where it came from, or -1 when the record says nothing
	// about it.
	RecordedContext(r *Record) (int64, string)
	// DefaultModel is the model the client uses when the file names none
	// ("" when unknown).
	DefaultModel() string
	// DefaultWindow is the context window to assume when neither the file
	// nor the model says (0: sessctl's general guess).
	DefaultWindow() int
	// CompactAt is the context size, in tokens, at which the client
	// compacts a conversation with this window on its own.
	CompactAt(window int) int
}

// ContextFilter is a Gauge that can tell from a line's bytes alone that
// its record records no context size, so that a pass that wants only the
// recorded context sizes (the checkpoints' tokens) decodes none of the
// other lines.
type ContextFilter interface {
	// MayRecordContext reports false only for a line whose record
	// RecordedContext gives -1 (MayHoldKey makes it easy to be sure).
	MayRecordContext(raw []byte) bool
}

// MayHoldKey reports whether a JSON line may hold an object key that a
// decoder reads as one of keys (ASCII, lower case). It errs only towards
// true: the decoders match keys without regard to case, Unicode's simple
// folding included (U+017F ſ is an s, U+212A K a k), and a key may be
// written with \u escapes, so a line with either may, as may one that
// holds one of keys, in any case, as a whole string ("key": a key or a
// value; a mention inside a longer text is not one).
func MayHoldKey(raw []byte, keys ...string) bool {
	if bytes.Contains(raw, []byte(`\u`)) || bytes.Contains(raw, []byte("\u017f")) || bytes.Contains(raw, []byte("\u212a")) {
		return true
	}
	for _, k := range keys {
		if quotedFoldASCII(raw, k) {
			return true
		}
	}
	return false
}

// quotedFoldASCII reports whether b holds k (ASCII, lower case) in any
// ASCII case between two quotes. It looks for k's first byte in each case
// with IndexByte, each search going on from where its last find was.
func quotedFoldASCII(b []byte, k string) bool {
	lo, up := k[0], k[0]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	next := func(c byte, from int) int {
		if j := bytes.IndexByte(b[from:], c); j >= 0 {
			return from + j
		}
		return len(b)
	}
	il, iu := next(lo, 0), len(b)
	if up != lo {
		iu = next(up, 0)
	}
	for {
		i := min(il, iu)
		if len(b)-i < len(k)+1 {
			return false
		}
		if i > 0 && b[i-1] == '"' && b[i+len(k)] == '"' && bytes.EqualFold(b[i:i+len(k)], []byte(k)) {
			return true
		}
		if i == il {
			il = next(lo, i+1)
		} else {
			iu = next(up, i+1)
		}
	}
}

// RecordedContext is the context size record r records (tokens.md §5), with
// where it came from, or -1: a compaction's compactMetadata.postTokens, or
// what the agent's Gauge reads. Subagent (sidechain) records, corrupt and
// blank lines say nothing.
func RecordedContext(r *Record) (int64, string) {
	if r.Sidechain || r.Kind == KindCorrupt || r.Kind == KindBlank {
		return -1, ""
	}
	if r.Kind == KindCompaction && r.ContextTokens >= 0 {
		return r.ContextTokens, "compactMetadata.postTokens"
	}
	if g, ok := As[Gauge](r.Agent); ok {
		return g.RecordedContext(r)
	}
	return -1, ""
}

// LiveUsage reports whether a record's usage describes a real model
// response: an assistant record with non-zero usage that the client did not
// invent (all-zero usage marks Claude's synthetic replies and the tail
// copies sessctl's compaction writes).
func LiveUsage(r *Record) bool {
	return r.Usage != nil && r.Usage.Total() > 0 && !r.Synthetic && r.Role == RoleAssistant
}

// TurnIndex says which turn a message at a byte offset belongs to: the
// turn whose cut is the last at or before it. Build it with Add in any
// order, then Sort.
type TurnIndex struct {
	starts []turnStart
}

type turnStart struct {
	off int64
	n   int
}

// Add records that turn n applies from offset off on.
func (ti *TurnIndex) Add(off int64, n int) { ti.starts = append(ti.starts, turnStart{off, n}) }

// Sort orders what Add recorded; call it once before At.
func (ti *TurnIndex) Sort() {
	sort.SliceStable(ti.starts, func(i, j int) bool { return ti.starts[i].off < ti.starts[j].off })
}

// At is the turn of a message at offset off, -1 before the first.
func (ti *TurnIndex) At(off int64) int {
	k := sort.Search(len(ti.starts), func(i int) bool { return ti.starts[i].off > off })
	if k == 0 {
		return -1
	}
	return ti.starts[k-1].n
}

// PromptKey identifies a prompt by its words and time: the copy of a prompt
// that sessctl's compaction writes into a kept tail repeats both, and is
// the same turn.
func PromptKey(r *Record) string {
	// a 128-bit digest, not the words themselves: a prompt can be a huge
	// paste, and the key is kept for every turn
	var k [16]byte
	for i, seed := range promptSeeds {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(r.Timestamp.UTC().Format(time.RFC3339Nano))
		h.WriteByte(0)
		h.WriteString(r.Prompt)
		binary.LittleEndian.PutUint64(k[8*i:], h.Sum64())
	}
	return string(k[:])
}

var promptSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
