package claude

import (
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// RecordedContext implements session.Gauge: the newest assistant usage,
// input + cache creation + cache read + output (the size of the next
// request).
func (Home) RecordedContext(r *session.Record) (int64, string) {
	if session.LiveUsage(r) {
		u := r.Usage
		return u.Input + u.CacheCreation + u.CacheRead + u.Output, "last assistant usage (input + cache creation + cache read + output)"
	}
	return -1, ""
}

// DefaultModel implements session.Gauge: every Claude Code record names its
// model.
func (Home) DefaultModel() string { return "" }

// DefaultWindow implements session.Gauge.
func (Home) DefaultWindow() int { return 0 }

// CompactAt implements session.Gauge: Claude Code's auto-compaction point
// is not documented; sessctl says "getting full" at 80 %.
func (Home) CompactAt(window int) int { return window * tokens.DefaultTrigger / 100 }

// MayRecordContext implements session.ContextFilter: a context size is
// recorded only where the line has message.usage and compactMetadata.postTokens.
func (Home) MayRecordContext(raw []byte) bool { return session.MayHoldKey(raw, "usage", "posttokens") }
