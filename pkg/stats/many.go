package stats

import (
	"fmt"

	"github.com/sessctl/sessctl/pkg/usage"
)

// ManyReport is the report over many sessions (stats --all) made from their
// results as they come, in any order (ConsumptionEach): its totals, its
// rows and, on disk (Spool), the results themselves, read back in the
// order of the sessions' places when asked for.
//
// What it sums does not depend on the order the results come in: the
// costs (floating point, whose sums depend on their order) are summed in
// the order of the sessions' places, as a report over a list of results
// in that order sums them.
type ManyReport struct {
	By          string
	Totals      usage.Totals // sessctl's view
	AsCCUsage   usage.Totals // ccusage's
	InRotations *usage.Totals
	// CCUsageView: some session has files in ccusage's view
	CCUsageView bool
	// Rejected, Corrupt and SessctlOnly sum the sessions'; ViewsDiffer
	// counts the sessions whose ViewsDiffer says something
	Rejected, Corrupt, SessctlOnly, ViewsDiffer int

	spool *Spool
	slot  []int32 // by place: the session's number in spool, -1: none
	order []int32 // the places of the sessions counted, in order (Finish)
	// by place: the costs of each view (rotCost: nil until a session has
	// rotations)
	cost, ccCost, rotCost []float64
	grouper               *grouper
	group                 []*groupAcc // by place (by project or agent)
}

// NewManyReport makes a report over n sessions by session, project, agent,
// day or model. By day and by model its rows are not its own (Finish
// gives none): they are made of the requests, which it does not keep
// (Group).
func NewManyReport(by string, n int) (*ManyReport, error) {
	r := &ManyReport{By: by, Totals: usage.Totals{View: usage.ViewSessctl}, AsCCUsage: usage.Totals{View: usage.ViewCCUsage},
		spool: NewSpool(), slot: make([]int32, n), cost: make([]float64, n), ccCost: make([]float64, n)}
	for i := range r.slot {
		r.slot[i] = -1
	}
	switch by {
	case BySession, ByDay, ByModel:
	case ByProject, ByAgent:
		r.grouper = newGrouper(by)
		r.group = make([]*groupAcc, n)
	default:
		return nil, fmt.Errorf("%w %q (use session, project, day, model or agent)", ErrBadGroup, by)
	}
	return r, nil
}

// Add counts su, the result of the session at place i.
func (r *ManyReport) Add(i int, su *SessionUsage) error {
	k := r.spool.Len()
	if err := r.spool.Add(su); err != nil {
		return err
	}
	r.slot[i] = int32(k)
	r.Totals.Merge(su.Totals)
	r.cost[i] = su.Totals.CostUSD
	if su.AsCCUsage != nil {
		r.AsCCUsage.Merge(*su.AsCCUsage)
		r.ccCost[i] = su.AsCCUsage.CostUSD
		r.CCUsageView = true
	}
	if su.InRotations != nil {
		if r.InRotations == nil {
			r.InRotations = &usage.Totals{View: usage.ViewSessctl}
			r.rotCost = make([]float64, len(r.slot))
		}
		r.InRotations.Merge(*su.InRotations)
		r.rotCost[i] = su.InRotations.CostUSD
	}
	r.Rejected += su.Rejected
	r.Corrupt += su.Corrupt
	r.SessctlOnly += su.SessctlOnly
	if su.ViewsDiffer != "" {
		r.ViewsDiffer++
	}
	if r.grouper != nil {
		r.group[i] = r.grouper.add(su)
	}
	return nil
}

// Len is the number of sessions counted.
func (r *ManyReport) Len() int { return r.spool.Len() }

// Counted reports whether the session at place i was counted (Add).
func (r *ManyReport) Counted(i int) bool { return r.slot[i] >= 0 }

// Session reads back the k-th session counted in the order of places,
// after Finish.
func (r *ManyReport) Session(k int) (*SessionUsage, error) {
	return r.spool.Session(int(r.slot[r.order[k]]))
}

// IDs are the sessions' ids (in no order).
func (r *ManyReport) IDs() []string { return r.spool.id }

// Finish sums the costs in the order of places, which makes the totals
// final, and returns the rows (by day or by model: nil). Call it once,
// after the last Add.
func (r *ManyReport) Finish() (*Groups, error) {
	sum := func(cost []float64) float64 {
		s := 0.0
		for i, k := range r.slot {
			if k >= 0 {
				s += cost[i]
			}
		}
		return s
	}
	r.order = r.order[:0]
	place := make([]int32, r.spool.Len()) // by number in the spool
	for i, k := range r.slot {
		if k >= 0 {
			r.order = append(r.order, int32(i))
			place[k] = int32(i)
		}
	}
	r.Totals.CostUSD, r.AsCCUsage.CostUSD = sum(r.cost), sum(r.ccCost)
	if r.InRotations != nil {
		r.InRotations.CostUSD = sum(r.rotCost)
	}
	switch r.By {
	case ByDay, ByModel:
		return nil, nil
	case BySession:
		return r.spool.groups(place)
	}
	for _, a := range r.grouper.rows {
		if a.merged > 1 {
			a.row.Totals.CostUSD = 0
		}
	}
	for i, a := range r.group {
		if a != nil && a.merged > 1 {
			a.row.Totals.CostUSD += r.cost[i]
		}
	}
	return r.grouper.Groups(), nil
}

// Close frees the file of the results.
func (r *ManyReport) Close() error { return r.spool.Close() }
