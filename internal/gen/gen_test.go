package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = b
		}
		return nil
	})
	return out
}

// The same flags give the same bytes; another seed gives other bytes.
func TestDeterministic(t *testing.T) {
	for _, kind := range []string{"claude", "codex", "kimicode"} {
		var trees []map[string][]byte
		for i, seed := range []string{"7", "7", "8"} {
			dir := filepath.Join(t.TempDir(), kind+seed+string(rune('a'+i)))
			if err := run([]string{kind, "-out", dir, "-size", "300KB", "-files", "4", "-seed", seed, "-quirks"}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			trees = append(trees, tree(t, dir))
		}
		if len(trees[0]) < 4 {
			t.Fatalf("%s: %d files", kind, len(trees[0]))
		}
		var size int
		for name, b := range trees[0] {
			size += len(b)
			if !bytes.Equal(b, trees[1][name]) {
				t.Errorf("%s: %s differs between two runs with the same seed", kind, name)
			}
		}
		if size < 200<<10 || size > 600<<10 {
			t.Errorf("%s: %d bytes for -size 300KB", kind, size)
		}
		same := 0
		for name, b := range trees[0] {
			if bytes.Equal(b, trees[2][name]) {
				same++
			}
		}
		if same == len(trees[0]) {
			t.Errorf("%s: seed 8 gave the same corpus as seed 7", kind)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"claude"}, {"claude", "-out", t.TempDir(), "-size", "big"}, {"codex", "-out", t.TempDir(), "-files", "0"}} {
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}
