package session

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// sortSessions puts sessions newest first, by main file among equal
// times, whatever order they come in: the order a sort of (time, session)
// pairs by those two keys gives, which is what it was written as first.
func TestSortSessions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for round := range 300 {
		n := rng.IntN(60)
		ss := make([]*Session, n)
		for i := range ss {
			// few distinct times and names, so that ties are common;
			// some sessions have no time at all, some a lock file alone
			var files []File
			for range rng.IntN(3) {
				mt := base.Add(time.Duration(rng.IntN(4))*time.Second + time.Duration(rng.IntN(3)))
				name := fmt.Sprintf("/s/%d.jsonl", rng.IntN(4))
				if rng.IntN(5) == 0 {
					name = "/s/.x" + lockSuffix
				}
				files = append(files, File{Path: name, ModTime: mt})
			}
			ss[i] = &Session{Main: fmt.Sprintf("/s/%d.jsonl", rng.IntN(5)), Files: files}
		}
		if rng.IntN(4) == 0 {
			refSort(ss) // in order already
		}
		want := slices.Clone(ss)
		refSort(want)
		got := slices.Clone(ss)
		sortSessions(got)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d: place %d holds %s %v, want %s %v", round, i, got[i].Main, got[i].Updated(), want[i].Main, want[i].Updated())
			}
		}
	}
}

// refSort is the sort of (time, session) pairs.
func refSort(ss []*Session) {
	type keyed struct {
		t time.Time
		s *Session
	}
	ks := make([]keyed, len(ss))
	for i, s := range ss {
		ks[i] = keyed{s.Updated(), s}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if c := b.t.Compare(a.t); c != 0 {
			return c
		}
		return strings.Compare(a.s.Main, b.s.Main)
	})
	for i := range ks {
		ss[i] = ks[i].s
	}
}
