package rewrite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// The next rewrite of a session removes what a kill -9 of an earlier one left
// (a temp file of a process that is gone, an empty rotation placeholder, a
// rotation that is a second name of the live file), says so, and leaves a
// temp file whose process still runs.
func TestBeginRemovesStaleLeftovers(t *testing.T) {
	p := setup(t)
	dir := filepath.Dir(p)
	old := time.Now().Add(-time.Hour)
	mk := func(name, content string) {
		q := filepath.Join(dir, name)
		if err := os.WriteFile(q, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(q, old, old)
	}
	dead := ".sessctl-tmp-context.jsonl-2147483647-0123456789ab" // no process has this pid
	running := fmt.Sprintf(".sessctl-tmp-context.jsonl-%d-0123456789ab", os.Getppid())
	mk(dead, strings.Repeat("x", 1000))
	mk(running, "partial")
	mk("context_1.jsonl", "")
	if err := os.Link(p, filepath.Join(dir, "context_2.jsonl")); err != nil {
		t.Fatal(err)
	}
	tx, err := Begin(context.Background(), p, session.Kimi, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	var removed []string
	for _, l := range tx.Leftovers {
		removed = append(removed, filepath.Base(l.Path))
	}
	if strings.Join(removed, " ") != dead+" context_1.jsonl context_2.jsonl" {
		t.Fatalf("removed %v", removed)
	}
	for _, name := range []string{dead, "context_1.jsonl", "context_2.jsonl"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s is still there", name)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, running)); err != nil {
		t.Errorf("the temp file of a running process was removed")
	}
	res, err := tx.Replace(context.Background(), keepFirstLine)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(res.Rotation.Path); string(b) != original {
		t.Fatalf("rotation %q", b)
	}
	notes := tx.Notes(res)
	if len(notes) != 3 || !strings.Contains(notes[0], "removed "+filepath.Join(dir, dead)) || !strings.Contains(notes[0], "process 2147483647 that made it is gone") {
		t.Fatalf("notes %q", notes)
	}
}
