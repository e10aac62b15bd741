package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func mkfile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// A Dir names the directory it opened: once its path is swapped for a
// symlink to another directory, removing through it still removes in the
// original, and the decoy behind the symlink stays.
func TestDirIsNotRedirectedBySwappedPath(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "root", "proj")
	decoy := filepath.Join(base, "outside")
	mkfile(t, filepath.Join(real, "s.jsonl"), "mine\n")
	mkfile(t, filepath.Join(decoy, "s.jsonl"), "decoy\n")
	root, err := OpenDir(filepath.Join(base, "root"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	d, err := root.OpenDir("proj")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	before, err := d.Lstat("s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// the swap
	if err := os.Rename(real, real+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(decoy, real); err != nil {
		t.Fatal(err)
	}
	after, err := d.Lstat("s.jsonl")
	if err != nil || !after.Same(before) {
		t.Fatalf("the handle now sees another file: %+v %v", after, err)
	}
	if err := d.Remove("s.jsonl"); err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(decoy, "s.jsonl")) {
		t.Fatal("the decoy behind the symlink was removed")
	}
	if exists(filepath.Join(real+".away", "s.jsonl")) {
		t.Fatal("the file in the opened directory is still there")
	}
	// and a new walk from the root refuses the symlink
	if _, err := root.OpenDir("proj"); !errors.Is(err, ErrSymlink) {
		t.Fatalf("OpenDir through a symlink: %v, want ErrSymlink", err)
	}
}

func TestOpenDirRefusesEscapes(t *testing.T) {
	base := t.TempDir()
	mkfile(t, filepath.Join(base, "a", "b", "f"), "x")
	if err := os.Symlink(filepath.Join(base, "a"), filepath.Join(base, "a", "b", "up")); err != nil {
		t.Fatal(err)
	}
	root, err := OpenDir(filepath.Join(base, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, rel := range []string{"../a", "b/../..", "/tmp", "b/up", "b/up/b"} {
		if d, err := root.OpenDir(rel); err == nil {
			d.Close()
			t.Errorf("OpenDir(%q) succeeded", rel)
		}
	}
	d, err := root.OpenDir("b")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"", ".", "..", "x/y"} {
		if _, err := d.Lstat(name); err == nil {
			t.Errorf("Lstat(%q) accepted", name)
		}
		if err := d.Remove(name); err == nil {
			t.Errorf("Remove(%q) accepted", name)
		}
	}
}

// RemoveDir removes only an empty directory, never a file and never
// through a symlink; Remove never removes a directory.
func TestRemoveKinds(t *testing.T) {
	base := t.TempDir()
	mkfile(t, filepath.Join(base, "file"), "x")
	os.Mkdir(filepath.Join(base, "empty"), 0o755)
	mkfile(t, filepath.Join(base, "full", "f"), "x")
	os.Mkdir(filepath.Join(base, "target"), 0o755)
	os.Symlink(filepath.Join(base, "target"), filepath.Join(base, "link"))
	d, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"file", "full", "link"} {
		if err := d.RemoveDir(name); err == nil {
			t.Errorf("RemoveDir(%s) succeeded", name)
		}
	}
	if err := d.Remove("empty"); err == nil {
		t.Error("Remove removed a directory")
	}
	if err := d.RemoveDir("empty"); err != nil {
		t.Error(err)
	}
	if !exists(filepath.Join(base, "target")) || !exists(filepath.Join(base, "file")) || !exists(filepath.Join(base, "full", "f")) {
		t.Error("something else was removed")
	}
	// Remove of a symlink removes the link, not its target
	if err := d.Remove("link"); err != nil || !exists(filepath.Join(base, "target")) {
		t.Errorf("Remove(link): %v", err)
	}
}

// Named pipes and devices are refused at once (a FIFO without a writer would
// block open forever), symlinks too where a name is opened in a Dir.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	base := t.TempDir()
	fifo := filepath.Join(base, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no mkfifo here:", err)
	}
	mkfile(t, filepath.Join(base, "f.jsonl"), "{}\n")
	os.Symlink(filepath.Join(base, "f.jsonl"), filepath.Join(base, "link.jsonl"))
	for _, p := range []string{fifo, "/dev/zero", base} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		f, err := OpenRegular(p)
		if err == nil {
			f.Close()
			t.Errorf("OpenRegular(%s) succeeded", p)
			continue
		}
		var nr *NotRegularError
		if !errors.As(err, &nr) || !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRegular(%s): %v, want a NotRegularError", p, err)
		}
	}
	d, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, name := range []string{"fifo", "link.jsonl"} {
		if f, err := d.Open(name); !errors.Is(err, ErrNotRegular) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Dir.Open(%s): %v, want ErrNotRegular", name, err)
		}
	}
	f, err := d.Open("f.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 8)
	if n, err := f.Read(b); err != nil || string(b[:n]) != "{}\n" {
		t.Fatalf("read %q %v", b[:n], err)
	}
}

func TestLinkReservesAndCreateIsExclusive(t *testing.T) {
	base := t.TempDir()
	mkfile(t, filepath.Join(base, "a"), "x")
	mkfile(t, filepath.Join(base, "b"), "y")
	d, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Link("a", "b"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Link onto an existing name: %v", err)
	}
	if _, err := d.Create("b", 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create of an existing name: %v", err)
	}
	if err := d.Link("a", "c"); err != nil {
		t.Fatal(err)
	}
	a, _ := d.Lstat("a")
	c, _ := d.Lstat("c")
	if !a.SameFile(c) || a.Nlink != 2 {
		t.Fatalf("link: %+v %+v", a, c)
	}
}

// SetModTime sets the mtime to the nanosecond, leaves the atime, and does
// not follow a symlink.
func TestSetModTime(t *testing.T) {
	root := t.TempDir()
	mkfile(t, filepath.Join(root, "f"), "x")
	mkfile(t, filepath.Join(root, "target"), "y")
	if err := os.Symlink("target", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	atime := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, n := range []string{"f", "target"} {
		if err := os.Chtimes(filepath.Join(root, n), atime, atime); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 123456789, time.UTC)
	if err := d.SetModTime("f", mtime); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(mtime) {
		t.Errorf("mtime %v, want %v", fi.ModTime(), mtime)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(root, "f"), &st); err != nil {
		t.Fatal(err)
	}
	if !time.Unix(st.Atim.Unix()).Equal(atime) {
		t.Errorf("atime changed to %v", time.Unix(st.Atim.Unix()))
	}
	if err := d.SetModTime("link", mtime); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "target")); !fi.ModTime().Equal(atime) {
		t.Errorf("the symlink's target got mtime %v", fi.ModTime())
	}
	if err := d.SetModTime("../f", mtime); err == nil {
		t.Error("a name leading out of the directory was accepted")
	}
}
