package clawdcode

import (
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// RecordedContext implements session.Gauge: the newest assistant usage,
// input + output (clawdcode records no cache fields).
func (Home) RecordedContext(r *session.Record) (int64, string) {
	if session.LiveUsage(r) {
		return r.Usage.Input + r.Usage.Output, "last assistant usage (input + output)"
	}
	return -1, ""
}

// DefaultModel implements session.Gauge.
func (Home) DefaultModel() string { return "" }

// DefaultWindow implements session.Gauge: clawdcode's maxContextTokens
// default.
func (Home) DefaultWindow() int { return 128_000 }

// CompactAt implements session.Gauge: clawdcode compacts at 80 % of its
// window (clawdcode.md).
func (Home) CompactAt(window int) int { return window * tokens.DefaultTrigger / 100 }

// MayRecordContext implements session.ContextFilter: a context size is
// recorded only where the line has message.usage and compactMetadata.postTokens.
func (Home) MayRecordContext(raw []byte) bool { return session.MayHoldKey(raw, "usage", "posttokens") }
