package usage

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// file is one file's worth of requests for a ledger test: Add is given a
// fresh FileUsage each time (the ledger takes the requests).
type file struct {
	class FileClass
	reqs  []Request
	lines []string // the line of each request ("" = none)
	model []string // the model of each request
}

func (f *file) usage() *FileUsage {
	fu := &FileUsage{Class: f.class}
	for i, r := range f.reqs {
		r.Model = fu.ModelID(f.model[i])
		var line []byte
		if f.lines[i] != "" {
			line = []byte(f.lines[i])
		}
		fu.Add(r, line)
	}
	return fu
}

// winners runs files through a ledger of budget (0: never spill) and
// returns both views as Each gives them, with their model names.
func winners(t *testing.T, files []*file, budget int) (own, ccu []Request, models [2][]string, spilled bool) {
	t.Helper()
	lg := &Ledger{Budget: budget, NoCopies: true}
	if budget == 0 {
		lg.Budget = 1 << 30
	}
	for _, f := range files {
		if f.class&Copy != 0 {
			lg.NoCopies = false // as stats sets it
		}
	}
	defer lg.Close()
	for _, f := range files {
		lg.Add(f.usage())
	}
	if err := lg.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := lg.Each(func(r *Request) error {
		own = append(own, *r)
		models[0] = append(models[0], lg.Model(r))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := lg.EachCCUsage(func(r *Request) error {
		ccu = append(ccu, *r)
		models[1] = append(models[1], lg.Model(r))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if budget == 0 && lg.Spilled() {
		t.Fatal("a ledger without a budget spilled")
	}
	return own, ccu, models, lg.Spilled()
}

// sameAsInMemory holds the ledger that spills to the one that does not, for
// budgets from 1 request up.
func sameAsInMemory(t *testing.T, files []*file, budgets ...int) {
	t.Helper()
	own, ccu, models, _ := winners(t, files, 0)
	for _, b := range budgets {
		gotOwn, gotCCU, gotModels, spilled := winners(t, files, b)
		if !spilled {
			t.Errorf("budget %d: the ledger did not spill (%d requests)", b, len(own))
			continue
		}
		if !slices.Equal(gotOwn, own) || !slices.Equal(gotModels[0], models[0]) {
			t.Errorf("budget %d: sessctl's view differs\n got %s\nwant %s", b, show(gotOwn), show(own))
		}
		if !slices.Equal(gotCCU, ccu) || !slices.Equal(gotModels[1], models[1]) {
			t.Errorf("budget %d: ccusage's view differs\n got %s\nwant %s", b, show(gotCCU), show(ccu))
		}
	}
}

func show(rs []Request) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "[f%d l%d %d sc=%v] ", r.File, r.Line, r.Usage.Total(), r.Sidechain)
	}
	return b.String()
}

func req(msg, id string, total int64, sidechain bool, line int32) Request {
	r := Request{Usage: session.Usage{Input: total}, Line: line, Time: int64(line) * 1000, Counted: true, CCUsage: true, Sidechain: sidechain}
	if msg != "" {
		r.Key = HashKey([]byte(msg), []byte(id), id != "")
		r.MsgKey = HashKey([]byte(msg), nil, false)
	}
	return r
}

// TestLedgerSpillCrafted: the duplicates the ledger exists for, each in
// both modes. A subagent's sidechain copy of a parent's response under a
// new requestId; one message.id with several requestIds, the larger usage
// winning its first place; a later better copy; rotated copies that repeat
// lines without keys (counted once) and with keys; lines ccusage does not
// count (the views diverge after requests were counted).
func TestLedgerSpillCrafted(t *testing.T) {
	main := &file{class: Carries | CCUsage | Gauge}
	add := func(f *file, r Request, line, model string) {
		f.reqs = append(f.reqs, r)
		f.lines = append(f.lines, line)
		f.model = append(f.model, model)
	}
	add(main, req("m1", "r1", 10, false, 1), "", "opus")
	add(main, req("m1", "r1", 12, false, 2), "", "opus") // same request, larger: replaces line 1 in place
	add(main, req("m2", "r2", 20, false, 3), "", "sonnet")
	add(main, req("m2", "r3", 25, false, 4), "", "sonnet") // same message, another requestId: a request of its own
	add(main, req("m3", "r4", 30, false, 5), "", "opus")
	add(main, req("m4", "r5", 40, false, 6), "", "haiku")
	codexLike := req("", "", 7, false, 7)
	add(main, codexLike, `{"n":7}`, "gpt")
	add(main, codexLike, `{"n":7}`, "gpt") // a line written twice: two requests
	dropped := req("m5", "r6", 50, false, 9)
	dropped.CCUsage = false // ccusage drops the line: the views diverge here
	add(main, dropped, "", "opus")
	add(main, req("m6", "r7", 60, false, 10), "", "opus")

	side := &file{class: Carries | CCUsage}
	add(side, req("m3", "r9", 35, true, 1), "", "opus")  // sidechain replay of m3: the parent's stays
	add(side, req("m7", "r10", 5, true, 2), "", "opus")  // a subagent's own
	add(side, req("m7", "r11", 9, false, 3), "", "opus") // the main copy of it wins over the sidechain one
	onlyCC := req("m8", "r12", 70, false, 4)
	onlyCC.Counted = false // ccusage counts what sessctl rejects
	add(side, onlyCC, "", "opus")

	rotated := &file{class: Carries | Copy}
	add(rotated, req("m1", "r1", 12, false, 2), "", "opus")  // repeats a keyed request: counted once
	add(rotated, req("m9", "r13", 80, false, 3), "", "opus") // only the copy holds it (a revert removed it)
	add(rotated, codexLike, `{"n":7}`, "gpt")                // repeats the first of the two lines: counted once
	add(rotated, codexLike, `{"n":7}`, "gpt")                // and the second
	add(rotated, codexLike, `{"n":7}`, "gpt")                // a third only the copy has
	add(rotated, req("", "", 3, false, 8), `{"n":8}`, "gpt") // a line only the copy has

	files := []*file{main, side, rotated}
	own, ccu, _, _ := winners(t, files, 0)
	// what the rules above give, written out: one request per line
	var got []string
	for _, r := range own {
		got = append(got, fmt.Sprintf("f%d:l%d:%d", r.File, r.Line, r.Usage.Total()))
	}
	want := []string{"f0:l2:12", "f0:l3:20", "f0:l4:25", "f0:l5:30", "f0:l6:40", "f0:l7:7", "f0:l7:7", "f0:l9:50", "f0:l10:60",
		"f1:l3:9", "f2:l3:80", "f2:l7:7", "f2:l8:3"}
	if !slices.Equal(got, want) {
		t.Errorf("sessctl's view\n got %v\nwant %v", got, want)
	}
	got = got[:0]
	for _, r := range ccu {
		got = append(got, fmt.Sprintf("f%d:l%d:%d", r.File, r.Line, r.Usage.Total()))
	}
	want = []string{"f0:l2:12", "f0:l3:20", "f0:l4:25", "f0:l5:30", "f0:l6:40", "f0:l7:7", "f0:l7:7", "f0:l10:60",
		"f1:l3:9", "f1:l4:70"}
	if !slices.Equal(got, want) {
		t.Errorf("ccusage's view\n got %v\nwant %v", got, want)
	}
	sameAsInMemory(t, files, 1, 2, 3, 5, 8, 13)
}

// TestLedgerSpillRandom: random requests over few messages, with every
// kind of duplicate, through ledgers that spill at every budget from 1 up
// (and so split their partitions again), against the ledger that does
// not.
func TestLedgerSpillRandom(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var files []*file
		nmsg := 1 + rng.IntN(30)
		for fi := 0; fi < 1+rng.IntN(6); fi++ {
			f := &file{class: Carries}
			if rng.IntN(4) > 0 {
				f.class |= CCUsage
			}
			if fi > 0 && rng.IntN(3) == 0 {
				f.class = Carries | Copy
			}
			for i := 0; i < rng.IntN(40); i++ {
				var r Request
				line := ""
				if rng.IntN(4) == 0 {
					r = req("", "", int64(rng.IntN(5)), false, int32(i+1))
					line = fmt.Sprintf(`{"n":%d}`, rng.IntN(6))
				} else {
					m := fmt.Sprintf("m%d", rng.IntN(nmsg))
					id := fmt.Sprintf("r%d", rng.IntN(3))
					if rng.IntN(5) == 0 {
						id = "" // no requestId: message.id alone
					}
					r = req(m, id, int64(rng.IntN(4)), rng.IntN(3) == 0, int32(i+1))
					r.Speed = rng.IntN(4) == 0
				}
				r.Counted = rng.IntN(8) > 0
				r.CCUsage = rng.IntN(8) > 0
				r.HasCost, r.CostUSD = rng.IntN(5) == 0, rng.Float64()
				f.reqs = append(f.reqs, r)
				f.lines = append(f.lines, line)
				f.model = append(f.model, []string{"", "a", "b"}[rng.IntN(3)])
			}
			files = append(files, f)
		}
		// rotated copies after the files they copy, as stats adds them
		sort.SliceStable(files, func(i, j int) bool { return files[i].class&Copy == 0 && files[j].class&Copy != 0 })
		own, _, _, _ := winners(t, files, 0)
		if len(own) < 2 {
			continue
		}
		var budgets []int
		for _, b := range []int{1, 2, 3, 7, len(own) - 1} {
			if b < len(own) && !slices.Contains(budgets, b) {
				budgets = append(budgets, b)
			}
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { sameAsInMemory(t, files, budgets...) })
	}
}

// TestSorterSpill: the sorter that writes runs gives the order of
// sort.SliceStable, equal keys in the order added.
func TestSorterSpill(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var all []Request
	for i := 0; i < 500; i++ {
		all = append(all, Request{File: int32(rng.IntN(7)), Time: int64(rng.IntN(20)), Line: int32(i)})
	}
	less := func(a, b *Request) bool {
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Time < b.Time
	}
	want := slices.Clone(all)
	sort.SliceStable(want, func(i, j int) bool { return less(&want[i], &want[j]) })
	for _, budget := range []int{1, 2, 10, 499, 500, 1000} {
		s := &Sorter{Less: less, Budget: budget}
		for i := range all {
			if err := s.Add(&all[i]); err != nil {
				t.Fatal(err)
			}
		}
		if spilled := s.Spilled(); spilled != (budget <= len(all)) {
			t.Errorf("budget %d: spilled %v", budget, spilled)
		}
		for pass := 0; pass < 2; pass++ { // Each may be called again
			var got []Request
			if err := s.Each(func(r *Request) error { got = append(got, *r); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("budget %d, pass %d: order differs", budget, pass)
			}
		}
		s.Close()
	}
}

// TestSpillFilesPrivate: a ledger that spills writes into one private
// directory under $TMPDIR, whose files are already unlinked, and Close
// removes it.
func TestSpillFilesPrivate(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	f := &file{class: Carries | CCUsage}
	for i := 0; i < 50; i++ {
		f.reqs = append(f.reqs, req(fmt.Sprint("m", i), "r", 1, false, int32(i+1)))
		f.lines = append(f.lines, "")
		f.model = append(f.model, "")
	}
	lg := &Ledger{Budget: 4}
	lg.Add(f.usage())
	if err := lg.Finish(); err != nil {
		t.Fatal(err)
	}
	dir := lg.spill.dir.path()
	if filepath.Dir(dir) != tmp {
		t.Fatalf("spilled into %q, not under $TMPDIR %q", dir, tmp)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("spill directory mode %v", fi.Mode().Perm())
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("files left named in the spill directory: %v", names)
	}
	n := 0
	lg.Each(func(*Request) error { n++; return nil })
	if n != 50 {
		t.Errorf("%d requests read back, want 50", n)
	}
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in $TMPDIR after Close: %v", left)
	}
}

// TestEncodeRequest: every field survives the trip to disk.
func TestEncodeRequest(t *testing.T) {
	r := Request{Usage: session.Usage{Input: 1, Output: -2, CacheRead: 3 << 40, CacheCreation: 4, Reasoning: 5, CacheCreation1h: 6},
		Model: 7, Time: -8, Line: 9, File: 10, Key: 11 << 60, MsgKey: 12, Sidechain: true, Speed: false, CostUSD: 1.25,
		HasCost: true, Counted: false, CCUsage: true, line: 13}
	var b [requestSize]byte
	encodeRequest(b[:], &r)
	var got Request
	decodeRequest(b[:], &got)
	if got != r {
		t.Errorf("got %+v\nwant %+v", got, r)
	}
	r.Sidechain, r.Speed, r.HasCost, r.Counted, r.CCUsage = false, true, false, true, false
	encodeRequest(b[:], &r)
	decodeRequest(b[:], &got)
	if got != r {
		t.Errorf("got %+v\nwant %+v", got, r)
	}
}

// TestLedgerSpillBounded: what the ledger holds stays within its budget
// however many requests go through it: before it spills, in each
// partition it replays (split again when larger), and in the sorter.
func TestLedgerSpillBounded(t *testing.T) {
	const budget, n = 200, 30000
	lg := &Ledger{Budget: budget}
	defer lg.Close()
	for start := 0; start < n; start += 100 {
		f := &file{class: Carries | CCUsage}
		for i := start; i < start+100; i++ {
			// every third request repeats an earlier one
			m := i
			if i%3 == 0 {
				m = i / 2
			}
			f.reqs = append(f.reqs, req(fmt.Sprint("m", m), "r", int64(i%7), i%11 == 0, int32(i-start+1)))
			f.lines = append(f.lines, "")
			f.model = append(f.model, "")
		}
		lg.Add(f.usage())
		if held := len(lg.Requests) + len(lg.CCUsage); held > budget {
			t.Fatalf("holds %d requests in memory, budget %d", held, budget)
		}
	}
	if err := lg.Finish(); err != nil {
		t.Fatal(err)
	}
	if !lg.Spilled() {
		t.Fatal("did not spill")
	}
	if lg.spill.maxHeld == 0 || lg.spill.maxHeld > budget {
		t.Errorf("a partition's replay held %d requests, budget %d", lg.spill.maxHeld, budget)
	}
	s := &Sorter{Budget: budget, Less: func(a, b *Request) bool { return a.Time < b.Time }}
	defer s.Close()
	count := 0
	lg.Each(func(r *Request) error {
		count++
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
		if len(s.buf) > budget || cap(s.buf) > budget {
			t.Fatalf("the sorter holds %d (room for %d), budget %d", len(s.buf), cap(s.buf), budget)
		}
		return nil
	})
	if count < n/2 {
		t.Errorf("%d winners of %d requests", count, n)
	}
}
