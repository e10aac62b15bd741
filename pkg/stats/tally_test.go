package stats

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// A scan that lets its sessions go (release) tallies the sessions one at a
// time as the merge completes them (tallyEach), in the order the files
// were merged, and gives the same result for every session as the scan
// that tallies them all at once (tallyAll, in the order of their places):
// sessions of several files (subagents, rotated copies, merged last),
// messages a fork shares with the session it came from (its copy wins
// some and loses others, so that a session's requests come in another
// session's place), sessions with no request, and every agent's test
// sessions; with the ledger in memory and spilled to disk.
func TestTallyEachSameAsAll(t *testing.T) {
	const id = "%08d-1111-4111-8111-111111111111"
	store := map[string][]string{}
	for i := range 8 {
		var lines []string
		for n := range 4 {
			lines = append(lines, claudeLine(fmt.Sprintf("msg_%d_%d", i, n), fmt.Sprintf("req_%d_%d", i, n), 100*i+n+1))
		}
		store[fmt.Sprintf("projects/-w/"+id+".jsonl", i)] = lines
	}
	// session 1's subagent
	store[fmt.Sprintf("projects/-w/"+id+"/subagents/agent-a1.jsonl", 1)] = []string{claudeLine("msg_1_sub", "req_1_sub", 77)}
	// session 9 copies two messages of session 0 (one with more tokens, one
	// with fewer) and one of session 7; session 10 holds no request
	fork := []string{
		claudeLine("msg_0_0", "req_0_0", 5000),
		claudeLine("msg_0_1", "req_0_1", 0),
		claudeLine("msg_7_3", "req_7_3", 9000),
		claudeLine("msg_9_0", "req_9_0", 3),
	}
	store[fmt.Sprintf("projects/-w/"+id+".jsonl", 9)] = fork
	store[fmt.Sprintf("projects/-w/"+id+".jsonl", 10)] = []string{`{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-11-01T10:00:00.000Z","sessionId":"s"}`}
	forks := writeStore(t, store)
	// session 2's rotated copy, with a message only it holds: ccusage does
	// not read rotations, and the views diverge (tallyAll)
	store[fmt.Sprintf("projects/-w/"+id+".jsonl.1", 2)] = append(slices.Clone(store[fmt.Sprintf("projects/-w/"+id+".jsonl", 2)][:2]),
		claudeLine("msg_2_gone", "req_2_gone", 55))
	rotations := writeStore(t, store)

	for _, set := range []struct {
		name  string
		roots []session.Root
		each  int // 1: the views agree (tallyEach), 0: they do not, -1: either
	}{
		{"forks", []session.Root{{Path: forks}}, 1},
		{"rotations", []session.Root{{Path: rotations}}, 0},
		{"claude", []session.Root{{Path: claudeStore(t, 30, 8<<10)}}, 1},
		{"every agent", testRoots(), -1},
	} {
		ss := usage.Distinct(session.Discover(set.roots, false).Sessions)
		for _, budget := range []int{0, 3} {
			t.Run(fmt.Sprintf("%s/budget %d", set.name, budget), func(t *testing.T) {
				if budget > 0 {
					defer usage.SetMemoryBudget(usage.SetMemoryBudget(budget))
				}
				run := func(release bool) (views []string, order []int) {
					t.Helper()
					views = make([]string, len(ss))
					sc, err := consume(context.Background(), session.Slice(slices.Clone(ss)), nil, nil, nil, release, true, func(i int, su *SessionUsage) error {
						if views[i] != "" {
							t.Fatalf("session %d given twice", i)
						}
						views[i] = memoView(t, []*SessionUsage{su})[0]
						order = append(order, i)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					sc.close()
					return views, order
				}
				want, inPlace := run(false)
				before := eachRuns.Load()
				got, order := run(true)
				if each := eachRuns.Load() > before; set.each >= 0 && each != (set.each == 1) {
					t.Errorf("tallied each: %v, want %v", each, set.each == 1)
				}
				if !slices.IsSorted(inPlace) || len(inPlace) != len(ss) {
					t.Fatalf("tallyAll gave %d sessions in the order %v", len(inPlace), inPlace)
				}
				if len(order) != len(ss) {
					t.Fatalf("%d of %d sessions given", len(order), len(ss))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("session %d (%s):\n got %s\nwant %s", i, ss[i].Main, got[i], want[i])
					}
				}
			})
		}
	}
}
