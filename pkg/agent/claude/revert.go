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
var keptAfterCut = map[string]bool{
	"custom-title": true, "agent-name": true, "agent-color": true, "pr-link": true,
}

func keepAfterCut(r *session.Record) bool { return keptAfterCut[r.Type] }

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
	return checkpoint.MeasureCut(ctx, path, p, t, keepAfterCut)
}

// WriteRevert implements checkpoint.Reverter.
func (Home) WriteRevert(p *checkpoint.Plan, src io.Reader, dst io.Writer, _ time.Time) error {
	return checkpoint.WriteCut(p, src, dst, keepAfterCut)
}
