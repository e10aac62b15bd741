package usage

import (
	"slices"
	"testing"
)

// TallyFile counts a file's requests as Add and Each would, in the same
// order, and only when nothing else could count them otherwise; the files
// it declines, and those after it, keep their numbers and their place in
// the ledger.
func TestTallyFile(t *testing.T) {
	cost := func(r Request, c float64) Request {
		r.CostUSD, r.HasCost = c, true
		return r
	}
	// costs whose sum depends on its order: 1 + 1e-16 + 1e-16 is 1, the
	// other way round it is not
	keyless := &file{class: CCUsage,
		reqs:  []Request{cost(req("", "", 10, false, 1), 1), cost(req("", "", 20, false, 2), 1e-16), cost(req("", "", 30, false, 3), 1e-16)},
		lines: []string{"a", "b", "c"}, model: []string{"gpt-5", "gpt-5-mini", "gpt-5"}}
	keyed := &file{class: CCUsage, reqs: []Request{req("m1", "r1", 5, false, 1)}, lines: []string{""}, model: []string{"claude"}}
	views := &file{class: CCUsage, reqs: []Request{req("", "", 7, false, 1), req("", "", 8, false, 2)}, lines: []string{"x", "y"}, model: []string{"gpt-5", "gpt-5"}}
	views.reqs[1].CCUsage = false                                                                               // counted by sessctl alone
	notRead := &file{reqs: []Request{req("", "", 9, false, 1)}, lines: []string{"z"}, model: []string{"gpt-5"}} // ccusage does not read it
	files := []*file{keyed, keyless, views, notRead}

	// every file through Add: what each file's requests tally to, in the
	// order Each gives them
	ref := &Ledger{NoCopies: true}
	for _, f := range files {
		ref.Add(f.usage())
	}
	if err := ref.Finish(); err != nil {
		t.Fatal(err)
	}
	var want []Request
	tallies := make([]Tally, len(files))
	ref.Each(func(r *Request) error {
		want = append(want, *r)
		ref.Tally(&tallies[r.File], r)
		return nil
	})
	wantKeyless := ref.Total(&tallies[1])
	var back Tally
	for i := len(want) - 1; i >= 0; i-- {
		if want[i].File == 1 {
			ref.Tally(&back, &want[i])
		}
	}
	if ref.Total(&back).CostUSD == wantKeyless.CostUSD {
		t.Fatal("the test's costs do not depend on their order")
	}

	lg := &Ledger{NoCopies: true}
	var ty Tally
	for i, f := range files {
		fu := f.usage()
		n := len(fu.Requests)
		reqs, ok := lg.TallyFile(&ty, fu)
		if ok != (i == 1) {
			t.Fatalf("file %d: TallyFile took it: %v", i, ok)
		}
		if ok {
			if len(reqs) != n || fu.Requests != nil {
				t.Errorf("file %d: %d requests given back of %d, %d left in the file", i, len(reqs), n, len(fu.Requests))
			}
			continue
		}
		if reqs != nil || len(fu.Requests) != n {
			t.Fatalf("file %d: declined, yet its requests were taken", i)
		}
		lg.Add(fu)
	}
	if err := lg.Finish(); err != nil {
		t.Fatal(err)
	}
	if got := lg.Total(&ty); !sameTotals(got, wantKeyless) {
		t.Errorf("tallied straight: %+v\nwant %+v", got, wantKeyless)
	}
	var got []Request
	lg.Each(func(r *Request) error {
		got = append(got, *r)
		return nil
	})
	rest := slices.DeleteFunc(slices.Clone(want), func(r Request) bool { return r.File == 1 })
	if !slices.Equal(got, rest) {
		t.Errorf("the ledger holds\n%s\nwant\n%s", show(got), show(rest))
	}

	// with a rotated copy to come, the lines are to be matched: declined
	copies := &Ledger{}
	if _, ok := copies.TallyFile(&Tally{}, keyless.usage()); ok {
		t.Error("TallyFile took a file with copies to come")
	}
	rotated := *keyless
	rotated.class |= Copy
	if _, ok := lg.TallyFile(&Tally{}, rotated.usage()); ok {
		t.Error("TallyFile took a rotated copy")
	}
}

func sameTotals(a, b Totals) bool {
	if a.Usage != b.Usage || a.Requests != b.Requests || a.CostUSD != b.CostUSD || !a.LastActivity.Equal(b.LastActivity) || len(a.ByModel) != len(b.ByModel) {
		return false
	}
	for i := range a.ByModel {
		if a.ByModel[i] != b.ByModel[i] {
			return false
		}
	}
	return true
}
