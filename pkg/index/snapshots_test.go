package index

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readAll(t *testing.T, ix *Index, key string) ([]byte, error, bool) {
	t.Helper()
	rc := ix.LoadSnapshot(key)
	if rc == nil {
		return nil, nil, false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return b, err, true
}

// A snapshot reads back as written; one cut short, with a byte changed, or
// written by another build is an error or none; only the maxSnaps newest
// are kept; a nil index keeps none.
func TestSnapshotsStoredAndChecked(t *testing.T) {
	dir := t.TempDir()
	ix := Open(dir)
	if ix == nil {
		t.Fatal("no index")
	}
	defer ix.Close()
	body := []byte(strings.Repeat("snapshot body ", 10000))
	save := func(key string, b []byte) {
		ix.SaveSnapshot(key, func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	save("k", body)
	if b, err, ok := readAll(t, ix, "k"); !ok || err != nil || !bytes.Equal(b, body) {
		t.Fatalf("read back: ok %v, err %v, %d bytes, want %d", ok, err, len(b), len(body))
	}
	if _, _, ok := readAll(t, ix, "other"); ok {
		t.Fatal("a key never stored has a snapshot")
	}
	p := ix.snapPath("k")
	whole, _ := os.ReadFile(p)
	damages := map[string][]byte{
		"cut in the body":    whole[:len(whole)/2],
		"cut in the trailer": whole[:len(whole)-3],
		"a byte changed":     append(bytes.Clone(whole[:len(whole)/2]), append([]byte{whole[len(whole)/2] ^ 1}, whole[len(whole)/2+1:]...)...),
		"a byte added":       append(bytes.Clone(whole), 0),
		"another build":      bytes.Replace(whole, ix.stamp, bytes.Repeat([]byte{'x'}, len(ix.stamp)), 1),
		"empty":              nil,
	}
	for what, b := range damages {
		os.WriteFile(p, b, 0o600)
		if got, err, ok := readAll(t, ix, "k"); ok && err == nil {
			t.Fatalf("%s: read without an error (%d bytes)", what, len(got))
		}
	}
	// a write that fails leaves the snapshot before it
	os.WriteFile(p, whole, 0o600)
	ix.SaveSnapshot("k", func(w io.Writer) error { w.Write([]byte("part")); return io.ErrShortWrite })
	if b, err, _ := readAll(t, ix, "k"); err != nil || !bytes.Equal(b, body) {
		t.Fatalf("after a failed write: err %v, %d bytes", err, len(b))
	}
	for i := range maxSnaps + 3 {
		time.Sleep(5 * time.Millisecond)
		save(fmt.Sprint("n", i), []byte{byte(i)})
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, snapPrefix+"*"))
	if len(snaps) != maxSnaps {
		t.Fatalf("%d files kept, want %d: %v", len(snaps), maxSnaps, snaps)
	}
	if _, _, ok := readAll(t, ix, fmt.Sprint("n", maxSnaps+2)); !ok {
		t.Fatal("the newest snapshot is gone")
	}
	if _, _, ok := readAll(t, ix, "k"); ok {
		t.Fatal("the oldest snapshot is kept")
	}
	var nilIx *Index
	nilIx.SaveSnapshot("k", func(w io.Writer) error { return nil })
	if nilIx.LoadSnapshot("k") != nil {
		t.Fatal("a nil index has a snapshot")
	}
}
