package stats

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// The results of a run that counts the requests of one-file sessions as
// their files are merged (consume with direct: ConsumptionEach) are those
// of a run whose ledger takes every request, field by field, on the test
// sessions of every agent and the samples but those with rotations; with
// a ledger whose views diverge, and one whose budget makes it spill.
func TestConsumeDirectSame(t *testing.T) {
	roots := testRoots()
	// without rotations: a rotated copy to come makes the ledger match
	// every line, and nothing is counted straight
	var ss []*session.Session
	for _, s := range usage.Distinct(session.Discover(roots, false).Sessions) {
		if !slices.ContainsFunc(s.Files, func(f session.File) bool { return f.Role == session.FileRotation }) {
			ss = append(ss, s)
		}
	}
	for _, budget := range []int{0, 3} {
		prev := usage.SetMemoryBudget(budget)
		t.Cleanup(func() { usage.SetMemoryBudget(prev) })
		run := func(direct bool) (out []*SessionUsage, diverged, spilled bool, held int) {
			out = make([]*SessionUsage, len(ss))
			sc, err := consume(context.Background(), session.Slice(ss), nil, nil, nil, false, direct, func(i int, su *SessionUsage) error {
				out[i] = su
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			diverged, spilled = sc.ledger.Diverged(), sc.ledger.Spilled()
			sc.ledger.Each(func(*usage.Request) error {
				held++
				return nil
			})
			sc.close()
			return out, diverged, spilled, held
		}
		want, diverged, _, all := run(false)
		got, _, spilled, held := run(true)
		usage.SetMemoryBudget(prev)
		if held >= all {
			t.Errorf("budget %d: the ledger held %d requests of %d: none was counted as its file was merged", budget, held, all)
		}
		if !diverged {
			t.Errorf("budget %d: the ledger's views never diverged: the test sessions no longer try the ccusage view", budget)
		}
		if budget > 0 && !spilled {
			t.Errorf("budget %d: the ledger did not spill", budget)
		}
		w, g := memoView(t, want), memoView(t, got)
		for i := range w {
			if g[i] != w[i] {
				t.Errorf("budget %d, session %s:\n got %s\nwant %s", budget, ss[i].ID, g[i], w[i])
			}
		}
	}
}

// A session of several files is counted through the ledger whole, even
// when one of its files could be counted straight: its requests are summed
// in the ledger's order, which counting one file as it is merged would
// change. Here the subagent's costs, counted before its main file's, would
// give another sum.
func TestConsumeDirectOneFileOnly(t *testing.T) {
	const id = "0d1ec700-1111-4111-8111-111111111111"
	line := func(keys string, cost string, sidechain bool) string {
		return `{"parentUuid":null,"isSidechain":` + fmt.Sprint(sidechain) + `,"message":{` + keys + `"model":"claude-opus-4-8","role":"assistant","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":1,"output_tokens":1}},"costUSD":` + cost + `,"type":"assistant","uuid":"u","timestamp":"2026-11-01T10:00:00.000Z","sessionId":"` + id + `","version":"2.1.197"}`
	}
	root := writeStore(t, map[string][]string{
		"projects/-w/" + id + ".jsonl":                    {line(`"id":"msg_1",`, "1e-16", false)},
		"projects/-w/" + id + "/subagents/agent-a1.jsonl": {line("", "1e-16", true), line("", "1", true)},
	})
	ss := session.Discover([]session.Root{{Path: root}}, false).Sessions
	if len(ss) != 1 {
		t.Fatalf("%d sessions", len(ss))
	}
	var got *SessionUsage
	sc, err := consume(context.Background(), session.Slice(ss), nil, nil, nil, false, true, func(_ int, su *SessionUsage) error {
		got = su
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sc.close()
	if len(got.Files) != 2 || got.Totals.Requests != 3 {
		t.Fatalf("%d files, %d requests; want 2, 3", len(got.Files), got.Totals.Requests)
	}
	// 1e-16 + 1e-16 + 1, in the order of the files
	if want := 1e-16 + 1e-16 + 1.0; got.Totals.CostUSD != want {
		t.Errorf("cost %v, want %v", got.Totals.CostUSD, want)
	}
}

// testRoots are the test sessions of every agent, the samples when they
// are there (../shared/samples), and more.
func testRoots(more ...session.Root) []session.Root {
	roots := []session.Root{{Path: "../../testdata/sessions"}, {Path: "../../testdata/claude-2.1.330"},
		{Path: "../../testdata/kimi-code-2.1.0"}}
	roots = append(roots, more...)
	if _, err := os.Stat("../../../shared/samples"); err == nil {
		roots = append(roots, session.Root{Path: "../../../shared/samples"})
	}
	return roots
}
