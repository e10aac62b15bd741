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
	places := distinct(len(ss), func(i int) session.Agent { return ss[i].Agent }, func(i int) *session.Session { return ss[i] })
	if len(places) == len(ss) {
		return ss
	}
	out := make([]*session.Session, len(places))
	for k, i := range places {
		out[k] = ss[i]
	}
	return out
}

// DistinctPacked is Distinct of packed sessions, in place. Only the
// sessions whose agent may have twins are made values (a store of Claude
// Code sessions: none).
func DistinctPacked(p *session.Packed) {
	if places := distinct(p.Len(), p.Agent, p.At); len(places) != p.Len() {
		p.Reorder(places)
	}
}

// distinct returns the places of Distinct's sessions among n, in order:
// agent gives a session's agent, at the session.
func distinct(n int, agent func(i int) session.Agent, at func(i int) *session.Session) []int32 {
	type pick struct {
		at, rank int
	}
	best := map[string]pick{}
	var out []int32
	for i := range n {
		tw, ok := session.As[Twins](agent(i))
		if !ok {
			out = append(out, int32(i))
			continue
		}
		s := at(i)
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
