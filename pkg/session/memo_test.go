package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// A memo gives back a session's value in the next run while its files are
// as they were, and not once one changed; it is stored again only when
// something changed, keeps only the sessions of the run that stored it,
// and a damaged one is empty.
func TestMemoKeptWhileFilesAreTheSame(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("memos are kept on Linux only")
	}
	root := t.TempDir()
	proj := filepath.Join(root, "projects", "-p")
	os.MkdirAll(proj, 0o755)
	for i := range 5 {
		id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
		os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte(`{"type":"user","sessionId":"`+id+`","message":{"role":"user","content":"hi"},"uuid":"u","timestamp":"2026-11-01T10:00:00Z"}`+"\n"), 0o600)
	}
	roots := []session.Root{{Path: root, Agent: session.Claude}}
	discover := func() []*session.Session { return session.Discover(roots, false).Sessions }
	c := &memCache{snaps: map[string][]byte{}}

	m := session.LoadMemo(c, "test", roots)
	ss := discover()
	if len(ss) != 5 {
		t.Fatalf("%d sessions, want 5", len(ss))
	}
	for _, s := range ss {
		if _, ok := m.Get(s, ""); ok {
			t.Fatal("a value from an empty memo")
		}
		m.Put(s, "", "v:"+s.ID)
	}
	m.Save(c)
	if c.saves != 1 {
		t.Fatalf("%d saves, want 1", c.saves)
	}

	m = session.LoadMemo(c, "test", roots)
	for _, s := range discover() {
		if v, ok := m.Get(s, ""); !ok || v != "v:"+s.ID {
			t.Fatalf("%s: %q %v, want its value", s.ID, v, ok)
		}
		if _, ok := m.Get(s, "other salt"); ok {
			t.Fatal("a value for another salt")
		}
	}
	m.Save(c)
	if c.saves != 1 {
		t.Fatal("a memo that did not change was stored again")
	}
	if m := session.LoadMemo(c, "other", roots); m != nil {
		if _, ok := m.Get(ss[0], ""); ok {
			t.Fatal("a value from another memo's name")
		}
	}

	// one file grows: its session's value is gone, the others stay
	grown := ss[0]
	f, _ := os.OpenFile(grown.Main, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n")
	f.Close()
	m = session.LoadMemo(c, "test", roots)
	ss = discover()
	for _, s := range ss {
		_, ok := m.Get(s, "")
		if ok == (s.Main == grown.Main) {
			t.Fatalf("%s: value given %v after the grown file", s.ID, ok)
		}
	}
	// a run that saw only two sessions keeps only those
	m = session.LoadMemo(c, "test", roots)
	m.Get(ss[1], "")
	m.Put(ss[2], "", "new")
	m.Save(c)
	m = session.LoadMemo(c, "test", roots)
	for i, s := range ss {
		v, ok := m.Get(s, "")
		if want := i == 1 || i == 2; ok != want || i == 2 && v != "new" {
			t.Fatalf("session %d: %q %v after a run that saw sessions 1 and 2", i, v, ok)
		}
	}
	// damaged
	for k, b := range c.snaps {
		c.snaps[k] = b[:len(b)-1]
	}
	m = session.LoadMemo(c, "test", roots)
	if _, ok := m.Get(ss[1], ""); ok {
		t.Fatal("a value from a damaged memo")
	}
}
