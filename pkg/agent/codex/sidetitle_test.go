package codex

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestSideTitleReadsTheIndexOnce: listing many sessions of one Codex home
// reads its session_index.jsonl once, not once per session, and sees a
// rename appended later.
func TestSideTitleReadsTheIndexOnce(t *testing.T) {
	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "11", "26")
	if err := os.MkdirAll(day, 0o755); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(home, "session_index.jsonl")
	write := func(s string) {
		f, err := os.OpenFile(index, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	write(`{"id":"a","thread_name":"first","updated_at":"x"}` + "\n" +
		`{"id":"b","thread_name":"second"}` + "\n" +
		`{"id":"a","thread_name":"first, renamed"}` + "\n" +
		`{"id":"c","thread_name":""}` + "\n")
	threadNames = nameCache{}
	want := map[string]string{"a": "first, renamed", "b": "second", "c": "", "d": ""}
	for _, id := range []string{"a", "b", "c", "d"} {
		s := &session.Session{ID: id, Main: filepath.Join(day, "rollout-"+id+".jsonl")}
		name, src := Home{}.SideTitle(s)
		if name != want[id] || src != "thread_name" {
			t.Errorf("%s: %q %q, want %q", id, name, src, want[id])
		}
	}
	if threadNames.loads != 1 {
		t.Errorf("the index was read %d times for four sessions", threadNames.loads)
	}
	write(`{"id":"b","thread_name":"second, renamed"}` + "\n")
	os.Chtimes(index, time.Now().Add(time.Second), time.Now().Add(time.Second))
	s := &session.Session{ID: "b", Main: filepath.Join(day, "rollout-b.jsonl")}
	if name, _ := (Home{}).SideTitle(s); name != "second, renamed" {
		t.Errorf("after a rename: %q", name)
	}
	// no index above the rollout: no title, no source
	s = &session.Session{ID: "a", Main: filepath.Join(t.TempDir(), "x", "rollout-a.jsonl")}
	if name, src := (Home{}).SideTitle(s); name != "" || src != "" {
		t.Errorf("without an index: %q %q", name, src)
	}
}
