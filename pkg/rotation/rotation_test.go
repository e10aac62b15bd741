package rotation

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/session"
)

func write(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
}

// preserve runs Preserve on the file at live.
func preserve(t *testing.T, live string, agent session.Agent) (Rotation, bool) {
	t.Helper()
	dir, err := fsroot.OpenDir(filepath.Dir(live))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	src, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fi, _ := src.Stat()
	r, linked, err := Preserve(dir, filepath.Base(live), agent, src, fi.Size(), fi.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	return r, linked
}

func TestKimiNamesFollowKimi(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "context.jsonl")
	write(t, live, "x\n", 0o644)
	// gaps are never reused; context_01 counts as 1; other names are ignored
	for _, n := range []string{"context_1.jsonl", "context_2.jsonl", "context_5.jsonl", "context_01.jsonl", "context_x.jsonl", "context.jsonl.9"} {
		write(t, filepath.Join(dir, n), "", 0o644)
	}
	n, err := Next(live, session.Kimi)
	if err != nil || n != 6 {
		t.Fatalf("Next = %d, %v; want 6", n, err)
	}
	r, linked := preserve(t, live, session.Kimi)
	if filepath.Base(r.Path) != "context_6.jsonl" || r.N != 6 || !linked {
		t.Fatalf("preserved as %s (linked %v)", r.Path, linked)
	}
	a, _ := os.Stat(live)
	b, _ := os.Stat(r.Path)
	if !os.SameFile(a, b) || b.Mode().Perm() != 0o644 {
		t.Fatalf("rotation is not the live file's inode with its mode (%v)", b.Mode())
	}
}

// linkat reserves the name: a name taken by something List does not count
// (here a directory) moves on to the next number.
func TestPreserveSkipsTakenName(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "a.jsonl")
	write(t, live, "x\n", 0o600)
	write(t, filepath.Join(dir, "a.jsonl.1"), "", 0o600)
	if err := os.Mkdir(filepath.Join(dir, "a.jsonl.2"), 0o700); err != nil {
		t.Fatal(err)
	}
	r, _ := preserve(t, live, session.Claude)
	if r.N != 3 || filepath.Base(r.Path) != "a.jsonl.3" {
		t.Fatalf("Preserve = %d %s", r.N, r.Path)
	}
}

// Where hard links are impossible, the rotation is a synced copy with the
// live file's mode, and no placeholder is left when the copy fails.
func TestPreserveCopiesWhereLinksFail(t *testing.T) {
	defer func(f func(*fsroot.Dir, string, string) error) { linkFile = f }(linkFile)
	linkFile = func(*fsroot.Dir, string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
	dir := t.TempDir()
	live := filepath.Join(dir, "rollout-x.jsonl")
	write(t, live, "{\"a\":1}\n{\"b\":2}", 0o640)
	r, linked := preserve(t, live, session.Codex)
	if linked || filepath.Base(r.Path) != "rollout-x.jsonl.1" {
		t.Fatalf("copy at %s (linked %v)", r.Path, linked)
	}
	a, _ := os.ReadFile(live)
	b, _ := os.ReadFile(r.Path)
	if string(a) != string(b) || string(a) != "{\"a\":1}\n{\"b\":2}" {
		t.Fatalf("copy differs: %q vs %q", a, b)
	}
	fi, _ := os.Stat(r.Path)
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	rs, _ := List(live, session.Codex)
	if len(rs) != 1 || rs[0].N != 1 {
		t.Fatalf("List = %+v", rs)
	}
}

func TestNonKimiNamesAreNotJSONL(t *testing.T) {
	p := NameFor("/x/projects/p/7bd0.jsonl", session.Claude, 2)
	if filepath.Base(p) != "7bd0.jsonl.2" {
		t.Fatalf("got %s", p)
	}
	if filepath.Ext(p) == ".jsonl" {
		t.Fatal("a rotation must not end in .jsonl")
	}
}

// A file name that is not UTF-8 (possible on Linux) must not crash List: a
// regexp built from it did.
func TestListNameNotUTF8(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a\xff.jsonl")
	for _, name := range []string{"a\xff.jsonl", "a\xff.jsonl.2", "a\xff.jsonl.x", "a\xff.jsonl."} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := List(p, session.Claude)
	if err != nil || len(rs) != 1 || rs[0].N != 2 {
		t.Fatalf("List = %+v, %v", rs, err)
	}
}
