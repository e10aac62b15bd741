package session

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// Layout is the part of a home that knows how the agent's store holds a
// session beyond its main file. A home that does not implement it gets
// defaultLayout: the id is the file's name, the project its directory's.
type Layout interface {
	// SessionID is the session's id from its main file's name.
	SessionID(name string) string
	// ProjectFromPath is the project key the main file's path gives, or ""
	// when the path says nothing of the project (Summarize then uses the
	// working directory the file records).
	ProjectFromPath(main string) string
	// HasSidecar reports whether a directory beside the main file, named
	// like it without .jsonl, belongs to the session (Claude Code's <id>/
	// with subagents/ and tool-results/).
	HasSidecar() bool
	// StoreSideDirs are directories of the agent's store root that hold one
	// entry per session, named by its id (Claude Code's file-history/<id>
	// and session-env/<id>).
	StoreSideDirs() []string
}

// TitleSource is implemented by homes whose client keeps a session's title
// outside its transcript (kimi-cli's state.json, Codex's
// session_index.jsonl).
type TitleSource interface {
	// SideTitle returns the title and where it came from: "custom_title"
	// (set by the user) or "thread_name" (named by the client).
	SideTitle(s *Session) (title, source string)
}

// TitleRecords is implemented by homes whose transcripts carry title
// records anywhere in the file (Claude Code's custom-title, ai-title and
// summary), so that ls decodes the lines that may hold one.
type TitleRecords interface {
	MayHoldTitle(raw []byte) bool
}

// CompressedStore is implemented by homes whose client compresses session
// files itself and reads them back (Codex 0.169's rollout maintenance:
// rollout-….jsonl.zst, the plain file winning when both exist). Only their
// "<name>.jsonl.zst" files are sessions; elsewhere such a file is not
// something the client would ever read.
type CompressedStore interface {
	CompressesSessions() bool
}

// ReadsCompressed reports whether the agent's client keeps compressed
// session files.
func ReadsCompressed(a Agent) bool {
	c, ok := As[CompressedStore](a)
	return ok && c.CompressesSessions()
}

// DirStore is implemented by homes whose client keeps each session in a
// directory of its own with the transcript deeper inside it (Kimi Code:
// sessions/wd_<slug>_<hash>/session_<uuid>/agents/main/wire.jsonl beside
// state.json). Discovery takes the directory as one session: its id is the
// directory's name, every regular file in it is the session's, and the
// session's Dir is the directory (cleanup removes it as a whole).
type DirStore interface {
	Agent() Agent
	// SessionMain returns the main transcript of dir when dir is one of
	// the agent's session directories, "" otherwise. names, when not nil,
	// are dir's entries by name.
	SessionMain(dir string, names map[string]fs.DirEntry) string
	// SessionDirOf returns the session directory that holds the file at
	// path (named on the command line), or "".
	SessionDirOf(path string) string
	// DirFileRole says what a file of the session other than its main
	// transcript is, from its path relative to the session directory.
	DirFileRole(rel string) FileRole
	// DirProject is the session's project (its working directory), or the
	// best the directory names say.
	DirProject(dir string) string
}

// dirStores returns the registered homes that are DirStores.
func dirStores() []DirStore {
	var out []DirStore
	for _, h := range Homes() {
		if ds, ok := h.(DirStore); ok {
			out = append(out, ds)
		}
	}
	return out
}

type defaultLayout struct{}

func (defaultLayout) SessionID(name string) string       { return strings.TrimSuffix(name, ".jsonl") }
func (defaultLayout) ProjectFromPath(main string) string { return filepath.Base(filepath.Dir(main)) }
func (defaultLayout) HasSidecar() bool                   { return false }
func (defaultLayout) StoreSideDirs() []string            { return nil }

// LayoutOf returns the agent's Layout, or the default one.
func LayoutOf(a Agent) Layout {
	if l, ok := As[Layout](a); ok {
		return l
	}
	return defaultLayout{}
}
