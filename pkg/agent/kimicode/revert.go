package kimicode

import (
	"context"
	"io"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/session"
)

// PlanRevert implements checkpoint.Reverter: the main wire is cut at the
// turn.prompt record that starts the turn (kimi-code.md §4). Kimi Code
// folds its context from the wire in file order, so what is left is the
// history before the turn; the records a turn writes (loop events, usage,
// token counts, turn.ended) all follow its turn.prompt. state.json and the
// store's index are left as they are: Kimi Code rewrites state.json on the
// next run (TestKimiCodeRevert). Kimi Code's own context.undo would do the
// same by appending; sessctl cuts, as it does for clawdcode, because the
// cut is what the other homes' revert does and what `restore` undoes.
func (Home) PlanRevert(ctx context.Context, path string, p *checkpoint.Plan, listTurns func() ([]session.Turn, error)) error {
	return checkpoint.PlanCut(ctx, Agent, path, p, listTurns)
}

// WriteRevert implements checkpoint.Reverter.
func (Home) WriteRevert(p *checkpoint.Plan, src io.Reader, dst io.Writer, _ time.Time) error {
	return checkpoint.WriteCut(p, src, dst)
}
