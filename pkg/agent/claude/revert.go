package claude

import (
	"bytes"
	"context"
	"io"
	"slices"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// TurnUnit implements session.Conversation.
func (Home) TurnUnit() string { return "turn" }

// keptAfterCut are the record types that a revert keeps even after the
// cut: session metadata whose last occurrence wins and that belongs to no
// turn (a name the user gave the session must survive a revert).
//
// Claude Code 2.1.330's records (docs/formats/claude-code.md §7, "What the
// writing commands do with them") are not in it: the request journal
// (api-request, -shape, -blob) and the conversation latches (tools-used,
// atis-latch) after the cut belong to the turns it removes and go with
// them; the newest cost-state after the cut, the session's spend ledger,
// is kept (newestCostState), the older ones go.
var keptAfterCut = map[string]bool{
	"custom-title": true, "agent-name": true, "agent-color": true, "pr-link": true,
}

// PlanRevert implements checkpoint.Reverter: Claude Code resumes a file cut
// before the turn (docs/revert.md), from the newest leaf that is left.
func (Home) PlanRevert(ctx context.Context, path string, p *checkpoint.Plan, listTurns func() ([]session.Turn, error)) error {
	turns, err := listTurns()
	if err != nil {
		return err
	}
	t, err := checkpoint.FindTurn(turns, p.N, p.Unit)
	if err != nil {
		return err
	}
	if err := checkpoint.OnlyTruncate(Agent, p.Mechanism); err != nil {
		return err
	}
	cost, err := newestCostState(ctx, path, t.Cut)
	if err != nil {
		return err
	}
	if cost >= 0 {
		p.KeepAt = []int64{cost}
	}
	return checkpoint.MeasureCut(ctx, path, p, t, keeper(p))
}

// keeper is what a revert planned as p keeps after its cut.
func keeper(p *checkpoint.Plan) checkpoint.KeepAfterCut {
	return func(r *session.Record) bool {
		return keptAfterCut[r.Type] || r.Type == "cost-state" && slices.Contains(p.KeepAt, r.Line.Offset)
	}
}

// WriteRevert implements checkpoint.Reverter.
func (Home) WriteRevert(p *checkpoint.Plan, src io.Reader, dst io.Writer, _ time.Time) error {
	return checkpoint.WriteCut(p, src, dst, keeper(p))
}

// newestCostState is the offset of the newest cost-state record from
// offset from on that the client would restore (ClientTotals), -1 when
// there is none. Only lines that name the type are decoded.
func newestCostState(ctx context.Context, path string, from int64) (int64, error) {
	fh, err := jsonl.Open(path)
	if err != nil {
		return -1, err
	}
	defer fh.Close()
	rd, err := jsonl.SkipTo(fh, from)
	if err != nil {
		return -1, err
	}
	newest := int64(-1)
	for n := 0; ; n++ {
		l, err := rd.Next()
		if err == io.EOF {
			return newest, nil
		}
		if err != nil {
			return -1, err
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return -1, err
			}
		}
		if l.Offset < from || !bytes.Contains(l.Raw, []byte(`"cost-state"`)) {
			continue
		}
		r := session.Decode(Home{}, l)
		if _, _, ok := (Home{}).ClientTotals(&r); ok {
			newest = l.Offset
		}
	}
}
