// Package kimi is Kimi CLI's home: everything sessctl knows about its
// context.jsonl, wire.jsonl and session folders (kimi.md): decoding,
// checkpoints and kimi-cli's own revert_to, usage rules, store layout and
// writers.
package kimi

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// Home is Kimi CLI's home. Its zero value is ready to use.
type Home struct{}

// Agent is the agent this home knows.
const Agent = session.Kimi

func init() { session.Register(Home{}, "kimi-cli") }

// Agent implements session.Home.
func (Home) Agent() session.Agent { return Agent }

// Sniff implements session.Home: Kimi's context lines are messages with a
// role and no type.
func (Home) Sniff(top map[string]json.RawMessage) session.Vote {
	_, hasType := top["type"]
	_, hasRole := top["role"]
	if hasRole && !hasType {
		return session.Sure
	}
	return session.NoVote
}

var contextRe = regexp.MustCompile(`^context(_\d+)?\.jsonl$`)

// PathVote implements session.Home: sessions/<hash>/<id>/context.jsonl.
func (Home) PathVote(path string) session.Vote {
	p := filepath.ToSlash(path)
	if base := filepath.Base(p); strings.HasPrefix(base, "context") && contextRe.MatchString(base) && strings.Contains(p, "/sessions/") {
		return session.Likely
	}
	return session.NoVote
}
