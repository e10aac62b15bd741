package codex

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// PlanRevert implements checkpoint.Reverter. Codex's own mechanism is an
// appended thread_rolled_back {num_turns} (every byte stays in place);
// when a compaction follows the turn, a rollback would count turns in the
// compacted history, so the file is cut before the turn instead (at its
// task_started event).
func (Home) PlanRevert(ctx context.Context, path string, p *checkpoint.Plan, listTurns func() ([]session.Turn, error)) error {
	turns, err := listTurns()
	if err != nil {
		return err
	}
	t, err := checkpoint.FindTurn(turns, p.N, p.Unit)
	if err != nil {
		return err
	}
	live := 0
	for _, u := range turns {
		if u.N >= 0 {
			live++
		}
	}
	switch {
	case p.Mechanism == checkpoint.Rollback || p.Mechanism == checkpoint.Auto && !t.CompactedAfter:
		if t.CompactedAfter {
			return fmt.Errorf("turn %d is followed by a compaction; a rollback would count turns in the compacted history (use --mechanism truncate)", p.N)
		}
		p.Mechanism = checkpoint.Rollback
		p.Point = checkpoint.PointOf(t)
		p.Cut = t.Cut
		p.RollbackTurns = live - p.N
		ord, err := lastOrdinal(path)
		if err != nil {
			return err
		}
		p.Ordinal = ord
		next := int64(-1)
		if ord >= 0 {
			next = ord + 1
		}
		p.Appended = RollbackLine(time.Time{}, next, p.RollbackTurns)
		return checkpoint.MeasureHidden(ctx, path, p, t.Cut)
	case p.Mechanism == checkpoint.Auto || p.Mechanism == checkpoint.Truncate:
		p.Warnings = append(p.Warnings, "codex keeps a projection of the rollout in thread_history_1.sqlite by byte offset; "+
			"after a cut, codex's thread list may be stale until that thread's rows are rebuilt (the model context is read from the file)")
		return checkpoint.MeasureCut(ctx, path, p, t, nil)
	}
	return fmt.Errorf("codex sessions cannot be reverted with %s", p.Mechanism)
}

// WriteRevert implements checkpoint.Reverter.
func (Home) WriteRevert(p *checkpoint.Plan, src io.Reader, dst io.Writer, now time.Time) error {
	if p.Mechanism != checkpoint.Rollback {
		return checkpoint.WriteCut(p, src, dst)
	}
	next := int64(-1)
	if p.Ordinal >= 0 {
		next = p.Ordinal + 1
	}
	return checkpoint.WriteAppend(src, dst, RollbackLine(now, next, p.RollbackTurns))
}

// RollbackLine is the record that rolls back k turns, serialised the way
// Codex 0.169 writes its envelope: with an ordinal when the file has them
// (0.169 refuses to resume a paginated rollout whose last record has none,
// docs/e2e.md), without one otherwise.
func RollbackLine(now time.Time, ordinal int64, k int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"timestamp":"`)
	b.WriteString(now.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteString(`",`)
	if ordinal >= 0 {
		b.WriteString(`"ordinal":`)
		b.WriteString(strconv.FormatInt(ordinal, 10))
		b.WriteString(`,`)
	}
	b.WriteString(`"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":`)
	b.WriteString(strconv.Itoa(k))
	b.WriteString(`}}`)
	return b.Bytes()
}

// lastOrdinal is the envelope ordinal of the file's last record that has
// one, -1 when none has.
func lastOrdinal(path string) (int64, error) {
	fh, err := jsonl.Open(path)
	if err != nil {
		return -1, err
	}
	defer fh.Close()
	ord := int64(-1)
	err = jsonl.Scan(fh, func(l *jsonl.Line) error {
		if o, ok := Ordinal(l.Raw); ok {
			ord = o
		}
		return nil
	})
	return ord, err
}

var ordinalKey = []byte(`,"ordinal":`)

// Ordinal reads the envelope's ordinal from the start of a line.
func Ordinal(raw []byte) (int64, bool) {
	head := raw[:min(len(raw), 120)]
	i := bytes.Index(head, ordinalKey)
	if i < 0 {
		return 0, false
	}
	rest := raw[i+len(ordinalKey):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v, err == nil
}
