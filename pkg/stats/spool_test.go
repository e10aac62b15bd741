package stats

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// spoolSample is a session result with every field set but the requests.
func spoolSample() *SessionUsage {
	at := time.UnixMilli(1_790_000_000_123)
	tot := func(v usage.View, n int64) usage.Totals {
		return usage.Totals{View: v, Usage: session.Usage{Input: n, Output: 2 * n, CacheRead: 3, CacheCreation: 4, Reasoning: 5, CacheCreation1h: 1},
			Requests: 7, ByModel: usage.ByModel{{Model: "a", Usage: session.Usage{Input: n, Reasoning: -1}}, {Model: "b"}},
			LastActivity: at, CostUSD: 0.1 + 0.2, Unpriced: map[string]int64{"x": 9, "y": 0}}
	}
	rot := tot(usage.ViewSessctl, 0)
	ccu := tot(usage.ViewCCUsage, 11)
	return &SessionUsage{Agent: "claude", ID: "id", Project: "p", CWD: "/w", Main: "/m.jsonl", Files: []string{"/m.jsonl", "/s.jsonl"},
		Totals: tot(usage.ViewSessctl, 10), InRotations: &rot, AsCCUsage: &ccu, PerResponse: 1, PerResponseView: 2,
		CumulativeView: 3, ViewsDiffer: "why", UsageLines: 4, Rejected: 5,
		RejectedLines: []FileDrop{{"/m.jsonl", usage.Drop{Line: 3, Reason: "r"}}}, SessctlOnly: 6,
		SessctlLines: []FileDrop{{"/m.jsonl", usage.Drop{Line: 4, Reason: "s"}}}, CCUsageOnly: 7, Corrupt: 8,
		Errors: []string{"e"}, Context: -9, ContextSource: "src", Window: 10, ccusageView: true}
}

// A session written to a Spool reads back as it was, down to a time's
// zone, a cost's last bit and an empty list that is not nil; every field
// of SessionUsage but its requests is carried, so a field added to it
// fails here until the Spool carries it.
func TestSpoolRoundTrip(t *testing.T) {
	su := spoolSample()
	notCarried := map[string]bool{"src": true, "ledger": true}
	v := reflect.ValueOf(su).Elem()
	for i := range v.NumField() {
		if f := v.Type().Field(i); !notCarried[f.Name] && v.Field(i).IsZero() {
			t.Errorf("the sample leaves SessionUsage.%s zero: set it, and carry it in the Spool", f.Name)
		}
	}
	// the second: zero values, an empty file list, its ccusage view its
	// totals (a mark on disk), and no zone's time
	same := su.Totals
	same.View = usage.ViewCCUsage
	su2 := &SessionUsage{Agent: "codex", ID: "id2", Files: []string{}, Totals: su.Totals, AsCCUsage: &same}
	su2.Totals.LastActivity = time.Time{}
	same.LastActivity = time.Time{}
	su3 := &SessionUsage{Agent: "kimi", ID: "id3"}
	// in memory, on disk from the first, and moved to disk after the
	// first
	one := len(appendSessionUsage(nil, su))
	for _, mem := range []int{4 << 20, 0, one} {
		old := SpoolMemory
		SpoolMemory = mem
		sp := NewSpool()
		for _, s := range []*SessionUsage{su, su2, su3} {
			if err := sp.Add(s); err != nil {
				t.Fatal(err)
			}
		}
		SpoolMemory = old
		if onDisk := mem < 2*one; sp.onDisk != onDisk {
			t.Errorf("SpoolMemory %d: on disk %v, want %v", mem, sp.onDisk, onDisk)
		}
		for k, want := range []*SessionUsage{su, su2, su3} {
			got, err := sp.Session(k)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("SpoolMemory %d, session %d:\n got %+v\nwant %+v", mem, k, got, want)
			}
			// the totals alone, as a row by session reads them
			if tot, err := sp.Totals(k); err != nil || !reflect.DeepEqual(tot, want.Totals) {
				t.Errorf("SpoolMemory %d, session %d: Totals %+v, %v\nwant %+v", mem, k, tot, err, want.Totals)
			}
		}
		sp.Close()
	}
	sp := NewSpool()
	defer sp.Close()
	sp.Add(su)
	if b := appendSessionUsage(nil, su2); len(b) >= len(appendSessionUsage(nil, &SessionUsage{Agent: "codex", ID: "id2", Files: []string{}, Totals: su.Totals, AsCCUsage: su.AsCCUsage})) {
		t.Error("a ccusage view equal to the totals takes as much room as another")
	}
	if got, _ := sp.Session(0); got.Totals.LastActivity.Location() != su.Totals.LastActivity.Location() {
		t.Errorf("time zone %v, want %v", got.Totals.LastActivity.Location(), su.Totals.LastActivity.Location())
	}
	// a truncated record is an error, not a session
	b := appendSessionUsage(nil, su)
	for _, n := range []int{0, 1, len(b) / 2, len(b) - 1} {
		if _, err := readSessionUsage(b[:n]); err == nil {
			t.Errorf("%d of %d bytes read as a session", n, len(b))
		}
	}
}

// Spool.Groups gives the rows Group by session gives over the same
// sessions, in the same order: ties of totals ordered by key, an id found
// twice one row of both, agents one of which begins another's name.
func TestSpoolGroupsAsGroup(t *testing.T) {
	mk := func(agent session.Agent, id string, in int64) *SessionUsage {
		return &SessionUsage{Agent: agent, ID: id, Files: []string{},
			Totals: usage.Totals{View: usage.ViewSessctl, Usage: session.Usage{Input: in}, Requests: 1,
				ByModel: usage.ByModel{{Model: "m", Usage: session.Usage{Input: in}}}}}
	}
	sus := []*SessionUsage{mk("claude", "b", 5), mk("kimi", "z", 5), mk("kimicode", "a", 5), mk("claude", "a", 9),
		mk("codex", "d", 3), mk("claude", "b", 4), mk("kimi", "a", 0), mk("kimi-x", "a", 0)}
	want, err := Group(sus, BySession, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	sp := NewSpool()
	defer sp.Close()
	for _, su := range sus {
		if err := sp.Add(su); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sp.Groups()
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != want.Len() || want.Len() != len(sus)-1 {
		t.Fatalf("%d rows, want %d (of %d sessions, one id twice)", got.Len(), want.Len(), len(sus))
	}
	for i := range want.Len() {
		if g, w := got.Row(i), want.Row(i); !reflect.DeepEqual(g, w) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if got.Err() != nil {
		t.Error(got.Err())
	}
}

// A ManyReport's sums do not depend on the order its results come in
// (the memo gives them by main file): costs, whose floating-point sums
// depend on their order, are summed in the order of the sessions' places,
// as a loop over the list of results in that order sums them; and its
// rows by project are Group's.
func TestManyReportOrder(t *testing.T) {
	costs := []float64{0.1, 1e16, 0.2, -1e16, 0.3, 0.7, 1.0 / 3}
	var sus []*SessionUsage
	for i, c := range costs {
		tot := usage.Totals{View: usage.ViewSessctl, Usage: session.Usage{Input: int64(i + 1)}, Requests: 1, CostUSD: c,
			ByModel: usage.ByModel{{Model: "m", Usage: session.Usage{Input: int64(i + 1)}}}}
		ccu := tot
		ccu.View = usage.ViewCCUsage
		sus = append(sus, &SessionUsage{Agent: "claude", ID: string(rune('a' + i)), Project: []string{"p", "q"}[i%2],
			Files: []string{}, Totals: tot, AsCCUsage: &ccu, InRotations: &tot})
	}
	// what a loop over the list in order sums
	want := usage.Totals{View: usage.ViewSessctl}
	for _, su := range sus {
		want.Merge(su.Totals)
	}
	wantRows, err := Group(sus, ByProject, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1, 0}, {3, 0, 5, 1, 6, 2, 4}} {
		r, err := NewManyReport(ByProject, len(sus))
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range order {
			if err := r.Add(i, sus[i]); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := r.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Totals, want) {
			t.Errorf("order %v: totals %+v, want %+v", order, r.Totals, want)
		}
		if r.AsCCUsage.CostUSD != want.CostUSD || r.InRotations.CostUSD != want.CostUSD {
			t.Errorf("order %v: other views' costs %v, %v, want %v", order, r.AsCCUsage.CostUSD, r.InRotations.CostUSD, want.CostUSD)
		}
		for k := range wantRows.Len() {
			if g, w := rows.Row(k), wantRows.Row(k); g.Key != w.Key || g.Sessions != w.Sessions || g.Totals.CostUSD != w.Totals.CostUSD || g.Totals.Total() != w.Totals.Total() {
				t.Errorf("order %v, row %d: %+v, want %+v", order, k, g, w)
			}
		}
		// read back in the order of places
		for k := range sus {
			su, err := r.Session(k)
			if err != nil || su.ID != sus[k].ID {
				t.Errorf("order %v: session %d read back as %v (%v)", order, k, su, err)
			}
		}
		r.Close()
	}
}

// A small report touches no disk: it works where $TMPDIR cannot be
// written to, as stats --all did before its results went to disk; a large
// one says why it cannot.
func TestSpoolSmallInMemory(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "none"))
	sp := NewSpool()
	defer sp.Close()
	su := spoolSample()
	if err := sp.Add(su); err != nil {
		t.Fatalf("a small spool wrote to disk: %v", err)
	}
	if got, err := sp.Session(0); err != nil || !reflect.DeepEqual(got, su) {
		t.Errorf("read back %+v, %v", got, err)
	}
	old := SpoolMemory
	SpoolMemory = 0
	defer func() { SpoolMemory = old }()
	if err := sp.Add(su); err == nil {
		t.Error("a spool past its memory wrote to a $TMPDIR that does not exist")
	}
}

// GroupRequests' rows by day and by model are Group's of the same sessions'
// results, and a session left out (--project) gives no row any request:
// each row sums to the sessions kept. (stats --by day --project counted the
// requests of sessions it had left out until the thirteenth session: it
// filtered its results in place, in the list its requests named their
// sessions by.)
func TestGroupRequestsKept(t *testing.T) {
	res := session.Discover([]session.Root{{Path: filepath.Join(repoDir(t), "testdata/sessions")}}, false)
	ctx := context.Background()
	sus, err := Consumption(ctx, res.Sessions, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(sus)
	for skip := -1; skip < len(res.Sessions); skip++ {
		var want int64
		var keptSus []*SessionUsage
		for i, su := range sus {
			if i != skip {
				want += su.Totals.Total()
				keptSus = append(keptSus, su)
			}
		}
		given := 0
		rq, err := ConsumptionRequests(ctx, res.Sessions, nil, nil, func(int, *SessionUsage) error { given++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if given != len(res.Sessions) {
			t.Errorf("%d results given of %d", given, len(res.Sessions))
		}
		for _, by := range []string{ByDay, ByModel} {
			got, err := GroupRequests(context.Background(), rq, by, time.UTC, func(i int) bool { return i != skip })
			if err != nil {
				t.Fatal(err)
			}
			wantRows, err := Group(keptSus, by, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for k := range got.Len() {
				sum += got.Row(k).Totals.Total()
				if k < wantRows.Len() && !reflect.DeepEqual(got.Row(k), wantRows.Row(k)) {
					t.Errorf("skip %d, --by %s, row %d:\n got %+v\nwant %+v", skip, by, k, got.Row(k), wantRows.Row(k))
				}
			}
			if sum != want || got.Len() != wantRows.Len() {
				t.Errorf("skip %d, --by %s: %d rows summing to %d; want %d rows, %d", skip, by, got.Len(), sum, wantRows.Len(), want)
			}
		}
		rq.Close()
	}
}
