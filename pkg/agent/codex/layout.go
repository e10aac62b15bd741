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
