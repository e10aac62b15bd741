package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// Discovery finds the same sessions, files and errors whether a large
// directory's lstats and sidecar walks are prefetched on every core or
// made one by one in its pass: sidecars with subagents, tool results and
// rotations, sessctl's rotations and lock files beside a transcript, a
// compressed twin, flat agent files, an unreadable sidecar, a symlink.
func TestDiscoverPrefetchChangesNothing(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "projects", "-home-u-p")
	write := func(p, s string) { t.Helper(); writeFile(t, p, s) }
	for i := range 150 {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		line := fmt.Sprintf(`{"type":"user","sessionId":"%s","cwd":"/home/u/p","message":{"role":"user","content":"hi %d"},"uuid":"u%d","timestamp":"2026-11-01T10:00:00Z"}`+"\n", id, i, i)
		main := filepath.Join(proj, id+".jsonl")
		write(main, line)
		switch i % 7 {
		case 1:
			write(filepath.Join(proj, id, "subagents", "agent-a1.jsonl"), line)
			write(filepath.Join(proj, id, "subagents", "agent-a2.jsonl"), line+line)
			write(filepath.Join(proj, id, "tool-results", "x.txt"), "out")
		case 2:
			write(main+".1", line)
			write(main+".2", line)
			write(filepath.Join(proj, "."+id+".jsonl.sessctl.lock"), "")
		case 3:
			write(main+".zst", "not really zstd")
			write(filepath.Join(proj, id, "subagents", "agent-b.jsonl.1"), line)
		case 4:
			write(filepath.Join(proj, fmt.Sprintf("agent-%04d.jsonl", i)), line)
		case 5:
			if err := os.MkdirAll(filepath.Join(proj, id, "locked"), 0o755); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(proj, id, "locked", "f.jsonl"), line)
			if os.Getuid() != 0 {
				os.Chmod(filepath.Join(proj, id, "locked"), 0)
				t.Cleanup(func() { os.Chmod(filepath.Join(proj, id, "locked"), 0o755) })
			}
		case 6:
			os.Symlink(main, filepath.Join(proj, "link-"+id+".jsonl"))
		}
	}
	roots := []session.Root{{Path: root, Agent: session.Claude}}
	with := session.Discover(roots, false)
	// in chunks of a few entries, so that a session's neighbours (its
	// sidecar, rotations, lock file) often lie in another chunk than its
	// transcript, and each chunk is prefetched
	oldChunk, oldMin := session.SetPrefetchChunk(7), session.SetPrefetchMin(1)
	chunked := session.Discover(roots, false)
	session.SetPrefetchChunk(oldChunk)
	session.SetPrefetchMin(1 << 30)
	defer session.SetPrefetchMin(oldMin)
	without := session.Discover(roots, false)
	if len(with.Sessions) < 150 {
		t.Fatalf("%d sessions found, want at least 150", len(with.Sessions))
	}
	sameDiscovery(t, "in chunks of 7", chunked, without)
	sameDiscovery(t, "prefetched", with, without)
	if sub := with.Sessions[0]; len(sub.Files) == 0 {
		t.Fatal("no files")
	}
}

// sameDiscovery fails unless with (discovered with prefetching, as how
// says) is without, naming the first session that differs.
func sameDiscovery(t *testing.T, how string, with, without *session.Result) {
	t.Helper()
	if !reflect.DeepEqual(with, without) {
		for i := range min(len(with.Sessions), len(without.Sessions)) {
			if !reflect.DeepEqual(with.Sessions[i], without.Sessions[i]) {
				t.Fatalf("session %d differs:\n%s %+v\none by one %+v", i, how, with.Sessions[i], without.Sessions[i])
			}
		}
		t.Fatalf("results differ:\n%s %d sessions, %v, %v\none by one %d sessions, %v, %v", how, len(with.Sessions), with.Unrecognized, with.Errors,
			len(without.Sessions), without.Unrecognized, without.Errors)
	}
}
