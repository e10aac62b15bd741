package codex

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

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
		index := filepath.Join(dir, "session_index.jsonl")
		if fi, err := os.Lstat(index); err == nil && fi.Mode().IsRegular() {
			return threadNames.name(index, fi, s.ID), "thread_name"
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", ""
}

// threadNames holds the thread names of the session_index.jsonl read last,
// so that listing many sessions of one Codex home reads it once, not once
// per session. An index larger than maxNameIndex is scanned per session
// instead: its size does not choose the memory.
var threadNames nameCache

const maxNameIndex = 16 << 20

type nameCache struct {
	mu    sync.Mutex
	path  string
	size  int64
	mtime time.Time
	names map[string]string
	loads int // times an index was read whole (tests)
}

func (c *nameCache) name(index string, fi os.FileInfo, id string) string {
	if fi.Size() > maxNameIndex {
		return scanNames(index, id)[id]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names == nil || c.path != index || c.size != fi.Size() || !c.mtime.Equal(fi.ModTime()) {
		c.path, c.size, c.mtime = index, fi.Size(), fi.ModTime()
		c.names = scanNames(index, "")
		c.loads++
	}
	return c.names[id]
}

// scanNames reads the newest non-empty thread name of every session in an
// index (of session id only, when id is not empty).
func scanNames(index, id string) map[string]string {
	names := map[string]string{}
	fh, err := jsonl.Open(index)
	if err != nil {
		return names
	}
	defer fh.Close()
	jsonl.Scan(io.Reader(fh), func(l *jsonl.Line) error {
		if l.Status != jsonl.OK || id != "" && !bytes.Contains(l.Raw, []byte(id)) {
			return nil
		}
		var v struct {
			ID   string `json:"id"`
			Name string `json:"thread_name"`
		}
		if json.Unmarshal(jsonl.Strict(l.Raw), &v) == nil && v.ID != "" && v.Name != "" && (id == "" || v.ID == id) {
			names[v.ID] = v.Name
		}
		return nil
	})
	return names
}
