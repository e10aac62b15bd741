package tokens

import "github.com/sessctl/sessctl/pkg/session"

// RecordedContext returns the context size a record records (tokens.md §5),
// with a name for where it came from, or -1 when the record says nothing
// about it:
//
//   - a compaction's compactMetadata.postTokens (Claude Code 2.1.x, clawdcode);
//   - Claude Code: the assistant usage input + cache creation + cache read +
//     output (the size of the next request);
//   - Codex: last_token_usage.total_tokens of a token_count event;
//   - Kimi: the _usage gauge;
//   - clawdcode: the assistant usage input + output.
//
// All-zero usage (Claude's synthetic replies, the tail copies that sessctl
// compact writes) and subagent (sidechain) records say nothing.
func RecordedContext(agent session.Agent, r *session.Record) (int64, string) {
	if r.Sidechain || r.Kind == session.KindCorrupt || r.Kind == session.KindBlank {
		return -1, ""
	}
	if r.Kind == session.KindCompaction && r.ContextTokens >= 0 {
		return r.ContextTokens, "compactMetadata.postTokens"
	}
	u := r.Usage
	live := u != nil && u.Total() > 0 && !r.Synthetic && r.Role == session.RoleAssistant
	switch agent {
	case session.Claude:
		if live {
			return u.Input + u.CacheCreation + u.CacheRead + u.Output, "last assistant usage (input + cache creation + cache read + output)"
		}
	case session.Codex:
		if r.Kind == session.KindUsage && r.ContextTokens >= 0 {
			return r.ContextTokens, "last_token_usage.total_tokens"
		}
	case session.Kimi:
		if r.Kind == session.KindUsage && r.ContextTokens >= 0 {
			return r.ContextTokens, "_usage.token_count"
		}
	case session.Clawdcode:
		if live {
			return u.Input + u.Output, "last assistant usage (input + output)"
		}
	}
	return -1, ""
}
