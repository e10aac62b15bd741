// Package clawdcode is clawdcode's home: everything sessctl knows about its
// session files (clawdcode.md).
package clawdcode

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// Home is clawdcode's home. Its zero value is ready to use.
type Home struct{}

// Agent is the agent this home knows.
const Agent = session.Clawdcode

func init() { session.Register(Home{}, "clawd") }

// Agent implements session.Home.
func (Home) Agent() session.Agent { return Agent }

var nanoidRe = regexp.MustCompile(`^[A-Za-z0-9_-]{21}$`)

// Sniff implements session.Home: clawdcode's tool_use/tool_result records
// and its 21-character nanoid uuids.
func (Home) Sniff(top map[string]json.RawMessage) session.Vote {
	var typ string
	json.Unmarshal(top["type"], &typ)
	switch typ {
	case "tool_use", "tool_result":
		return session.Likely
	}
	var uuid string
	if json.Unmarshal(top["uuid"], &uuid) == nil && nanoidRe.MatchString(uuid) {
		return session.Likely
	}
	return session.NoVote
}

// PathVote implements session.Home: everything under ~/.clawdcode/.
func (Home) PathVote(path string) session.Vote {
	if strings.Contains(filepath.ToSlash(path), "/.clawdcode/") {
		return session.Sure
	}
	return session.NoVote
}

// StoreVote implements cleanup.StoreRecognizer: ~/.clawdcode.
func (Home) StoreVote(dir string) session.Vote {
	if strings.TrimPrefix(filepath.Base(dir), ".") == "clawdcode" {
		return session.Likely
	}
	return session.NoVote
}

// SessionID implements session.Layout.
func (Home) SessionID(name string) string { return strings.TrimSuffix(name, ".jsonl") }

// ProjectFromPath implements session.Layout: the file's directory.
func (Home) ProjectFromPath(main string) string { return filepath.Base(filepath.Dir(main)) }

// HasSidecar implements session.Layout: as with Claude Code, whose layout
// clawdcode copies, a directory <id>/ beside <id>.jsonl is the session's.
func (Home) HasSidecar() bool { return true }

// StoreSideDirs implements session.Layout: none.
func (Home) StoreSideDirs() []string { return nil }
