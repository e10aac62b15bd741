package usageexport

import (
	"bufio"
	"bytes"
	"encoding/hex"
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
//
// In memory a key is its 16 bytes: the keys of the file in one sorted
// list, the keys added since the last Save in a map, merged into the list
// by Save (a linear merge; the file is written sorted). That is 16 bytes a
// request sent, about 64 MB for four million.
type State struct {
	path  string
	sent  []stateKey // sorted
	added map[stateKey]struct{}
}

type stateKey [16]byte

func (k stateKey) less(o stateKey) bool { return bytes.Compare(k[:], o[:]) < 0 }

// LoadState reads the state file at path; a missing file is an empty
// state (the first run).
func LoadState(path string) (*State, error) {
	s := &State{path: path, added: map[stateKey]struct{}{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		s.sent = make([]stateKey, 0, fi.Size()/33)
	}
	sc := bufio.NewScanner(f)
	first, sorted := true, true
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			first = false
			if string(line) != stateHeader {
				return nil, fmt.Errorf("%s: not a sessctl state file of schema %d (first line %.60q)", path, SchemaVersion, line)
			}
			continue
		}
		k, ok := parseKey(line)
		if !ok {
			return nil, fmt.Errorf("%s: not a key: %.60q", path, line)
		}
		if n := len(s.sent); n > 0 && !s.sent[n-1].less(k) {
			sorted = false // written by hand, or by an older sessctl
		}
		s.sent = append(s.sent, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !sorted {
		slices.SortFunc(s.sent, func(a, b stateKey) int { return bytes.Compare(a[:], b[:]) })
		s.sent = slices.Compact(s.sent)
	}
	return s, nil
}

// parseKey reads a key as the file and the rows write it: 32 lowercase hex
// digits.
func parseKey(b []byte) (stateKey, bool) {
	var k stateKey
	if len(b) != 32 {
		return k, false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return k, false
		}
	}
	_, err := hex.Decode(k[:], b)
	return k, err == nil
}

// Len is the number of keys sent.
func (s *State) Len() int { return len(s.sent) + len(s.added) }

// Has reports whether the request with key was sent.
func (s *State) Has(key string) bool {
	k, ok := parseKey([]byte(key))
	if !ok {
		return false
	}
	if _, ok := s.added[k]; ok {
		return true
	}
	_, found := slices.BinarySearchFunc(s.sent, k, func(a, b stateKey) int { return bytes.Compare(a[:], b[:]) })
	return found
}

// Add records keys as sent (Save writes them). A key that is not one the
// rows write is not recorded.
func (s *State) Add(keys ...string) {
	for _, key := range keys {
		if k, ok := parseKey([]byte(key)); ok && !s.Has(key) {
			s.added[k] = struct{}{}
		}
	}
}

// Save writes the state file atomically, creating its directory, and
// merges the keys added into the sorted list.
func (s *State) Save() error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	added := make([]stateKey, 0, len(s.added))
	for k := range s.added {
		added = append(added, k)
	}
	slices.SortFunc(added, func(a, b stateKey) int { return bytes.Compare(a[:], b[:]) })
	merged := make([]stateKey, 0, len(s.sent)+len(added))
	for i, j := 0, 0; i < len(s.sent) || j < len(added); {
		if j == len(added) || i < len(s.sent) && s.sent[i].less(added[j]) {
			merged = append(merged, s.sent[i])
			i++
		} else {
			merged = append(merged, added[j])
			j++
		}
	}
	f, err := jsonl.CreateAtomic(s.path, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	w.WriteString(stateHeader + "\n")
	var line [33]byte
	line[32] = '\n'
	for _, k := range merged {
		hex.Encode(line[:32], k[:])
		w.Write(line[:])
	}
	if err := w.Flush(); err != nil {
		f.Abort()
		return err
	}
	if err := f.Commit(nil); err != nil {
		return err
	}
	s.sent, s.added = merged, map[stateKey]struct{}{}
	return nil
}
