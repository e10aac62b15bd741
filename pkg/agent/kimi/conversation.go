package kimi

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// The conversation Kimi CLI restores (kimi.md §4): every record of
// context.jsonl it accepts, in file order, read the way Python reads the
// file (invalid UTF-8 replaced by U+FFFD). Compaction and revert rotate
// the file, so everything in it is live; lines Kimi rejects are Dropped.
// Turns are the _checkpoint records, numbered by their ids.

// SummaryPrefix is the first text part of Kimi's compaction summary
// message (kimi.md §4.7).
const SummaryPrefix = "<system>Previous context has been compacted. Here is the compaction output:</system>"

// TurnUnit implements session.Conversation.
func (Home) TurnUnit() string { return "checkpoint" }

// readRecords streams a context file's records as Kimi reads them.
func readRecords(ctx context.Context, path string, fn func(*session.Record) error) error {
	return readRecordsRaw(ctx, path, nil, fn)
}

// readRecordsRaw is readRecords that first gives raw each line as it is in
// the file (nil: none), before Kimi's reading changes it.
func readRecordsRaw(ctx context.Context, path string, raw func(*jsonl.Line), fn func(*session.Record) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	rd := jsonl.NewReader(fh)
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if l.Num%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if raw != nil {
			raw(l)
		}
		Repair(l)
		r := session.Decode(Home{}, l)
		if err := fn(&r); err != nil {
			if err == jsonl.ErrStop {
				return nil
			}
			return err
		}
	}
}

// Repair reads a line the way Kimi does: invalid UTF-8 becomes U+FFFD
// (Python decodes the file with errors="replace"), after which the line may
// well be a valid record.
func Repair(l *jsonl.Line) {
	if l.Status != jsonl.InvalidUTF8 {
		return
	}
	l.Raw, _ = jsonl.PythonReplace(l.Raw)
	l.Status = jsonl.Classify(l.Raw, l.EOL != jsonl.NoEOL)
	l.RawControl = true // Strict is a no-op when nothing needs escaping
}

// Turns implements session.Conversation.
func (Home) Turns(ctx context.Context, path string) ([]session.Turn, error) {
	var turns []session.Turn
	pending := -1 // the first turn still waiting for its prompt
	err := readRecords(ctx, path, func(r *session.Record) error {
		switch {
		case r.Kind == session.KindCheckpoint:
			turns = append(turns, session.Turn{N: r.CheckpointID, Line: r.Line.Num, Offset: r.Line.Offset, Cut: r.Line.Offset})
			if pending < 0 {
				pending = len(turns) - 1
			}
		case r.UserPrompt && !r.Synthetic && pending >= 0:
			for i := pending; i < len(turns); i++ {
				turns[i].Prompt = session.Preview(r.Prompt, session.PreviewLen)
			}
			pending = -1
		}
		return nil
	})
	return turns, err
}

// History implements session.Conversation.
func (h Home) History(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) error {
	if opt.Want != nil && opt.LiveMaps != nil && !opt.All {
		if done, err := h.historyByLiveMap(ctx, path, opt, fn); done {
			return err
		}
	}
	turn := -1
	return readRecords(ctx, path, func(r *session.Record) error {
		if r.Kind == session.KindCheckpoint {
			turn = r.CheckpointID
			return nil
		}
		if r.Kind != session.KindMessage {
			return nil
		}
		m := message(r, turn)
		if !accepted(r) {
			m.State = session.Dropped
			if !opt.All {
				return nil
			}
		}
		return fn(&m)
	})
}

// message makes the Message of a message record in turn.
func message(r *session.Record, turn int) session.Message {
	m := session.Message{Turn: turn, Role: r.Role, Text: r.Text, Thinking: r.Thinking, ToolCalls: r.ToolCalls,
		ToolResults: r.ToolResults, Prompt: r.UserPrompt, Line: r.Line.Num, Offset: r.Line.Offset, Timestamp: r.Timestamp}
	m.Summary = r.Role == session.RoleUser && strings.HasPrefix(r.Text, SummaryPrefix)
	m.Injected = r.Synthetic && !m.Summary
	return m
}

// accepted reports whether Kimi's restore accepts a message record: the
// validation kimi-cli's pydantic models make (kimi.md §4.1).
func accepted(r *session.Record) bool {
	obj := pyLoadsObject(r.Line.Raw)
	return obj != nil && kimiAccepts(obj)
}

// PlanRevert implements checkpoint.Reverter: kimi-cli's own revert_to(N),
// which finds the checkpoint itself (with Python's equality: id 1.0 and
// true are checkpoint 1 too).
// It needs no list of turns: revert_to reads the file itself.
func (Home) PlanRevert(ctx context.Context, path string, p *checkpoint.Plan, _ func() ([]session.Turn, error)) error {
	switch p.Mechanism {
	case checkpoint.Auto, checkpoint.KimiRevertTo:
	default:
		return errMechanism(p.Mechanism)
	}
	p.Mechanism = checkpoint.KimiRevertTo
	f, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := RevertTo(f, io.Discard, int64(p.N))
	if err != nil {
		return err
	}
	p.Copied = &st
	p.Cut = st.CutOffset
	p.Point = checkpoint.Point{N: p.N, Line: st.CutLine, Offset: st.CutOffset, Cut: st.CutOffset, Tokens: st.Tokens}
	return checkpoint.MeasureRemoved(ctx, path, p)
}

// WriteRevert implements checkpoint.Reverter.
func (Home) WriteRevert(p *checkpoint.Plan, src io.Reader, dst io.Writer, _ time.Time) error {
	_, err := RevertTo(src, dst, int64(p.N))
	return err
}
