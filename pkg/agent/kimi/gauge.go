package kimi

import "github.com/sessctl/sessctl/pkg/session"

// RecordedContext implements session.Gauge: the _usage record, a gauge of
// the whole context (never summed).
func (Home) RecordedContext(r *session.Record) (int64, string) {
	if r.Kind == session.KindUsage && r.ContextTokens >= 0 {
		return r.ContextTokens, "_usage.token_count"
	}
	return -1, ""
}

// DefaultModel implements session.Gauge: context.jsonl names no model;
// kimi-for-coding is Kimi CLI's default (kimi.md).
func (Home) DefaultModel() string { return "kimi-for-coding" }

// DefaultWindow implements session.Gauge.
func (Home) DefaultWindow() int { return 0 }

// Kimi CLI's compaction settings (kimi.md): compaction_trigger_ratio and
// reserved_context_size.
const (
	triggerRatio    = 85 // percent
	reservedContext = 50_000
)

// CompactAt implements session.Gauge: Kimi CLI compacts when tokens ≥ 0.85
// × window or tokens + 50,000 ≥ window, so at the smaller of ceil(0.85 ×
// window) and window − 50,000 (212,144 for 262,144), never below 0.
func (Home) CompactAt(window int) int {
	ratio := (window*triggerRatio + 99) / 100
	return max(0, min(ratio, window-reservedContext))
}

// MayRecordContext implements session.ContextFilter: a context size is
// recorded only where the line has _usage's token_count.
func (Home) MayRecordContext(raw []byte) bool { return session.MayHoldKey(raw, "token_count") }
