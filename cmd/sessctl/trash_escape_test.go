package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Session text in a trash manifest (the session id, the paths) reaches the
// terminal escaped, like every other output; so does an entry's name.
func TestTrashLsEscapesSessionText(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("NO_COLOR", "1")
	id := "20260101T000000Z-0badc0de"
	dir := filepath.Join(home, ".local", "share", "sessctl", "trash", id)
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o700); err != nil {
		t.Fatal(err)
	}
	manifest := `{"version":1,"id":"` + id + `","kind":"session","agent":"claude\u001b[31m","session_id":"evil\u001b[2J\u0007",` +
		`"main":"/tmp/x/\u001b]0;title\u0007.jsonl","root":"/tmp/x","trashed_at":"2026-01-01T00:00:00Z","complete":true,` +
		`"files":[{"path":"/tmp/x/\u001b]0;title\u0007.jsonl","rel":"a.jsonl","stored":"0","size":3,"mode":420,"mtime":"2026-01-01T00:00:00Z"}]}`
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"trash", "ls"}, {"trash", "empty", "--dry-run"}} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
		if strings.ContainsAny(out+errOut, "\x1b\x07") {
			t.Errorf("%v printed a raw control character: %q", args, out)
		}
		if !strings.Contains(out, "evil") {
			t.Errorf("%v: the entry is not listed: %q", args, out)
		}
	}
}
