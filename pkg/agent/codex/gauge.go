package codex

import (
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// RecordedContext implements session.Gauge: last_token_usage.total_tokens
// of a token_count event.
func (Home) RecordedContext(r *session.Record) (int64, string) {
	if r.Kind == session.KindUsage && r.ContextTokens >= 0 {
		return r.ContextTokens, "last_token_usage.total_tokens"
	}
	return -1, ""
}

// DefaultModel is the model assumed before any turn_context names one
// (codex.md §5: Codex's own default).
const DefaultModel = "gpt-5"

// DefaultModel implements session.Gauge.
func (Home) DefaultModel() string { return DefaultModel }

// DefaultWindow implements session.Gauge: rollouts record their window.
func (Home) DefaultWindow() int { return 0 }

// CompactAt implements session.Gauge: Codex compacts at
// model_auto_compact_token_limit, which the rollout does not record;
// sessctl says "getting full" at 80 %.
func (Home) CompactAt(window int) int { return window * tokens.DefaultTrigger / 100 }

// MayRecordContext implements session.ContextFilter: a context size is
// recorded only where the line has a token_count's last_token_usage.
func (Home) MayRecordContext(raw []byte) bool { return session.MayHoldKey(raw, "last_token_usage") }
