package clawdcode

import "github.com/sessctl/sessctl/pkg/session"

// Restarts implements stats.ContextRules: clawdcode, like Claude Code,
// resumes from its newest compact_boundary (clawdcode.md).
func (Home) Restarts(r *session.Record) bool { return r.Type == "system/compact_boundary" }

// Pending implements stats.ContextRules: no estimate of its own.
func (Home) Pending(string) int64 { return 0 }
