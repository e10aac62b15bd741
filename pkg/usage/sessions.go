package usage

import "github.com/sessctl/sessctl/pkg/session"

// Twins is implemented by scanners whose stores can hold one session in
// two places, each copy whole (Codex: a rollout in sessions/YYYY/MM/DD/ and
// in archived_sessions/). Its usage is counted once.
type Twins interface {
	// TwinKey names what the copies of a session share ("" for a session
	// that has no twins) and ranks the copy: the lowest rank is counted.
	TwinKey(s *session.Session) (key string, rank int)
}

// Distinct returns ss with one session of each set of twins: the first of
// the lowest rank, in place of the first of the set. Sessions of agents
// without twins pass through in their order.
func Distinct(ss []*session.Session) []*session.Session {
	places := distinct(session.Slice(ss))
	if len(places) == len(ss) {
		return ss
	}
	out := make([]*session.Session, len(places))
	for k, i := range places {
		out[k] = ss[i]
	}
	return out
}

// DistinctPacked is Distinct of packed sessions, in place.
func DistinctPacked(p *session.Packed) {
	if places := distinct(agentFirst{p}); len(places) != p.Len() {
		p.Reorder(places)
	}
}

// agentFirst is a Packed whose sessions distinct makes values only when
// their agent may have twins (a store of Claude Code sessions: none).
type agentFirst struct{ *session.Packed }

func (a agentFirst) agent(i int) session.Agent { return a.Agent(i) }

// distinct returns the places of Distinct's sessions, in order.
func distinct(l session.List) []int32 {
	type pick struct {
		at, rank int
	}
	best := map[string]pick{}
	var out []int32
	agentOf := func(i int) session.Agent { return l.At(i).Agent }
	if a, ok := l.(interface{ agent(int) session.Agent }); ok {
		agentOf = a.agent
	}
	for i := range l.Len() {
		tw, ok := session.As[Twins](agentOf(i))
		if !ok {
			out = append(out, int32(i))
			continue
		}
		s := l.At(i)
		key, rank := tw.TwinKey(s)
		if key == "" {
			out = append(out, int32(i))
			continue
		}
		key = string(s.Agent) + "\x00" + key
		p, seen := best[key]
		switch {
		case !seen:
			best[key] = pick{len(out), rank}
			out = append(out, int32(i))
		case rank < p.rank:
			out[p.at] = int32(i)
			best[key] = pick{p.at, rank}
		}
	}
	return out
}
