package session

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// Home is what sessctl knows about one agent's files at the level of the
// model: how its lines decode into Records and how its files are
// recognised. Each agent has one home, a package under pkg/agent/ that
// implements Home and registers it (pkg/agent/all imports them all).
//
// Operations never compare agent names: they ask the agent's Home, and for
// what only they need (a revert's writer, a compaction's layout, the usage
// scanner) they assert the Home to an interface of their own, as age's
// Decrypt asks an Identity to unwrap without knowing its kind.
type Home interface {
	// Agent is the agent's name.
	Agent() Agent
	// Decode fills r from one usable line. On entry r.Line is set and
	// r.Kind is KindMessage; obj is the line made decodable by
	// encoding/json (raw control characters escaped).
	// It is called on several goroutines at once (ReadFile decodes
	// batches of lines in parallel): it must keep no state of its own.
	Decode(obj []byte, r *Record)
	// KnownType reports whether a record type (Record.Type) is one this
	// agent's format documents; others are reported as unknown by check.
	KnownType(t string) bool
	// Sniff classifies one JSON object line of a file of unknown agent.
	Sniff(top map[string]json.RawMessage) Vote
	// PathVote recognises the agent's store layout from a path alone.
	PathVote(path string) Vote
	// Every agent has a conversation model and a context gauge.
	Conversation
	Gauge
}

// Vote is how sure a home is that a line or a path is its agent's.
type Vote uint8

// Votes, weakest first.
const (
	NoVote Vote = iota
	// Likely: this agent writes such lines, but another might too.
	Likely
	// Sure: only this agent writes such lines (or stores files there).
	Sure
)

var (
	homesMu sync.RWMutex
	homes   = map[Agent]Home{}
	order   []Agent // registration order, then sorted by display order
	aliases = map[string]Agent{}
)

// displayOrder fixes the order of Agents (tables, --help).
var displayOrder = map[Agent]int{Kimi: 0, KimiCode: 1, Claude: 2, Codex: 3, Clawdcode: 4}

// Register makes a home known. It is called from the init function of each
// agent's package; registering an agent twice panics.
func Register(h Home, names ...string) {
	homesMu.Lock()
	defer homesMu.Unlock()
	a := h.Agent()
	if _, dup := homes[a]; dup {
		panic(fmt.Sprintf("session: agent %s registered twice", a))
	}
	homes[a] = h
	order = append(order, a)
	sort.SliceStable(order, func(i, j int) bool {
		oi, ok := displayOrder[order[i]]
		if !ok {
			oi = len(displayOrder)
		}
		oj, ok := displayOrder[order[j]]
		if !ok {
			oj = len(displayOrder)
		}
		return oi < oj
	})
	aliases[string(a)] = a
	for _, n := range names {
		aliases[n] = a
	}
}

// HomeOf returns the home of an agent, or nil for an unknown agent (or one
// whose package was not linked in: import pkg/agent/all).
func HomeOf(a Agent) Home {
	homesMu.RLock()
	defer homesMu.RUnlock()
	return homes[a]
}

// Homes returns every registered home in display order.
func Homes() []Home {
	homesMu.RLock()
	defer homesMu.RUnlock()
	out := make([]Home, 0, len(order))
	for _, a := range order {
		out = append(out, homes[a])
	}
	return out
}

// Registered lists the registered agents in display order.
func Registered() []Agent {
	homesMu.RLock()
	defer homesMu.RUnlock()
	return append([]Agent(nil), order...)
}

// ParseAgent accepts an agent name or one of the aliases its home
// registered.
func ParseAgent(s string) (Agent, bool) {
	homesMu.RLock()
	defer homesMu.RUnlock()
	a, ok := aliases[s]
	return a, ok
}

// As returns the home of agent a as the interface T that an operation
// defines, and whether the agent provides it.
func As[T any](a Agent) (T, bool) {
	var zero T
	h := HomeOf(a)
	if h == nil {
		return zero, false
	}
	t, ok := h.(T)
	return t, ok
}

// SideRef is a reference to a session from a file outside it (kimi-cli's
// kimi.json, Codex's session_index.jsonl), as the session's home finds it.
type SideRef struct {
	Path      string
	SessionID string
	// What says what refers to the session, in words.
	What string
	// Clearable: the home can clear the reference when the session is
	// removed (kimi.json's last_session_id).
	Clearable bool
}
