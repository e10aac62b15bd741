package session_test

import (
	"testing"

	_ "github.com/sessctl/sessctl/pkg/agent/all"

	"github.com/sessctl/sessctl/pkg/session"
)

func TestRecordedContext(t *testing.T) {
	u := &session.Usage{Input: 10, CacheCreation: 20, CacheRead: 30, Output: 40}
	cases := []struct {
		name  string
		agent session.Agent
		r     session.Record
		want  int64
	}{
		{"claude assistant", session.Claude, session.Record{Role: session.RoleAssistant, Usage: u, ContextTokens: -1}, 100},
		{"claude zero usage copy", session.Claude, session.Record{Role: session.RoleAssistant, Usage: &session.Usage{}, ContextTokens: -1}, -1},
		{"claude synthetic", session.Claude, session.Record{Role: session.RoleAssistant, Usage: u, Synthetic: true, ContextTokens: -1}, -1},
		{"claude sidechain", session.Claude, session.Record{Role: session.RoleAssistant, Usage: u, Sidechain: true, ContextTokens: -1}, -1},
		{"claude boundary postTokens", session.Claude, session.Record{Kind: session.KindCompaction, ContextTokens: 686}, 686},
		{"codex token_count", session.Codex, session.Record{Kind: session.KindUsage, Usage: u, ContextTokens: 9740}, 9740},
		{"codex usage record without gauge", session.Codex, session.Record{Kind: session.KindUsage, Usage: u, ContextTokens: -1}, -1},
		{"kimi _usage", session.Kimi, session.Record{Kind: session.KindUsage, ContextTokens: 9332}, 9332},
		{"clawdcode", session.Clawdcode, session.Record{Role: session.RoleAssistant, Usage: &session.Usage{Input: 1820, Output: 42}, ContextTokens: -1}, 1862},
		{"user message", session.Kimi, session.Record{Role: session.RoleUser, ContextTokens: -1}, -1},
	}
	for _, c := range cases {
		c.r.Agent = c.agent
		if got, _ := session.RecordedContext(&c.r); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
