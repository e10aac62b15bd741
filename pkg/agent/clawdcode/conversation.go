package clawdcode

import (
	"context"
	"io"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/session"
)

// The conversation clawdcode loads (clawdcode.md §4): the records after
// the last compact_boundary, in file order, the isCompactSummary user
// message first. Turns are the user prompts in file order; a prompt
// repeated with the same words and time (sessctl's compaction tail copy) is
// the same turn.

// fileScan is one pass: the turns, and where the live part starts.
type fileScan struct {
	turns    []session.Turn
	at       session.TurnIndex
	boundary int64 // offset of the last compact_boundary, -1 when none
}

func scanFile(ctx context.Context, path string) (*fileScan, error) {
	return scanFileEach(ctx, path, nil)
}

// scanFileEach is scanFile that also gives each record to each (nil: none).
func scanFileEach(ctx context.Context, path string, each func(*session.Record)) (*fileScan, error) {
	sc := &fileScan{boundary: -1}
	byKey := map[string]int{}
	err := session.ReadFileContext(ctx, path, Home{}, func(r *session.Record) error {
		if each != nil {
			each(r)
		}
		if r.Type == "system/compact_boundary" {
			sc.boundary = r.Line.Offset
			for i := range sc.turns {
				sc.turns[i].CompactedAfter = true
			}
		}
		if !r.UserPrompt {
			return nil
		}
		k := session.PromptKey(r)
		if i, ok := byKey[k]; ok {
			t := &sc.turns[i]
			t.Line, t.Offset, t.Cut, t.UUID = r.Line.Num, r.Line.Offset, r.Line.Offset, r.UUID
			sc.at.Add(r.Line.Offset, i)
			return nil
		}
		byKey[k] = len(sc.turns)
		sc.turns = append(sc.turns, session.Turn{N: len(sc.turns), Line: r.Line.Num, Offset: r.Line.Offset, Cut: r.Line.Offset, CutLine: r.Line.Num,
			UUID: r.UUID, Timestamp: r.Timestamp, Prompt: session.Preview(r.Prompt, session.PreviewLen)})
		sc.at.Add(r.Line.Offset, len(sc.turns)-1)
		return nil
	})
	for i := range sc.turns {
		if sc.turns[i].Offset < sc.boundary {
			sc.turns[i].State = session.Compacted
		}
	}
	sc.at.Sort()
	return sc, err
}

// TurnUnit implements session.Conversation.
func (Home) TurnUnit() string { return "turn" }

// Turns implements session.Conversation.
func (Home) Turns(ctx context.Context, path string) ([]session.Turn, error) {
	sc, err := scanFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return sc.turns, nil
}

// History implements session.Conversation.
func (h Home) History(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) error {
	if opt.Want != nil && opt.LiveMaps != nil && !opt.All {
		if done, err := h.historyByLiveMap(ctx, path, opt, fn); done {
			return err
		}
	}
	sc, err := scanFile(ctx, path)
	if err != nil {
		return err
	}
	return session.ReadFileContext(ctx, path, h, func(r *session.Record) error {
		if !conversational(r) {
			return nil
		}
		m := message(r, sc.at.At(r.Line.Offset))
		if r.Line.Offset < sc.boundary {
			m.State = session.Compacted
		}
		if m.State != session.Live && !opt.All {
			return nil
		}
		return fn(&m)
	})
}

// conversational reports whether a record is a message of the conversation
// clawdcode loads (when after the last boundary).
func conversational(r *session.Record) bool {
	if r.Kind != session.KindMessage && !(r.Kind == session.KindCompaction && r.Role == session.RoleUser) {
		return false
	}
	return r.Role == session.RoleUser || r.Role == session.RoleAssistant || r.Role == session.RoleTool
}

// message makes the Message of a conversational record in turn.
func message(r *session.Record, turn int) session.Message {
	return session.Message{Turn: turn, Role: r.Role, Text: r.Text, Thinking: r.Thinking,
		ToolCalls: r.ToolCalls, ToolResults: r.ToolResults, Prompt: r.UserPrompt, Summary: r.Kind == session.KindCompaction,
		Line: r.Line.Num, Offset: r.Line.Offset, ID: r.UUID, Model: r.Model, Timestamp: r.Timestamp}
}

// PlanRevert implements checkpoint.Reverter: the file is cut before the
// turn (clawdcode's loader reads file order from the last boundary).
func (Home) PlanRevert(ctx context.Context, path string, p *checkpoint.Plan, listTurns func() ([]session.Turn, error)) error {
	return checkpoint.PlanCut(ctx, Agent, path, p, listTurns)
}

// WriteRevert implements checkpoint.Reverter.
func (Home) WriteRevert(p *checkpoint.Plan, src io.Reader, dst io.Writer, _ time.Time) error {
	return checkpoint.WriteCut(p, src, dst)
}
