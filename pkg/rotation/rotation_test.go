package rotation

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

func write(t *testing.T, p, s string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
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
	// a taken name moves on
	write(t, filepath.Join(dir, "context_6.jsonl"), "", 0o644)
	os.Remove(filepath.Join(dir, "context_6.jsonl"))
	r, err := Move(live, session.Kimi)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(r.Path) != "context_6.jsonl" || r.N != 6 {
		t.Fatalf("moved to %s", r.Path)
	}
	if _, err := os.Stat(live); !os.IsNotExist(err) {
		t.Fatal("live file still there after Move")
	}
	fi, _ := os.Stat(r.Path)
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("rotated file mode %v, want the live file's 0644", fi.Mode().Perm())
	}
}

func TestReserveSkipsTakenName(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "a.jsonl")
	write(t, live, "x\n", 0o600)
	write(t, filepath.Join(dir, "a.jsonl.1"), "", 0o600)
	// simulate a racing reservation: a.jsonl.2 appears between List and create
	// by creating it first and checking that Reserve moves to 3
	write(t, filepath.Join(dir, "a.jsonl.2"), "", 0o600)
	n, p, err := Reserve(live, session.Claude)
	if err != nil || n != 3 || filepath.Base(p) != "a.jsonl.3" {
		t.Fatalf("Reserve = %d %s %v", n, p, err)
	}
	fi, _ := os.Stat(p)
	if fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("placeholder %v %d", fi.Mode(), fi.Size())
	}
}

func TestCopyKeepsOriginalAndMode(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "rollout-x.jsonl")
	write(t, live, "{\"a\":1}\n{\"b\":2}", 0o640)
	r, err := Copy(live, session.Codex)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(r.Path) != "rollout-x.jsonl.1" {
		t.Fatalf("copy at %s", r.Path)
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
