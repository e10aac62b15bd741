// Package claude is Claude Code's home: everything sessctl knows about its
// transcripts (claude-code.md): decoding, the conversation the client
// rebuilds on resume, turns, usage rules, store layout and the writers that
// revert, compact and repair use.
package claude

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// Home is Claude Code's home. Its zero value is ready to use.
type Home struct{}

// Agent is the agent this home knows.
const Agent = session.Claude

func init() { session.Register(Home{}, "claude-code", "claudecode", "cc") }

// Agent implements session.Home.
func (Home) Agent() session.Agent { return Agent }

// sniffTypes are record types only Claude Code writes.
var sniffTypes = map[string]bool{
	"summary": true, "queue-operation": true, "file-history-snapshot": true, "progress": true, "attachment": true,
	"last-prompt": true, "mode": true, "permission-mode": true, "custom-title": true, "ai-title": true,
	"agent-name": true, "agent-color": true, "pr-link": true,
	"api-request": true, "api-request-shape": true, "api-request-blob": true, "cost-state": true,
	"tools-used": true, "atis-latch": true,
}

// Sniff implements session.Home: Claude's own record types and envelope
// fields are a strong hint, but clawdcode writes look-alike lines, so no
// line is Sure.
func (Home) Sniff(top map[string]json.RawMessage) session.Vote {
	var typ string
	json.Unmarshal(top["type"], &typ)
	if sniffTypes[typ] {
		return session.Likely
	}
	if _, ok := top["isSidechain"]; ok {
		return session.Likely
	}
	if _, ok := top["userType"]; ok {
		return session.Likely
	}
	var uuid string
	if json.Unmarshal(top["uuid"], &uuid) == nil && session.IsUUID(uuid) {
		return session.Likely
	}
	_, hasType := top["type"]
	_, hasSession := top["sessionId"]
	_, hasMessage := top["message"]
	if !hasType && hasSession && hasMessage {
		// ccusage-style usage lines without a type (Kimi's wire lines have
		// a message too, but a numeric timestamp and no sessionId)
		var ts float64
		if json.Unmarshal(top["timestamp"], &ts) != nil {
			return session.Likely
		}
	}
	return session.NoVote
}

// PathVote implements session.Home: <store>/projects/<escaped cwd>/<uuid>.jsonl.
func (Home) PathVote(path string) session.Vote {
	slash := filepath.ToSlash(path)
	name := filepath.Base(slash)
	switch {
	case session.IsUUID(strings.TrimSuffix(name, ".jsonl")) && strings.Contains(slash, "/projects/"):
		return session.Sure
	case strings.Contains(slash, "/projects/") && (strings.Contains(slash, "/.claude/") || strings.Contains(slash, "/claude/")):
		return session.Likely
	}
	return session.NoVote
}
