package codex

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// SideFileOf implements cleanup.SideFiles: the Codex home of a rollout in
// <home>/sessions/YYYY/MM/DD/ or <home>/archived_sessions/, which holds
// session_index.jsonl and the SQLite state.
func (Home) SideFileOf(_, main string, _, exists func(string) bool) string {
	dir := filepath.Dir(main)
	for i := 0; i < 5; i++ {
		for _, name := range []string{"session_index.jsonl", "state_5.sqlite", "sessions"} {
			if exists(filepath.Join(dir, name)) && (name != "sessions" || filepath.Dir(main) != dir) {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// SideRefs implements cleanup.SideFiles: thread names in session_index.jsonl
// and the rows of Codex's SQLite state. sessctl clears none of them.
func (Home) SideRefs(home string, ids []string) ([]session.SideRef, []string) {
	index := filepath.Join(home, "session_index.jsonl")
	counts := map[string]int{}
	if f, err := jsonl.Open(index); err == nil {
		jsonl.Scan(bufio.NewReader(f), func(l *jsonl.Line) error {
			for _, id := range ids {
				if bytes.Contains(l.Raw, []byte(id)) {
					counts[id]++
				}
			}
			return nil
		})
		f.Close()
	}
	var dbs []string
	for _, name := range []string{"state_5.sqlite", "thread_history_1.sqlite"} {
		if fileExists(filepath.Join(home, name)) {
			dbs = append(dbs, name)
		}
	}
	var refs []session.SideRef
	for _, id := range ids {
		if n := counts[id]; n > 0 {
			refs = append(refs, session.SideRef{Path: index, SessionID: id,
				What: fmt.Sprintf("%d thread-name line(s) for the thread; Codex ignores names of missing threads, sessctl leaves them", n)})
		}
		for _, db := range dbs {
			what := "a threads row (rollout_path, title, tokens_used) for the thread; Codex 0.169 keeps listing a deleted rollout's row: run `codex` to read-repair or delete the row with sqlite3"
			if db == "thread_history_1.sqlite" {
				what = "the thread's projected items and turns; harmless once the thread row is gone, sessctl does not edit SQLite"
			}
			refs = append(refs, session.SideRef{Path: filepath.Join(home, db), SessionID: id, What: what})
		}
	}
	return refs, nil
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
