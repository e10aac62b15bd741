package trash

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/safety"
	"golang.org/x/sys/unix"
)

// a store with one session: a transcript and a sidecar file two levels down
type fixture struct {
	root, trashDir string
	files          map[string]fileWant // rel -> what it was
	rels           []string
}

type fileWant struct {
	data  []byte
	mode  fs.FileMode
	mtime time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{root: filepath.Join(base, "store"), trashDir: filepath.Join(base, "data", "sessctl", "trash"), files: map[string]fileWant{}}
	add := func(rel string, data string, mode fs.FileMode, mtime time.Time) {
		p := filepath.Join(f.root, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(data), 0o600))
		must(t, os.Chmod(p, mode))
		must(t, os.Chtimes(p, mtime, mtime))
		f.files[rel] = fileWant{[]byte(data), mode, mtime}
		f.rels = append(f.rels, rel)
	}
	old := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	add("projects/-p/s1.jsonl", "{\"a\":1}\n{\"b\":\"\xff raw\"}\n", 0o640, old)
	add("projects/-p/s1/subagents/agent-x.jsonl", "torn line without newline", 0o600, old.Add(time.Hour))
	must(t, os.Chmod(filepath.Join(f.root, "projects/-p/s1/subagents"), 0o751))
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) planned(t *testing.T) ([]Planned, []safety.Identity) {
	var ps []Planned
	var ids []safety.Identity
	for _, rel := range f.rels {
		p := filepath.Join(f.root, rel)
		fi, err := os.Lstat(p)
		must(t, err)
		ps = append(ps, Planned{Path: p, Rel: rel, Size: fi.Size(), Mode: fi.Mode().Perm(), ModTime: fi.ModTime()})
		k := safety.KeyOf(fi)
		ids = append(ids, safety.Identity{Dev: k.Dev, Ino: k.Ino, Size: fi.Size(), ModTime: fi.ModTime()})
	}
	return ps, ids
}

// trashAll moves the fixture's session into a new entry, as cleanup does.
func (f *fixture) trashAll(t *testing.T, tr *Trash, now time.Time) string {
	t.Helper()
	ps, ids := f.planned(t)
	e, err := tr.Begin(Meta{Kind: KindSession, Agent: "claude", SessionID: "s1", Main: ps[0].Path, Root: f.root, Now: now}, ps)
	must(t, err)
	root, err := fsroot.OpenDir(f.root)
	must(t, err)
	defer root.Close()
	for i, p := range ps {
		d, err := root.OpenDir(filepath.Dir(p.Rel))
		must(t, err)
		must(t, e.Move(i, d, filepath.Base(p.Rel), ids[i]))
		d.Close()
	}
	must(t, e.Finish())
	return e.ID()
}

func (f *fixture) checkRestored(t *testing.T) {
	t.Helper()
	for rel, w := range f.files {
		p := filepath.Join(f.root, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		got, _ := os.ReadFile(p)
		if !bytes.Equal(got, w.data) {
			t.Errorf("%s: bytes %q, want %q", rel, got, w.data)
		}
		if fi.Mode() != w.mode {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode(), w.mode)
		}
		if !fi.ModTime().Equal(w.mtime) {
			t.Errorf("%s: mtime %v, want %v", rel, fi.ModTime(), w.mtime)
		}
	}
}

func (f *fixture) checkGone(t *testing.T) {
	t.Helper()
	for rel := range f.files {
		if _, err := os.Lstat(filepath.Join(f.root, rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: still there after the move (%v)", rel, err)
		}
	}
}

func openTrash(t *testing.T, dir string) *Trash {
	tr, err := Open(dir, true)
	must(t, err)
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		xdg, want string
	}{
		{"", "/h/.local/share/sessctl/trash"},
		{"rel/data", "/h/.local/share/sessctl/trash"},
		{"/d", "/d/sessctl/trash"},
	} {
		if got := Dir(env(map[string]string{"XDG_DATA_HOME": c.xdg}), "/h"); got != c.want {
			t.Errorf("XDG_DATA_HOME=%q: %s, want %s", c.xdg, got, c.want)
		}
	}
}

func TestMoveThenRestoreByteForByte(t *testing.T) {
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	id := f.trashAll(t, tr, now)
	f.checkGone(t)

	ms, broken, err := tr.List()
	must(t, err)
	if len(ms) != 1 || len(broken) != 0 {
		t.Fatalf("list: %d entries, %d broken", len(ms), len(broken))
	}
	m := ms[0]
	if m.ID != id || !m.Complete || len(m.Files) != 2 || !m.TrashedAt.Equal(now) || m.Agent != "claude" {
		t.Fatalf("manifest %+v", m)
	}
	if want := int64(len(f.files[f.rels[0]].data) + len(f.files[f.rels[1]].data)); m.Bytes() != want {
		t.Errorf("bytes %d, want %d", m.Bytes(), want)
	}
	// the directories go with cleanup, not with the move; remove them as
	// it would, so that restore has to make them again with their modes
	must(t, os.RemoveAll(filepath.Join(f.root, "projects/-p/s1")))

	if _, err := tr.Restore(id); err != nil {
		t.Fatal(err)
	}
	f.checkRestored(t)
	fi, err := os.Stat(filepath.Join(f.root, "projects/-p/s1/subagents"))
	must(t, err)
	if fi.Mode().Perm() != 0o751 {
		t.Errorf("remade directory has mode %v, want 0751", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(f.trashDir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".trash") { // the trash's own lock file
			t.Errorf("left in the trash: %s", e.Name())
		}
	}
}

// A file on another filesystem is copied (mode and mtime kept) and the
// original removed only after the copy is synced; restore copies it back.
func TestMoveAcrossFilesystems(t *testing.T) {
	defer func(r func(*fsroot.Dir, string, *fsroot.Dir, string) error) { rename = r }(rename)
	rename = func(*fsroot.Dir, string, *fsroot.Dir, string) error { return unix.EXDEV }
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	id := f.trashAll(t, tr, time.Now())
	f.checkGone(t)
	if _, err := tr.Restore(id); err != nil {
		t.Fatal(err)
	}
	f.checkRestored(t)
	// no temp file left beside the restored ones
	ents, _ := os.ReadDir(filepath.Join(f.root, "projects/-p"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".sessctl-tmp-") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

// A copy across filesystems that fails midway leaves the original where it
// was and nothing in the trash.
func TestFailedCopyLosesNothing(t *testing.T) {
	defer func(r func(*fsroot.Dir, string, *fsroot.Dir, string) error) { rename = r }(rename)
	rename = func(*fsroot.Dir, string, *fsroot.Dir, string) error { return unix.EXDEV }
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	ps, ids := f.planned(t)
	e, err := tr.Begin(Meta{Kind: KindSession, Main: ps[0].Path, Root: f.root}, ps)
	must(t, err)
	d, err := fsroot.OpenDir(filepath.Dir(ps[0].Path))
	must(t, err)
	defer d.Close()
	// the file changed after it was planned: the copy is refused and removed
	must(t, os.WriteFile(ps[0].Path, []byte("appended"), 0o640))
	if err := e.Move(0, d, filepath.Base(ps[0].Path), ids[0]); err == nil {
		t.Fatal("a changed file was moved")
	}
	must(t, e.Rollback())
	if got, _ := os.ReadFile(ps[0].Path); string(got) != "appended" {
		t.Errorf("original is now %q", got)
	}
	ms, broken, _ := tr.List()
	if len(ms)+len(broken) != 0 {
		t.Errorf("trash holds %d entries after a failed move", len(ms)+len(broken))
	}
}

// Restore refuses when a file has appeared where a trashed one goes, says
// which, and changes nothing: the other file is not restored either, and
// the entry stays whole.
func TestRestoreRefusesAnAppearedFile(t *testing.T) {
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	id := f.trashAll(t, tr, time.Now())
	blocker := filepath.Join(f.root, f.rels[1])
	must(t, os.WriteFile(blocker, []byte("new"), 0o644))

	_, err := tr.Restore(id)
	var be *BlockedError
	if !errors.As(err, &be) || be.Path != blocker {
		t.Fatalf("restore: %v, want a BlockedError for %s", err, blocker)
	}
	if got, _ := os.ReadFile(blocker); string(got) != "new" {
		t.Errorf("the file in the way is now %q", got)
	}
	if _, err := os.Lstat(filepath.Join(f.root, f.rels[0])); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s was restored although the restore was refused", f.rels[0])
	}
	ms, _, _ := tr.List()
	if len(ms) != 1 || len(ms[0].Files) != 2 {
		t.Fatalf("entry not left whole: %+v", ms)
	}
	// once the file is out of the way, it works
	must(t, os.Remove(blocker))
	if _, err := tr.Restore(id); err != nil {
		t.Fatal(err)
	}
	f.checkRestored(t)
}

// A file that appears during the restore (after the look, before its
// rename) is not overwritten: the files already back return to the trash.
func TestRestoreRaceNeverOverwrites(t *testing.T) {
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	id := f.trashAll(t, tr, time.Now())
	blocker := filepath.Join(f.root, f.rels[1])
	defer func(r func(*fsroot.Dir, string, *fsroot.Dir, string) error) { rename = r }(rename)
	real := rename
	rename = func(a *fsroot.Dir, an string, b *fsroot.Dir, bn string) error {
		if bn == filepath.Base(blocker) {
			os.WriteFile(blocker, []byte("raced in"), 0o644)
		}
		return real(a, an, b, bn)
	}
	_, err := tr.Restore(id)
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("restore: %v, want a BlockedError", err)
	}
	if got, _ := os.ReadFile(blocker); string(got) != "raced in" {
		t.Errorf("the file that raced in is now %q", got)
	}
	if _, err := os.Lstat(filepath.Join(f.root, f.rels[0])); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s stayed restored after the refusal", f.rels[0])
	}
	ms, _, _ := tr.List()
	if len(ms) != 1 || len(ms[0].Files) != 2 {
		t.Fatalf("entry not whole: %+v", ms)
	}
}

// A restore whose way down goes through a symlink is refused: nothing is
// written where the symlink leads.
func TestRestoreNeverThroughASymlink(t *testing.T) {
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	id := f.trashAll(t, tr, time.Now())
	outside := filepath.Join(filepath.Dir(f.root), "outside")
	must(t, os.MkdirAll(outside, 0o755))
	proj := filepath.Join(f.root, "projects/-p")
	must(t, os.RemoveAll(proj))
	must(t, os.Symlink(outside, proj))
	_, err := tr.Restore(id)
	var be *BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("restore: %v, want a BlockedError", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("restore wrote through the symlink: %v", ents)
	}
}

// The file swapped for a symlink between the check and the move is moved
// back, not followed; a directory swapped for a symlink after its handle
// was opened changes nothing the handle names.
func TestMoveDoesNotFollowASwappedSymlink(t *testing.T) {
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	outside := filepath.Join(filepath.Dir(f.root), "outside")
	must(t, os.MkdirAll(outside, 0o755))
	decoy := filepath.Join(outside, "s1.jsonl")
	must(t, os.WriteFile(decoy, []byte("decoy"), 0o644))

	ps, ids := f.planned(t)
	e, err := tr.Begin(Meta{Kind: KindSession, Main: ps[0].Path, Root: f.root}, ps)
	must(t, err)
	proj := filepath.Join(f.root, "projects/-p")
	d, err := fsroot.OpenDir(proj)
	must(t, err)
	defer d.Close()

	// 1: the file itself becomes a symlink to the decoy right before the rename
	defer func(r func(*fsroot.Dir, string, *fsroot.Dir, string) error) { rename = r }(rename)
	real := rename
	swapped := false
	rename = func(a *fsroot.Dir, an string, b *fsroot.Dir, bn string) error {
		if !swapped && an == "s1.jsonl" {
			swapped = true
			must(t, os.Rename(ps[0].Path, ps[0].Path+".away"))
			must(t, os.Symlink(decoy, ps[0].Path))
		}
		return real(a, an, b, bn)
	}
	if err := e.Move(0, d, "s1.jsonl", ids[0]); err == nil {
		t.Fatal("moved a file swapped for a symlink")
	}
	if fi, err := os.Lstat(ps[0].Path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink was not put back: %v %v", fi, err)
	}
	if got, _ := os.ReadFile(decoy); string(got) != "decoy" {
		t.Errorf("decoy changed: %q", got)
	}
	must(t, os.Remove(ps[0].Path))
	must(t, os.Rename(ps[0].Path+".away", ps[0].Path))
	rename = real

	// 2: the project directory becomes a symlink to outside after its handle was opened
	must(t, os.Rename(proj, proj+".real"))
	must(t, os.Symlink(outside, proj))
	must(t, e.Move(0, d, "s1.jsonl", ids[0]))
	if got, _ := os.ReadFile(decoy); string(got) != "decoy" {
		t.Errorf("decoy changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(proj+".real", "s1.jsonl")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the real file was not the one moved (%v)", err)
	}
	must(t, e.Finish())
	ms, _, _ := tr.List()
	if len(ms) != 1 || len(ms[0].Files) != 1 {
		t.Fatalf("entry: %+v", ms)
	}
	got, err := os.ReadFile(filepath.Join(f.trashDir, ms[0].ID, "files", ms[0].Files[0].Stored))
	must(t, err)
	if !bytes.Equal(got, f.files[f.rels[0]].data) {
		t.Errorf("trashed %q, want the session's bytes", got)
	}
}

func TestEmptyOlderThan(t *testing.T) {
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	oldID := f.trashAll(t, tr, now.Add(-10*24*time.Hour))
	f.checkGone(t)
	for rel, w := range f.files { // a second session, trashed yesterday
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(f.root, rel)), 0o755))
		must(t, os.WriteFile(filepath.Join(f.root, rel), w.data, w.mode))
	}
	newID := f.trashAll(t, tr, now.Add(-24*time.Hour))
	// and a broken entry (no manifest): its age is unknown
	must(t, os.MkdirAll(filepath.Join(f.trashDir, "20260101T000000Z-deadbeef"), 0o700))

	res, err := tr.Empty(7*24*time.Hour, now, true)
	must(t, err)
	if len(res.Removed) != 1 || res.Removed[0].ID != oldID || res.Kept != 1 {
		t.Fatalf("dry run: %+v", res)
	}
	if ms, _, _ := tr.List(); len(ms) != 2 {
		t.Fatalf("the dry run removed something: %d left", len(ms))
	}
	res, err = tr.Empty(7*24*time.Hour, now, false)
	must(t, err)
	if len(res.Removed) != 1 || res.Removed[0].ID != oldID || len(res.BrokenKept) != 1 {
		t.Fatalf("empty --older-than 7d: %+v", res)
	}
	ms, broken, _ := tr.List()
	if len(ms) != 1 || ms[0].ID != newID || len(broken) != 1 {
		t.Fatalf("left: %+v %+v", ms, broken)
	}
	res, err = tr.Empty(0, now, false)
	must(t, err)
	if len(res.Removed) != 1 || len(res.Broken) != 1 {
		t.Fatalf("empty: %+v", res)
	}
	ents, _ := os.ReadDir(f.trashDir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".trash") {
			t.Errorf("left after empty: %s", e.Name())
		}
	}
}

// Names in the trash are sessctl's, whatever the session is called, and a
// manifest that points out of its root is not followed.
func TestEntryNamesAndManifestPaths(t *testing.T) {
	f := newFixture(t)
	tr := openTrash(t, f.trashDir)
	ps, _ := f.planned(t)
	e, err := tr.Begin(Meta{Kind: KindSession, SessionID: "../../evil\x1b[2J", Main: ps[0].Path, Root: f.root}, ps)
	must(t, err)
	if !ValidID(e.ID()) || strings.Contains(e.ID(), "evil") {
		t.Errorf("entry named %q", e.ID())
	}
	if _, err := tr.Begin(Meta{Root: f.root}, []Planned{{Path: "/etc/passwd", Rel: "../../etc/passwd"}}); err == nil {
		t.Error("a file outside the root was accepted")
	}
	for _, bad := range []string{"../x", "a/b", ".", ""} {
		if _, err := tr.Find(bad); !errors.Is(err, ErrNoEntry) {
			t.Errorf("Find(%q): %v", bad, err)
		}
	}
	e.Rollback()
}
