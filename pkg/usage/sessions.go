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
	type pick struct {
		at, rank int
	}
	best := map[string]pick{}
	var out []*session.Session
	for _, s := range ss {
		tw, ok := session.As[Twins](s.Agent)
		if !ok {
			out = append(out, s)
			continue
		}
		key, rank := tw.TwinKey(s)
		if key == "" {
			out = append(out, s)
			continue
		}
		key = string(s.Agent) + "\x00" + key
		p, seen := best[key]
		switch {
		case !seen:
			best[key] = pick{len(out), rank}
			out = append(out, s)
		case rank < p.rank:
			out[p.at] = s
			best[key] = pick{p.at, rank}
		}
	}
	return out
}
