package codex

import "github.com/sessctl/sessctl/pkg/session"

// Restarts implements stats.ContextRules: Codex resumes from the newest
// compacted record with its replacement_history (codex.md §6); the
// event_msg context_compacted beside it and the compaction items inside a
// history restart nothing.
func (Home) Restarts(r *session.Record) bool { return r.Type == "compacted" }

// Pending implements stats.ContextRules: no estimate of its own.
func (Home) Pending(string) int64 { return 0 }
