package kimicode

import "github.com/sessctl/sessctl/pkg/session"

// RecordedContext implements session.Gauge: Kimi Code's own count of the
// context, token_counting.* records' tokens (and context.update_token_count),
// which its status line shows.
func (Home) RecordedContext(r *session.Record) (int64, string) {
	if r.Kind == session.KindUsage && r.ContextTokens >= 0 {
		return r.ContextTokens, r.Type + " tokens"
	}
	return -1, ""
}

// DefaultModel implements session.Gauge: the model is an alias of the
// user's configuration; none is implied.
func (Home) DefaultModel() string { return "" }

// DefaultWindow implements session.Gauge: the window is the configured
// model's max_context_size, not in the wire; sessctl's general guess.
func (Home) DefaultWindow() int { return 0 }

// CompactAt implements session.Gauge: Kimi Code 2.1.0 compacts when the
// context reaches 85 % of the window, or leaves less than 50,000 tokens of
// it (DEFAULT_COMPACTION_CONFIG: triggerRatio 0.85, reservedContextSize
// 50000, the reserve applying only to windows larger than it).
func (Home) CompactAt(window int) int {
	at := window * 85 / 100
	if window > 50_000 && window-50_000 < at {
		at = window - 50_000
	}
	return at
}

// MayRecordContext implements session.ContextFilter: a context size is
// recorded only where the line has tokens or tokenCount.
func (Home) MayRecordContext(raw []byte) bool { return session.MayHoldKey(raw, "tokens", "tokencount") }
