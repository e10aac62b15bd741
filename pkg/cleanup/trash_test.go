package cleanup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot/fsroottest"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/trash"
)

// With a trash, Apply moves each expired session whole into one entry, the
// session directory goes as it would, and restore brings back exactly the
// files that were there.
func TestApplyToTrashThenRestore(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "kimi")
	dir := kimiSession(t, root, "h1", idA, now.Add(-40*day))
	write(t, filepath.Join(dir, "subagents", "a1", "context.jsonl"), kimiLine, now.Add(-41*day))
	kimiSession(t, root, "h1", idB, now.Add(-2*day))
	before := files(t, root)
	content := map[string]string{}
	for _, f := range before {
		b, _ := os.ReadFile(filepath.Join(root, f))
		content[f] = string(b)
	}

	tr, err := trash.Open(filepath.Join(base, "trash"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	res := Apply(context.Background(), p, ApplyOptions{Now: func() time.Time { return now }, Writers: func() map[FileKey]string { return nil }, Trash: tr})
	if res.RemovedSessions != 1 || res.Refused+res.Failed != 0 || res.TrashDir != tr.Path() {
		t.Fatalf("result %+v", res)
	}
	it := p.Sessions[0]
	if it.Trash == "" || it.Status != StatusRemoved {
		t.Fatalf("item %+v", it)
	}
	if exists(dir) {
		t.Error("the session directory stayed")
	}
	ms, _, err := tr.List()
	if err != nil || len(ms) != 1 || ms[0].ID != it.Trash || ms[0].SessionID != idA || ms[0].Agent != "kimi" || len(ms[0].Files) != 4 {
		t.Fatalf("trash: %v %+v", err, ms)
	}
	if _, err := tr.Restore(it.Trash); err != nil {
		t.Fatal(err)
	}
	after := files(t, root)
	if strings.Join(after, ",") != strings.Join(before, ",") {
		t.Fatalf("after restore %v, want %v", after, before)
	}
	for f, want := range content {
		if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != want {
			t.Errorf("%s: %q, want %q", f, b, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "context.jsonl")); err != nil || !fi.ModTime().Equal(now.Add(-40*day)) {
		t.Errorf("mtime after restore: %v %v", fi, err)
	}
}

// The race of TestApplyRacingASymlinkSwapRemovesNothingOutside, moving into
// a trash: nothing outside the root is moved or removed, and everything in
// the trash is a file of the store, never a decoy.
func TestTrashRacingASymlinkSwapTakesNothingOutside(t *testing.T) {
	const rounds, sessions = 2, 25
	base := t.TempDir()
	store := fsroottest.NewStore(t, filepath.Join(base, "template"), fsroottest.StoreOptions{Sessions: sessions, SidecarEvery: 10})
	outside := filepath.Join(base, "outside")
	store.Make(t, outside)
	// the decoys say so, so that one in the trash would show (new files:
	// Make links the template's)
	for _, f := range fsroottest.Tree(t, outside) {
		if p := filepath.Join(outside, f); !strings.HasSuffix(f, "/") {
			os.Remove(p)
			if err := os.WriteFile(p, []byte("decoy\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	decoys := fsroottest.Tree(t, outside)
	tr, err := trash.Open(filepath.Join(base, "trash"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var swaps int64
	moved := 0
	for round := range rounds {
		root := filepath.Join(base, "claude", "r"+string(rune('a'+round)))
		proj := filepath.Join(root, "projects", "-p")
		store.Make(t, proj)
		p := plan(t, Options{Roots: []session.Root{{Path: root}}, Now: time.Now(), Writers: func() map[FileKey]string { return map[FileKey]string{} }})
		s := fsroottest.Swap(t, proj, outside)
		res := Apply(context.Background(), p, ApplyOptions{Writers: func() map[FileKey]string { return nil }, Trash: tr})
		s.Stop()
		swaps += s.Swaps.Load()
		moved += res.RemovedSessions
		if gone := fsroottest.Missing(decoys, fsroottest.Tree(t, outside)); len(gone) > 0 {
			t.Errorf("round %d: %d entries outside the root were taken, e.g. %v", round, len(gone), gone[:min(len(gone), 5)])
			store.Make(t, outside)
		}
	}
	ms, broken, err := tr.List()
	if err != nil || len(broken) > 0 {
		t.Fatalf("list: %v %v", err, broken)
	}
	n := 0
	for _, m := range ms {
		for _, f := range m.Files {
			b, err := os.ReadFile(filepath.Join(tr.Path(), m.ID, "files", f.Stored))
			if err != nil || string(b) == "decoy\n" {
				t.Errorf("entry %s holds %q (%v) for %s", m.ID, b, err, f.Path)
			}
			n++
		}
	}
	t.Logf("%d rounds: %d swaps, %d sessions moved (%d files), the rest refused", rounds, swaps, moved, n)
	if len(ms) != moved {
		t.Errorf("%d entries for %d sessions moved", len(ms), moved)
	}
	if swaps == 0 {
		t.Fatal("the attacker never got its symlink in place: the race was not run")
	}
}

// A session's lock file goes into the trash with it (cleanup lists it as
// the session's), and restore puts it back before it takes the session's
// lock through it, instead of tripping over the lock file it would make.
func TestTrashedLockFileComesBack(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "claude")
	main := claudeSession(t, root, "-p", idA, now.Add(-40*day))
	lock := filepath.Join(filepath.Dir(main), "."+filepath.Base(main)+".sessctl.lock")
	write(t, lock, "", now.Add(-40*day))
	claudeSession(t, root, "-p", idB, now.Add(-1*day)) // keeps the directory
	tr, err := trash.Open(filepath.Join(base, "trash"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	res := Apply(context.Background(), p, ApplyOptions{Now: func() time.Time { return now }, Writers: func() map[FileKey]string { return nil }, Trash: tr})
	if res.RemovedSessions != 1 || res.RemovedFiles != 2 {
		t.Fatalf("result %+v; item %+v", res, p.Sessions[0])
	}
	if _, err := tr.Restore(p.Sessions[0].Trash); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{main, lock} {
		if !exists(f) {
			t.Errorf("%s not restored", f)
		}
	}
}
