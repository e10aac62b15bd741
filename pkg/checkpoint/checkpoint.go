// Package checkpoint lists the points a session can be reverted to and
// computes the reverts, as streaming functions over a session file.
//
// Kimi CLI writes explicit {"role": "_checkpoint", "id": N} records; a revert
// to N is kimi-cli's own revert_to(N) (KimiRevert). Claude Code, Codex and
// clawdcode have no checkpoint records: every real user prompt (not a tool
// result, not meta or injected context, not a compaction summary) starts a
// turn, numbered from 0 in file order, and a revert to N goes back to just
// before turn N:
//
//   - Claude Code and clawdcode: the file is cut before turn N (see Plan for
//     the exact cut), which the client resumes from the newest leaf;
//   - Codex: an event_msg thread_rolled_back {num_turns} is appended (the
//     client's own rollback; every byte stays in place), or, when a
//     compaction follows turn N, the file is cut before turn N.
//
// The package reads records through pkg/session and never holds a whole
// file in memory: only one small Point per turn.
package checkpoint

import (
	"io"
	"time"

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
	// RolledBack is set on Codex turns that a later thread_rolled_back
	// already removed from the client's history; they get no number
	// (N is -1) and cannot be reverted to.
	RolledBack bool `json:"rolled_back,omitempty"`
	// CompactedAfter is set when a compaction record follows the point
	// (Codex: the revert then cuts the file instead of rolling back).
	CompactedAfter bool `json:"compacted_after,omitempty"`
}

// PreviewLen bounds Point.Preview in runes.
const PreviewLen = 200

// Listing is the result of List.
type Listing struct {
	Points  []Point `json:"points"`
	Records int     `json:"records"` // non-blank lines in the file
	// Ordinal is the last Codex envelope ordinal seen (-1: none), used when
	// appending a record.
	Ordinal int64 `json:"-"`
	// Live counts the Codex turns still in the client's history.
	Live int `json:"-"`
}

// List streams a session file and returns its checkpoints (Kimi) or user
// turns (other formats).
func List(r io.Reader, agent session.Agent) (*Listing, error) {
	f := session.FormatFor(agent)
	if f == nil {
		return nil, errUnsupported(agent)
	}
	l := &Listing{Ordinal: -1}
	var (
		pending   []int // points waiting for a preview
		seen      []int // records seen when each point was recorded
		tokens    int64 = -1
		runStart  int64 = -1 // Claude: first of the queue-operation/snapshot lines just before a prompt
		toolStart int64 = -1 // Claude: first of the trailing assistant tool_use lines
		turnStart int64 = -1 // Codex: the task_started event of the coming turn
		live      []int      // Codex: indexes of turns not rolled back
		nonBlank  int
	)
	addPoint := func(p Point) {
		p.Tokens = tokens
		p.Following = -1
		l.Points = append(l.Points, p)
		seen = append(seen, nonBlank)
		pending = append(pending, len(l.Points)-1)
	}
	err := session.ReadRecords(r, f, func(rec *session.Record) error {
		if rec.Kind == session.KindBlank {
			return nil
		}
		nonBlank++
		off := rec.Line.Offset
		if agent == session.Codex {
			if o, ok := codexOrdinal(rec.Line.Raw); ok {
				l.Ordinal = o
			}
		}
		switch agent {
		case session.Kimi:
			if rec.Kind == session.KindCheckpoint {
				addPoint(Point{N: rec.CheckpointID, Line: rec.Line.Num, Offset: off, Cut: off})
			}
		case session.Claude:
			if rec.UserPrompt {
				cut := off
				if runStart >= 0 {
					cut = runStart
				}
				if toolStart >= 0 && toolStart < cut {
					cut = toolStart
				}
				addPoint(Point{Line: rec.Line.Num, Offset: off, Cut: cut, UUID: rec.UUID, Timestamp: timePtr(rec.Timestamp)})
			}
			switch {
			case rec.Type == "queue-operation" || rec.Type == "file-history-snapshot":
				if runStart < 0 {
					runStart = off
				}
			default:
				runStart = -1
			}
			if rec.UUID != "" && !rec.Sidechain {
				if rec.Role == session.RoleAssistant && len(rec.ToolCalls) > 0 && rec.Text == "" && rec.Thinking == "" {
					if toolStart < 0 {
						toolStart = off
					}
				} else {
					toolStart = -1
				}
			}
		case session.Clawdcode:
			if rec.UserPrompt {
				addPoint(Point{Line: rec.Line.Num, Offset: off, Cut: off, UUID: rec.UUID, Timestamp: timePtr(rec.Timestamp)})
			}
		case session.Codex:
			switch {
			case rec.Type == "event_msg/task_started" || rec.Type == "event_msg/turn_started":
				turnStart = off
			case rec.UserPrompt:
				cut := off
				if turnStart >= 0 {
					cut = turnStart
				}
				turnStart = -1
				addPoint(Point{Line: rec.Line.Num, Offset: off, Cut: cut, Timestamp: timePtr(rec.Timestamp)})
				live = append(live, len(l.Points)-1)
			case rec.RollbackTurns > 0:
				k := rec.RollbackTurns
				if k > len(live) {
					k = len(live)
				}
				for _, i := range live[len(live)-k:] {
					l.Points[i].RolledBack = true
				}
				live = live[:len(live)-k]
			case rec.Kind == session.KindCompaction:
				for i := range l.Points {
					l.Points[i].CompactedAfter = true
				}
			}
		}
		// tokens: the context size known after this record
		if t, _ := session.RecordedContext(rec); t >= 0 {
			tokens = t
		}
		if rec.UserPrompt && !rec.Sidechain && (agent != session.Kimi || !rec.Synthetic) {
			text := rec.Prompt
			if text == "" {
				text = rec.Text
			}
			for _, i := range pending {
				l.Points[i].Preview = session.Preview(text, PreviewLen)
			}
			pending = pending[:0]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.Records = nonBlank
	for i := range l.Points {
		l.Points[i].Following = nonBlank - seen[i]
	}
	if agent != session.Kimi {
		n := 0
		for i := range l.Points {
			if l.Points[i].RolledBack {
				l.Points[i].N = -1
				continue
			}
			l.Points[i].N = n
			n++
		}
		l.Live = n
	}
	return l, nil
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

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
