// Package codex is Codex's home: everything sessctl knows about its rollout
// files (codex.md): decoding, the history Codex rebuilds on resume
// (compactions, rollbacks), turns, usage rules, store layout and writers.
package codex

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// Home is Codex's home. Its zero value is ready to use.
type Home struct{}

// Agent is the agent this home knows.
const Agent = session.Codex

func init() { session.Register(Home{}) }

// Agent implements session.Home.
func (Home) Agent() session.Agent { return Agent }

// Sniff implements session.Home: the {timestamp, type, payload} envelope,
// and the header and state lines of pre-envelope rollouts, are Codex's only.
func (Home) Sniff(top map[string]json.RawMessage) session.Vote {
	_, hasType := top["type"]
	_, hasPayload := top["payload"]
	_, hasTimestamp := top["timestamp"]
	switch {
	case hasType && hasPayload && hasTimestamp:
		return session.Sure
	case top["record_type"] != nil:
		return session.Sure // legacy rollout state line
	case top["instructions"] != nil && !hasType:
		return session.Sure // legacy rollout header
	}
	return session.NoVote
}

var rolloutRe = regexp.MustCompile(`^rollout-.*\.jsonl(\.zst)?$`)

// PathVote implements session.Home: rollout-….jsonl, and its compressed
// form rollout-….jsonl.zst.
func (Home) PathVote(path string) session.Vote {
	if base := filepath.Base(path); strings.HasPrefix(base, "rollout-") && rolloutRe.MatchString(base) {
		return session.Sure
	}
	return session.NoVote
}

// CompressesSessions implements session.CompressedStore: Codex 0.169's
// rollout maintenance compresses rollouts untouched for 7 days to
// rollout-….jsonl.zst (zstd level 3, mtime and mode kept); the plain file
// wins when both exist, and Codex decompresses a rollout back to the plain
// file before it appends to it (codex-rs/rollout/src/compression.rs).
func (Home) CompressesSessions() bool { return true }
