package stats

import "github.com/sessctl/sessctl/pkg/session"

// ContextRules are an agent's rules for the estimated context of its main
// transcript, which stats asks the agent's home for
// (session.As[stats.ContextRules]); a home without them has no restarts
// and no pending estimate. The rest of what stats needs of an agent comes
// from interfaces every home implements: session.Gauge (the recorded
// context, model and window), session.Conversation (the turns) and
// usage.Scanner (recorded usage).
type ContextRules interface {
	// Restarts reports whether the client, resuming, starts its context
	// at record r: a compaction it resumes from (Claude Code's
	// compact_boundary, Codex's compacted). The estimated active context
	// restarts there, and the recorded one is unknown until a record
	// gives it again (the boundary's own postTokens, the next usage).
	Restarts(r *session.Record) bool
	// Pending is the client's own estimate of a text that was added to the
	// context after the last recorded size (Kimi CLI: characters // 4),
	// which it adds to that size; 0 for clients that add none. It is
	// applied to what the model reads as text: messages, tool results,
	// summaries, not tool calls or thinking.
	Pending(text string) int64
}

// ClientTotals is how a home reads the client's own running token totals
// from its main transcript, which stats holds against what it counts
// (Report.ClientCheck). Claude Code 2.1.330 writes them as cost-state
// records; a home whose client keeps none does not implement it.
type ClientTotals interface {
	// ClientTotals returns the totals record r carries, per model, and
	// what to call their source ("cost-state"); ok is false for any other
	// record, and for one the client itself would not restore.
	ClientTotals(r *session.Record) (byModel map[string]session.Usage, source string, ok bool)
}

// ClientCost is how a home reads the client's own running cost in dollars
// from the record that carries its totals (Claude Code 2.1.330's
// cost-state totalCostUSD), shown beside sessctl's cost.
type ClientCost interface {
	ClientCostUSD(r *session.Record) (usd float64, ok bool)
}
