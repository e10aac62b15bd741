// Package kimicode is Kimi Code's home (npm @moonshot-ai/kimi-code 2.x, the
// successor of Kimi CLI): everything sessctl knows about its store
// (~/.kimi-code, or $KIMI_CODE_HOME) and its wire.jsonl
// (docs/formats/kimi-code.md): decoding, the history Kimi Code rebuilds on
// resume, usage, layout and the writers it accepts.
//
// It is a home of its own, not part of pkg/agent/kimi: Kimi CLI 1.x keeps a
// context.jsonl of role lines, Kimi Code 2.x one event log per agent
// (agents/<id>/wire.jsonl) from which it folds the conversation; the two
// share no record type, no layout and no resume rule.
package kimicode

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// Home is Kimi Code's home. Its zero value is ready to use.
type Home struct{}

// Agent is the agent this home knows.
const Agent = session.KimiCode

func init() { session.Register(Home{}, "kimicode") }

// Agent implements session.Home.
func (Home) Agent() session.Agent { return Agent }

// Sniff implements session.Home: Kimi Code's wire records carry a dotted
// type of its own ("context.append_message", "turn.prompt", …).
func (Home) Sniff(top map[string]json.RawMessage) session.Vote {
	var typ string
	if json.Unmarshal(top["type"], &typ) != nil {
		return session.NoVote
	}
	if strings.HasPrefix(typ, "context.") || strings.HasPrefix(typ, "turn.") ||
		typ == "usage.record" || typ == "profile.bind" || typ == "llm.request" {
		return session.Sure
	}
	return session.NoVote
}

// sessionDirRe names a session directory: session_<uuid>.
var sessionDirRe = regexp.MustCompile(`^session_[0-9A-Za-z-]+$`)

// wirePathRe is an agent's wire inside a session directory.
var wirePathRe = regexp.MustCompile(`/session_[0-9A-Za-z-]+/agents/[^/]+/wire\.jsonl$`)

// PathVote implements session.Home:
// sessions/wd_<slug>_<hash>/session_<uuid>/agents/<agent>/wire.jsonl.
func (Home) PathVote(path string) session.Vote {
	if p := filepath.ToSlash(path); strings.HasSuffix(p, "/wire.jsonl") && wirePathRe.MatchString(p) {
		return session.Sure
	}
	return session.NoVote
}

// StoreVote implements cleanup.StoreRecognizer: ~/.kimi-code.
func (Home) StoreVote(dir string) session.Vote {
	if filepath.Base(dir) == ".kimi-code" {
		return session.Sure
	}
	if _, err := os.Lstat(filepath.Join(dir, "session_index.jsonl")); err == nil {
		if fi, err := os.Lstat(filepath.Join(dir, "workspaces.json")); err == nil && fi.Mode().IsRegular() {
			return session.Likely
		}
	}
	return session.NoVote
}

// mainWire is the main agent's wire, relative to the session directory.
var mainWire = filepath.Join("agents", "main", "wire.jsonl")

// SessionMain implements session.DirStore: a directory session_<uuid>
// with agents/main/wire.jsonl. state.json is not needed: Kimi Code writes
// it beside the wire, but a session whose state.json is lost still has
// its conversation.
func (Home) SessionMain(dir string, names map[string]fs.DirEntry) string {
	if !sessionDirRe.MatchString(filepath.Base(dir)) {
		return ""
	}
	if names != nil {
		if e, ok := names["agents"]; !ok || !e.IsDir() {
			return ""
		}
	}
	p := filepath.Join(dir, mainWire)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// SessionDirOf implements session.DirStore: the session_<uuid> directory
// above a file of it.
func (Home) SessionDirOf(path string) string {
	for d := filepath.Dir(path); d != filepath.Dir(d); d = filepath.Dir(d) {
		// the expression only on names that can match it: discovery asks
		// this of every file of every store
		if base := filepath.Base(d); strings.HasPrefix(base, "session_") && sessionDirRe.MatchString(base) {
			if _, err := os.Lstat(filepath.Join(d, mainWire)); err == nil {
				return d
			}
			return ""
		}
	}
	return ""
}

// DirFileRole implements session.DirStore: the wires of the other agents
// (subagents) are subagent transcripts; everything else (state.json,
// notify/, logs/) is the session's side files.
func (Home) DirFileRole(rel string) session.FileRole {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) == 3 && parts[0] == "agents" && parts[2] == "wire.jsonl" {
		return session.FileSubagent
	}
	return session.FileSide
}

// DirProject implements session.DirStore: state.json's cwd; without it,
// the workspace directory's name (wd_<slug>_<hash12>).
func (Home) DirProject(dir string) string {
	if b, err := os.ReadFile(filepath.Join(dir, "state.json")); err == nil {
		var st struct {
			CWD string `json:"cwd"`
		}
		if json.Unmarshal(b, &st) == nil && st.CWD != "" {
			return st.CWD
		}
	}
	return filepath.Base(filepath.Dir(dir))
}

// SessionID implements session.Layout (for a wire named on its own,
// outside a session directory): the file name.
func (Home) SessionID(name string) string { return strings.TrimSuffix(name, ".jsonl") }

// ProjectFromPath implements session.Layout.
func (Home) ProjectFromPath(main string) string { return "" }

// HasSidecar implements session.Layout: none; the session directory holds
// everything.
func (Home) HasSidecar() bool { return false }

// StoreSideDirs implements session.Layout: none.
func (Home) StoreSideDirs() []string { return nil }

// SideTitle implements session.TitleSource: state.json's title when the
// user set one (isCustomTitle).
func (Home) SideTitle(s *session.Session) (string, string) {
	if s.Dir == "" {
		return "", ""
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "state.json"))
	if err != nil {
		return "", ""
	}
	var v struct {
		Title         *string `json:"title"`
		IsCustomTitle bool    `json:"isCustomTitle"`
	}
	if json.Unmarshal(b, &v) != nil || v.Title == nil || *v.Title == "" {
		return "", ""
	}
	if v.IsCustomTitle {
		return *v.Title, "custom_title"
	}
	return *v.Title, "thread_name"
}

// ResumeCommand implements search.Resumer: `kimi -r session_<uuid>`, as
// Kimi Code prints it after a run, in the session's work directory (the
// e2e tests resume from there).
func (Home) ResumeCommand(s *session.Session) ([]string, bool) {
	return []string{"kimi", "-r", s.ID}, true
}
