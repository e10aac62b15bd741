package kimi

import (
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// Restarts implements stats.ContextRules: Kimi CLI compacts by rotating
// context.jsonl, so the main file is always the active context.
func (Home) Restarts(*session.Record) bool { return false }

// Pending implements stats.ContextRules: Kimi CLI adds to the last _usage
// its own estimate of the text after it, characters // 4 (kimi.md,
// tokens.md §5).
func (Home) Pending(text string) int64 { return int64(tokens.KimiApprox(text)) }
