package usageexport

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// stateHeader starts a state file; the version is the key's (SchemaVersion).
const stateHeader = "# sessctl export --usage --otlp: keys sent, one a line (schema 1)"

// State is the set of request keys a push has sent, kept in a file so
// that a cron job sends each request once across runs, restarts and days.
// A high-water mark of time would not do: a session file that turns up
// later (another store, a restored backup) holds older requests, and a
// request's de-duplication can move it between sessions. The file is
// rewritten atomically (temp file, fsync, rename) on every Save.
type State struct {
	path string
	sent map[string]struct{}
}

// LoadState reads the state file at path; a missing file is an empty
// state (the first run).
func LoadState(path string) (*State, error) {
	s := &State{path: path, sent: map[string]struct{}{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if line != stateHeader {
				return nil, fmt.Errorf("%s: not a sessctl state file of schema %d (first line %.60q)", path, SchemaVersion, line)
			}
			continue
		}
		if !isKey(line) {
			return nil, fmt.Errorf("%s: not a key: %.60q", path, line)
		}
		s.sent[line] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func isKey(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Len is the number of keys sent.
func (s *State) Len() int { return len(s.sent) }

// Has reports whether the request with key was sent.
func (s *State) Has(key string) bool {
	_, ok := s.sent[key]
	return ok
}

// Add records keys as sent (Save writes them).
func (s *State) Add(keys ...string) {
	for _, k := range keys {
		s.sent[k] = struct{}{}
	}
}

// Save writes the state file atomically, creating its directory.
func (s *State) Save() error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	keys := make([]string, 0, len(s.sent))
	for k := range s.sent {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	f, err := jsonl.CreateAtomic(s.path, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.WriteString(stateHeader + "\n")
	for _, k := range keys {
		w.WriteString(k)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(nil)
}
