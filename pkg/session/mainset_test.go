package session

import (
	"fmt"
	"testing"
)

// A hash that matches is not enough: the session's main file is compared,
// and the probe goes on past a slot whose session is another's.
func TestMainSetComparesOnMatch(t *testing.T) {
	var m mainSet
	var ss []*Session
	for i := range 5000 {
		p := fmt.Sprintf("/store/p%d/%d.jsonl", i%7, i)
		if m.has(p, mainOf(ss)) {
			t.Fatalf("%s taken before it was", p)
		}
		m.take(p, len(ss))
		ss = append(ss, &Session{Main: p})
		if !m.has(p, mainOf(ss)) {
			t.Fatalf("%s not taken", p)
		}
	}
	if !m.has("/store/p3/10.jsonl", mainOf(ss)) || m.has("/store/p3/5000.jsonl", mainOf(ss)) {
		t.Fatal("a path taken is not there, or one not taken is")
	}
	// every slot's session swapped for another path with the same hash
	// kept: only the comparison can tell
	for i := range ss {
		ss[i] = &Session{Main: ss[i].Main + ".other"}
	}
	for i := range 5000 {
		if p := fmt.Sprintf("/store/p%d/%d.jsonl", i%7, i); m.has(p, mainOf(ss)) {
			t.Fatalf("%s taken by its hash alone", p)
		}
	}
}

func mainOf(ss []*Session) func(int) string { return func(at int) string { return ss[at].Main } }
