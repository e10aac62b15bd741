// Package fsroottest races a deleting command against an attacker that swaps a
// directory on its path for a symlink to a directory outside the store, full
// of decoy files with the same names. Tests of cleanup and prune-rotations use
// it to prove that nothing outside their root is ever removed.
package fsroottest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ClaudeLine is one Claude Code user record; SID stands for the session id.
const ClaudeLine = `{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,"sessionId":"SID","isSidechain":false,"userType":"external","version":"2.1.197","message":{"role":"user","content":"hi"}}` + "\n"

// Store is a template of Claude sessions in one project directory, made
// once and linked into a fresh store for each round (a hard link is one
// system call; writing the files anew each round would dominate the test).
// Its files are 90 days old, so every session has expired.
type Store struct {
	template string
	names    []string // files and directories relative to the project dir, parents first
}

// StoreOptions shape a Store.
type StoreOptions struct {
	Sessions int
	// SidecarEvery gives every SidecarEvery-th session a sidecar directory
	// with a subagent transcript (so that removing emptied directories is
	// raced too); 0 for none.
	SidecarEvery int
	// Rotations gives each session sessctl rotations <id>.jsonl.1 … .N.
	Rotations int
}

// NewStore writes the template under dir.
func NewStore(t testing.TB, dir string, opt StoreOptions) *Store {
	t.Helper()
	s := &Store{template: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-90 * 24 * time.Hour)
	file := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		s.names = append(s.names, name)
	}
	for i := range opt.Sessions {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		line := strings.ReplaceAll(ClaudeLine, "SID", id)
		file(id+".jsonl", line)
		for k := 1; k <= opt.Rotations; k++ {
			file(fmt.Sprintf("%s.jsonl.%d", id, k), line)
		}
		if opt.SidecarEvery > 0 && i%opt.SidecarEvery == 0 {
			if err := os.MkdirAll(filepath.Join(dir, id, "subagents"), 0o755); err != nil {
				t.Fatal(err)
			}
			s.names = append(s.names, id+"/", id+"/subagents/")
			file(id+"/subagents/agent-a1.jsonl", line)
		}
	}
	return s
}

// Make fills dir (created) with the sessions: hard links to the template's
// files, directories made anew.
func (s *Store) Make(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range s.names {
		var err error
		if strings.HasSuffix(name, "/") {
			err = os.Mkdir(filepath.Join(dir, name), 0o755)
		} else {
			err = os.Link(filepath.Join(s.template, name), filepath.Join(dir, name))
		}
		if err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
}

// Tree lists every file and directory under dir (relative, sorted), without
// following symlinks.
func Tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// Missing returns the entries of before that are not in after.
func Missing(before, after []string) []string {
	have := map[string]bool{}
	for _, p := range after {
		have[p] = true
	}
	var out []string
	for _, p := range before {
		if !have[p] {
			out = append(out, p)
		}
	}
	return out
}

// Pause is how long the real directory stays in place between two swaps.
var Pause = 50 * time.Microsecond

// Swapper swaps Dir for a symlink to Target in a loop until Stop: Dir is
// renamed away and a ready-made symlink takes its place in one step
// (renameat2 RENAME_EXCHANGE; three renames where that is missing), and
// back. The real directory stays in place most of the time, so that checks
// by path pass, and the symlink appears only briefly, as an attacker would
// want it.
type Swapper struct {
	Dir, Target string
	Swaps       atomic.Int64 // how often the symlink was in place

	stop chan struct{}
	done sync.WaitGroup
}

// Swap starts the loop. The symlink lives at Dir+".link" between swaps.
func Swap(t testing.TB, dir, target string) *Swapper {
	t.Helper()
	s := &Swapper{Dir: dir, Target: target, stop: make(chan struct{})}
	link := dir + ".link"
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		for {
			select {
			case <-s.stop:
				return
			default:
			}
			time.Sleep(Pause)
			if exchange(dir, link) == nil {
				s.Swaps.Add(1)
				exchange(dir, link)
			}
		}
	}()
	return s
}

// Stop ends the loop and leaves Dir as the real directory again.
func (s *Swapper) Stop() {
	close(s.stop)
	s.done.Wait()
	if fi, err := os.Lstat(s.Dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		exchange(s.Dir, s.Dir+".link")
	}
	os.Remove(s.Dir + ".link")
}
