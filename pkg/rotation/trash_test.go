package rotation

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/trash"
)

// With a trash, the pruned rotations of a session go into one entry, the
// live file and the kept rotation stay, and restore puts them back as they
// were.
func TestPruneDirToTrash(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "store", "projects", "-p")
	main := filepath.Join(dir, "s.jsonl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, main, "{\"live\":1}\n", 0o600)
	for _, n := range []string{"1", "2", "5"} {
		write(t, main+"."+n, "{\"r\":"+n+"}\n", 0o640)
		ages(t, main+"."+n, time.Hour)
	}
	before, _ := os.Stat(main + ".1")
	tr, err := trash.Open(filepath.Join(base, "trash"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	res, errs := PruneDirTo(context.Background(), filepath.Join(base, "store"), []PruneTarget{{Main: main, Agent: session.Claude, ID: "s"}}, 1, false, time.Now(), tr)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if len(res[0].Deleted) != 2 || res[0].Trash == "" {
		t.Fatalf("result %+v", res[0])
	}
	for _, n := range []string{"1", "2"} {
		if _, err := os.Lstat(main + "." + n); !os.IsNotExist(err) {
			t.Errorf("%s.%s still there", main, n)
		}
	}
	for _, p := range []string{main, main + ".5"} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	ms, _, _ := tr.List()
	if len(ms) != 1 || ms[0].Kind != trash.KindRotations || ms[0].SessionID != "s" || ms[0].Root != filepath.Join(base, "store") || len(ms[0].Files) != 2 {
		t.Fatalf("entry %+v", ms)
	}
	if _, err := tr.Restore(res[0].Trash); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(main + ".1")
	if err != nil || after.Mode() != before.Mode() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("restored %v, want mode %v mtime %v (%v)", after, before.Mode(), before.ModTime(), err)
	}
	if b, _ := os.ReadFile(main + ".2"); string(b) != "{\"r\":2}\n" {
		t.Errorf("restored .2 holds %q", b)
	}
}

// A dry run with a trash moves nothing and makes no entry.
func TestPruneDirToTrashDryRun(t *testing.T) {
	base := t.TempDir()
	main := filepath.Join(base, "s.jsonl")
	write(t, main, "{}\n", 0o600)
	write(t, main+".1", "{}\n", 0o600)
	tr, err := trash.Open(filepath.Join(base, "trash"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	res, errs := PruneDirTo(context.Background(), base, []PruneTarget{{Main: main, Agent: session.Claude}}, 0, true, time.Now(), tr)
	if errs[0] != nil || len(res[0].Deleted) != 1 || res[0].Trash != "" {
		t.Fatalf("%+v %v", res[0], errs[0])
	}
	if ms, _, _ := tr.List(); len(ms) != 0 {
		t.Errorf("dry run made %d entries", len(ms))
	}
	if _, err := os.Lstat(main + ".1"); err != nil {
		t.Error(err)
	}
}
