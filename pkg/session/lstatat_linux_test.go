//go:build linux && (amd64 || arm64)

package session

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// lstatAt gives what os.Lstat gives: name, size, mode (type and
// permission bits), time, and the device and inode, for a file, a
// directory, a symlink, a named pipe and a file that is not there.
func TestLstatAtIsLstat(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.jsonl"), []byte("{}\n"), 0o640)
	os.Mkdir(filepath.Join(dir, "d"), 0o750)
	os.Symlink("f.jsonl", filepath.Join(dir, "l.jsonl"))
	syscall.Mkfifo(filepath.Join(dir, "p"), 0o600)
	os.Chmod(filepath.Join(dir, "f.jsonl"), 0o640|os.ModeSetgid)
	h, ok := openDir(dir)
	if !ok {
		t.Fatal("openDir failed")
	}
	defer h.close()
	for _, name := range []string{"f.jsonl", "d", "l.jsonl", "p"} {
		want, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.lstatAt(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("%s: %v %v %v %v, want %v %v %v %v", name, got.Name(), got.Size(), got.Mode(), got.ModTime(),
				want.Name(), want.Size(), want.Mode(), want.ModTime())
		}
		if fileOf("x", FileMain, got) != fileOf("x", FileMain, want) {
			t.Errorf("%s: File %+v, want %+v", name, fileOf("x", FileMain, got), fileOf("x", FileMain, want))
		}
	}
	if _, err := h.lstatAt(dir, "gone"); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v", err)
	}
}
