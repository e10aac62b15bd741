package claude

import "github.com/sessctl/sessctl/pkg/session"

// Restarts implements stats.ContextRules: Claude Code resumes from the
// newest compact_boundary, a root of the conversation (claude-code.md §5).
func (Home) Restarts(r *session.Record) bool { return r.Type == "system/compact_boundary" }

// Pending implements stats.ContextRules: Claude Code records the size of
// every request; it adds no estimate of its own.
func (Home) Pending(string) int64 { return 0 }
