package check

import (
	"context"
	"time"

	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

// Repairable plans a repair of the report's file (read only) and counts the
// problems it would fix: a problem is fixed when the repair touches its
// line (a dangling call is answered at the call's line). A file with no
// problems is not read again.
func Repairable(ctx context.Context, rep *Report, now time.Time) error {
	rep.Repairable = 0
	if len(rep.Problems) == 0 || session.HomeOf(rep.Agent) == nil {
		return nil // clean, or of no agent repair knows
	}
	p, err := repair.Scan(ctx, rep.Path, rep.Agent, now)
	if err != nil {
		return err
	}
	fixed := map[int]bool{}
	for _, f := range p.Fixes {
		fixed[f.Line] = true
	}
	total := 0
	for line, n := range rep.perLine {
		if fixed[line] {
			total += n
		}
	}
	rep.Repairable = total
	return nil
}
