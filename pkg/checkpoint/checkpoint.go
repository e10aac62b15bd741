// Package checkpoint lists the points a session can be reverted to and
// computes the reverts.
//
// The points are the turns of the agent's conversation model
// (session.Conversation.Turns): Kimi's _checkpoint records, the user
// prompts of the other agents, numbered as `show` numbers them. How a
// revert is written is the agent's (a Reverter, which its home
// implements): kimi-cli's own revert_to, a cut of the file before the
// turn, or Codex's own thread_rolled_back. This package does what is the
// same for all: finding the turn, measuring what leaves the history, and
// the plain cut.
//
// It reads files as streams and never holds a whole file in memory: only
// one small Point per turn.
package checkpoint

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Point is one checkpoint (Kimi) or user turn (other formats).
type Point struct {
	N         int        `json:"n"`                   // checkpoint id (Kimi) or turn number from 0
	Line      int        `json:"line"`                // 1-based line of the _checkpoint record or of the prompt
	Offset    int64      `json:"offset"`              // byte offset of that line
	Cut       int64      `json:"cut"`                 // where a truncating revert to N cuts the file
	Tokens    int64      `json:"tokens"`              // context size just before this point (-1: unknown)
	Preview   string     `json:"preview"`             // the first real user input at or after this point
	Following int        `json:"following"`           // records (non-blank lines) after this line
	UUID      string     `json:"uuid,omitempty"`      // the prompt's uuid (Claude Code, clawdcode)
	Timestamp *time.Time `json:"timestamp,omitempty"` // the prompt's time, when recorded
	// State is "live", or "compacted" for a turn before the compaction the
	// client resumes from (a cut before it brings it back), "rolled_back"
	// (Codex), "off_chain" (a rewound branch).
	State session.State `json:"state"`
	// RolledBack is set on Codex turns that a later thread_rolled_back
	// already removed from the client's history; they get no number
	// (N is -1) and cannot be reverted to.
	RolledBack bool `json:"rolled_back,omitempty"`
	// CompactedAfter is set when a compaction record follows the point
	// (Codex: the revert then cuts the file instead of rolling back).
	CompactedAfter bool `json:"compacted_after,omitempty"`
}

// PreviewLen bounds Point.Preview in runes.
const PreviewLen = session.PreviewLen

// Listing is the result of List.
type Listing struct {
	Points  []Point `json:"points"`
	Records int     `json:"records"` // non-blank lines in the file
	// Unit is what a point is: "turn", or "checkpoint" (Kimi).
	Unit string `json:"-"`
	// Live counts the turns a revert can go back to.
	Live int `json:"-"`
}

// List reads a session file and returns its checkpoints (Kimi) or user
// turns (other formats): the agent's turns, with the context size recorded
// just before each and the records that follow it.
func List(ctx context.Context, path string, agent session.Agent) (*Listing, error) {
	conv, ok := session.As[session.Conversation](agent)
	if !ok {
		return nil, errUnsupported(agent)
	}
	turns, err := conv.Turns(ctx, path)
	if err != nil {
		return nil, err
	}
	l := &Listing{Unit: conv.TurnUnit(), Points: make([]Point, len(turns))}
	for i, t := range turns {
		p := Point{N: t.N, Line: t.Line, Offset: t.Offset, Cut: t.Cut, Tokens: -1, Preview: t.Prompt,
			UUID: t.UUID, State: t.State, RolledBack: t.State == session.RolledBack, CompactedAfter: t.CompactedAfter}
		if !t.Timestamp.IsZero() {
			ts := t.Timestamp
			p.Timestamp = &ts
		}
		if p.N >= 0 {
			l.Live++
		}
		l.Points[i] = p
	}
	// one pass for what the turns do not say: the context size known just
	// before each point, and how many records follow it
	order := make([]int, len(l.Points)) // points in file order
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return l.Points[order[i]].Offset < l.Points[order[j]].Offset })
	next := 0
	seen := make([]int, len(l.Points))
	tokens := int64(-1)
	nonBlank := 0
	err = session.ScanFileLazy(ctx, path, recordedContext(agent), func(ln *jsonl.Line, c *lineContext) error {
		for next < len(order) && l.Points[order[next]].Offset <= ln.Offset {
			l.Points[order[next]].Tokens = tokens
			seen[order[next]] = nonBlank
			next++
		}
		if c.blank {
			return nil
		}
		nonBlank++
		if c.tokens >= 0 {
			tokens = c.tokens
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for ; next < len(order); next++ {
		seen[order[next]] = nonBlank
		l.Points[order[next]].Tokens = tokens
	}
	l.Records = nonBlank
	for i := range l.Points {
		l.Points[i].Following = nonBlank - seen[i] - 1
		if l.Points[i].Following < 0 {
			l.Points[i].Following = 0
		}
	}
	return l, nil
}

// lineContext is what List's pass needs of a line: whether it is blank,
// and the context size it records (-1: none).
type lineContext struct {
	blank  bool
	tokens int64
}

// recordedContext is List's decoding of a line that was not validated: a
// line the agent's ContextFilter says records no context is neither
// validated nor decoded (only blank lines are not counted, and those a
// Reader knows without validating); any other is decoded in full.
func recordedContext(agent session.Agent) func(*jsonl.Line, *lineContext) {
	home := session.HomeOf(agent)
	filter, _ := session.As[session.ContextFilter](agent)
	return func(l *jsonl.Line, c *lineContext) {
		*c = lineContext{blank: l.Status == jsonl.Blank, tokens: -1}
		if c.blank || filter != nil && !filter.MayRecordContext(l.Raw) {
			return
		}
		l.Revalidate()
		r := session.Decode(home, l)
		c.blank = r.Kind == session.KindBlank
		c.tokens, _ = session.RecordedContext(&r)
	}
}

// Find returns the point numbered n (the first, for Kimi's rare duplicate
// ids), or nil.
func (l *Listing) Find(n int) *Point {
	for i := range l.Points {
		if l.Points[i].N == n && !l.Points[i].RolledBack {
			return &l.Points[i]
		}
	}
	return nil
}

// FindTurn returns turn n among turns, or an ErrNoCheckpoint error that
// says which turns there are; unit names them ("turn", "checkpoint").
func FindTurn(turns []session.Turn, n int, unit string) (*session.Turn, error) {
	live := 0
	for i := range turns {
		if turns[i].N < 0 {
			continue
		}
		live++
		if turns[i].N == n {
			return &turns[i], nil
		}
	}
	switch live {
	case 0:
		return nil, fmt.Errorf("%w %d: the session has no %ss", ErrNoCheckpoint, n, unit)
	case 1:
		return nil, fmt.Errorf("%w %d: the session has 1 %s (%d)", ErrNoCheckpoint, n, unit, firstN(turns))
	}
	return nil, fmt.Errorf("%w %d: the session has %d %ss (%d to %d)", ErrNoCheckpoint, n, live, unit, firstN(turns), lastN(turns))
}

func firstN(turns []session.Turn) int {
	for _, t := range turns {
		if t.N >= 0 {
			return t.N
		}
	}
	return -1
}

func lastN(turns []session.Turn) int {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].N >= 0 {
			return turns[i].N
		}
	}
	return -1
}
