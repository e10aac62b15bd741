package codex

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// ProjectKey implements cleanup.ProjectKeyer: Codex sorts rollouts by date,
// so a rollout's project is the cwd of its session_meta, its first line.
// That line is long (Codex 0.169 puts ~20 KB of instructions in it) but
// "cwd" comes early in its payload, so only the first len(buf) bytes are
// read and the value is decoded where the key is.
func (Home) ProjectKey(path string, buf []byte) string {
	f, err := jsonl.Open(path)
	if err != nil {
		return ""
	}
	n, _ := io.ReadFull(f, buf)
	f.Close()
	line := buf[:n]
	if k := bytes.IndexByte(line, '\n'); k >= 0 {
		line = line[:k]
	}
	k := bytes.Index(line, []byte(`"cwd":`))
	if k < 0 {
		return ""
	}
	var cwd string
	if json.NewDecoder(bytes.NewReader(line[k+len(`"cwd":`):])).Decode(&cwd) != nil {
		return ""
	}
	return cwd
}

// StoreVote implements cleanup.StoreRecognizer: a Codex home holds
// session_index.jsonl or its SQLite state; ~/.codex is Codex's by name.
func (Home) StoreVote(dir string) session.Vote {
	if fileExists(filepath.Join(dir, "session_index.jsonl")) || fileExists(filepath.Join(dir, "state_5.sqlite")) {
		return session.Sure
	}
	if strings.TrimPrefix(filepath.Base(dir), ".") == "codex" {
		return session.Likely
	}
	return session.NoVote
}

// SessionID implements session.Layout: rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl.
func (Home) SessionID(name string) string {
	stem := strings.TrimSuffix(jsonl.PlainName(name), ".jsonl")
	if len(stem) >= 36 && session.IsUUID(stem[len(stem)-36:]) {
		return stem[len(stem)-36:]
	}
	return stem
}

// ProjectFromPath implements session.Layout: rollouts are sorted by date, so
// the path says nothing of the project.
func (Home) ProjectFromPath(string) string { return "" }

// HasSidecar implements session.Layout: none.
func (Home) HasSidecar() bool { return false }

// StoreSideDirs implements session.Layout: none.
func (Home) StoreSideDirs() []string { return nil }

// SideTitle implements session.TitleSource: the newest thread name for the
// session in the session_index.jsonl of the Codex home that holds it.
func (Home) SideTitle(s *session.Session) (string, string) {
	// the rollout is in <home>/sessions/YYYY/MM/DD/ or <home>/archived_sessions/
	dir := filepath.Dir(s.Main)
	for i := 0; i < 5; i++ {
		fh, err := jsonl.Open(filepath.Join(dir, "session_index.jsonl"))
		if err == nil {
			name := ""
			jsonl.Scan(io.Reader(fh), func(l *jsonl.Line) error {
				if l.Status != jsonl.OK || !bytes.Contains(l.Raw, []byte(s.ID)) {
					return nil
				}
				var v struct {
					ID   string `json:"id"`
					Name string `json:"thread_name"`
				}
				if json.Unmarshal(jsonl.Strict(l.Raw), &v) == nil && v.ID == s.ID && v.Name != "" {
					name = v.Name
				}
				return nil
			})
			fh.Close()
			return name, "thread_name"
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", ""
}
