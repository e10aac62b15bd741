package claude

import (
	"context"
	"io"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
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
// is kept (PlanRevert's Keep.Newest), the older ones go.
var keptAfterCut = map[string]bool{
	"custom-title": true, "agent-name": true, "agent-color": true, "pr-link": true,
}

// PlanRevert implements checkpoint.Reverter: Claude Code resumes a file cut
// before the turn (docs/revert.md), from the newest leaf that is left.
//
// It reads the file once for its structure (the turns: buildIndex), then
// only the part it cuts off, decoded in full (what leaves the history,
// and which records stay).
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
	return checkpoint.MeasureCut(ctx, path, p, t, &checkpoint.Keep{
		Each: func(r *session.Record) bool { return keptAfterCut[r.Type] },
		// the newest cost-state the client would restore (ClientTotals)
		Newest: func(r *session.Record) bool {
			_, _, ok := Home{}.ClientTotals(r)
			return ok
		},
	})
}

// WriteRevert implements checkpoint.Reverter.
func (Home) WriteRevert(p *checkpoint.Plan, src io.Reader, dst io.Writer, _ time.Time) error {
	return checkpoint.WriteCut(p, src, dst)
}
