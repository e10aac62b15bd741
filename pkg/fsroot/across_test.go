package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// MoveNoReplace moves between two handles and never replaces a name, not
// even a symlink's (the symlink is not followed either).
func TestMoveNoReplace(t *testing.T) {
	base := t.TempDir()
	mkfile(t, filepath.Join(base, "a", "f"), "one")
	mkfile(t, filepath.Join(base, "b", "taken"), "two")
	mkfile(t, filepath.Join(base, "outside", "target"), "three")
	if err := os.Symlink(filepath.Join(base, "outside", "target"), filepath.Join(base, "b", "link")); err != nil {
		t.Fatal(err)
	}
	a, err := OpenDir(filepath.Join(base, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenDir(filepath.Join(base, "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, name := range []string{"taken", "link"} {
		if err := MoveNoReplace(a, "f", b, name); !errors.Is(err, fs.ErrExist) {
			t.Errorf("move onto %s: %v, want exists", name, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(base, "outside", "target")); string(got) != "three" {
		t.Errorf("the symlink's target is now %q", got)
	}
	if err := MoveNoReplace(a, "f", b, "new"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(base, "b", "new")); string(got) != "one" || exists(filepath.Join(base, "a", "f")) {
		t.Errorf("after the move: %q, source there: %v", got, exists(filepath.Join(base, "a", "f")))
	}
	if err := MoveNoReplace(a, "../b/new", b, "x"); err == nil {
		t.Error("a name with a slash was taken")
	}
}

func TestMkdirChmodChtimes(t *testing.T) {
	base := t.TempDir()
	d, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Mkdir("sub", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := d.Mkdir("sub", 0o700); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second mkdir: %v", err)
	}
	mkfile(t, filepath.Join(base, "f"), "x")
	if err := d.Chmod("f", 0o640); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2020, 1, 2, 3, 4, 5, 6789, time.UTC)
	if err := d.Chtimes("f", mt, mt); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(base, "f"))
	if err != nil || fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mt) {
		t.Errorf("%v %v %v", fi.Mode(), fi.ModTime(), err)
	}
	if err := os.Symlink(filepath.Join(base, "f"), filepath.Join(base, "l")); err != nil {
		t.Fatal(err)
	}
	if err := d.Chmod("l", 0o777); err == nil {
		t.Error("chmod through a symlink")
	}
	if fi, _ := os.Lstat(filepath.Join(base, "f")); fi.Mode().Perm() != 0o640 {
		t.Errorf("the symlink's target became %v", fi.Mode().Perm())
	}
}
