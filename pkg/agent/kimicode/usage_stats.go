package kimicode

import "github.com/sessctl/sessctl/pkg/session"

// Restarts implements stats.ContextRules: a context.clear or a compaction
// starts the context Kimi Code resumes with afresh.
func (Home) Restarts(r *session.Record) bool {
	return r.Type == "context.clear" || r.Type == "context.apply_compaction"
}

// Pending implements stats.ContextRules: Kimi Code's count comes from its
// own token_counting records; sessctl adds no estimate of its own.
func (Home) Pending(string) int64 { return 0 }
