package stats

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

func TestStrTab(t *testing.T) {
	var tab strTab
	long := strings.Repeat("l", refPart+10) // longer than a part's length
	words := []string{"", "/a/b/c.jsonl", "x", "/a/b/c.jsonl", "ünï", "/a/b/c.jsonl.1", "/a/", long}
	for i := range 40 { // several runs of the front coding
		words = append(words, fmt.Sprintf("/p/-home-me/%04x-%d.jsonl", i*7919%65536, i))
	}
	refs := make([]strRef, len(words))
	for i, w := range words {
		refs[i] = tab.add(w)
	}
	// a part of a stored string is a ref into it, no entry of its own
	main := "/p/-home-me/0b6f.jsonl"
	r := tab.add(main)
	n := len(tab.adding)
	id := tab.within(r, main, "0b6f")
	idOfID := tab.within(id, "0b6f", "6f")
	if len(tab.adding) != n {
		t.Errorf("within stored %d entries for a part of a stored string", len(tab.adding)-n)
	}
	other := tab.within(r, main, "elsewhere")
	farPart := tab.within(refs[len(words)-1-40], long, long[refPart:]) // too far in to be a part
	check := func(when string) {
		t.Helper()
		for i, w := range words {
			if got := tab.str(refs[i]); got != w {
				t.Errorf("%s: str(add(%.20q)) = %.20q", when, w, got)
			}
		}
		for ref, want := range map[strRef]string{r: main, id: "0b6f", idOfID: "6f", other: "elsewhere", farPart: long[refPart:]} {
			if got := tab.str(ref); got != want {
				t.Errorf("%s: str = %.20q, want %.20q", when, got, want)
			}
		}
	}
	check("before freeze")
	if got := tab.str(refs[1]); unsafe.StringData(got) == unsafe.StringData(words[1]) {
		t.Error("str gave the added string itself, not a copy")
	}
	if !tab.is(refs[1], words[1]) || tab.is(refs[1], words[2]) || tab.is(id, "0b6f") {
		t.Error("is: wrong")
	}
	tab.freeze()
	check("after freeze")
	if tab.adding != nil {
		t.Error("the added strings kept after freeze")
	}
	for i, a := range words {
		for j, b := range words {
			got := cmp.Compare(tab.order(refs[i]), tab.order(refs[j]))
			if want := strings.Compare(a, b); want != 0 && got != want || want == 0 && got != cmp.Compare(i, j) {
				t.Errorf("order(%.20q) against order(%.20q): %d, want %d", a, b, got, want)
			}
		}
	}
}

// Paths sorted share most of their bytes with the one before: the front
// coding keeps about a third of them.
func TestStrTabFrontCodes(t *testing.T) {
	var tab strTab
	rng := rand.New(rand.NewPCG(3, 4))
	total := 0
	var paths []string
	var refs []strRef
	for i := range 5000 {
		p := fmt.Sprintf("/home/someone/.claude/projects/-home-someone-src-project-%d/%08x-%04x-%04x-%04x-%012x.jsonl",
			i%37, rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint32()&0xffff, rng.Uint64()&(1<<48-1))
		total += len(p)
		paths = append(paths, p)
		refs = append(refs, tab.add(p))
	}
	tab.freeze()
	if len(tab.b) > total/2 {
		t.Errorf("%d bytes for %d bytes of paths", len(tab.b), total)
	}
	for k, r := range refs {
		if got := tab.str(r); got != paths[k] {
			t.Fatalf("path %d: %q, want %q", k, got, paths[k])
		}
	}
}

func FuzzStrTab(f *testing.F) {
	f.Add([]byte("/a/b\x00/a/c\x00/a/b\x00\x00x"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var tab strTab
		words := strings.Split(string(data), "\x00")
		var refs []strRef
		var want []string
		for _, w := range words {
			r := tab.add(w)
			refs, want = append(refs, r), append(want, w)
			if c := int(cut); c < len(w) {
				refs, want = append(refs, tab.within(r, w, w[c:])), append(want, w[c:])
			}
		}
		tab.freeze()
		for k, r := range refs {
			if got := tab.str(r); got != want[k] {
				t.Fatalf("%d: %q, want %q", k, got, want[k])
			}
		}
	})
}

// What the scan holds for each session and file has no pointers, so that
// the collector does not go through it (scanPlan).
func TestScanStateHasNoPointers(t *testing.T) {
	for _, v := range []any{sessAcc{}, fileJob{}} {
		if typ := reflect.TypeOf(v); hasPointers(typ) {
			t.Errorf("%s holds a pointer", typ)
		}
	}
}

func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.String, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

func TestPlanScan(t *testing.T) {
	ss := session.Discover(testRoots(), false)
	if len(ss.Sessions) < 2 {
		t.Fatalf("%d sessions in testdata", len(ss.Sessions))
	}
	var want []fileJob
	var paths []string
	var total int64
	for i, s := range ss.Sessions {
		for _, f := range UsageFiles(s) {
			want = append(want, fileJob{int32(i), f.Class, f.Size, 0})
			paths = append(paths, f.Path)
			total += f.Size
		}
	}
	mains := 0
	type ids struct{ main, id strRef }
	refs := make([]ids, len(ss.Sessions))
	p := planScan(session.Slice(ss.Sessions), false, func(i int, s *session.Session, p *scanPlan, first int) {
		main := p.mainOf(s, first)
		if got := p.tab.str(main); got != s.Main {
			t.Errorf("session %d: main %q, want %q", i, got, s.Main)
		}
		for _, j := range p.jobs[first:] {
			if j.path == main {
				mains++ // the main file's path, stored once
			}
		}
		refs[i] = ids{main, p.tab.within(main, s.Main, s.ID)}
		if got := p.tab.str(refs[i].id); got != s.ID {
			t.Errorf("session %d: id %q, want %q", i, got, s.ID)
		}
	})
	// the same strings from the frozen table
	for i, s := range ss.Sessions {
		if got := p.tab.str(refs[i].main); got != s.Main {
			t.Errorf("session %d, frozen: main %q, want %q", i, got, s.Main)
		}
		if got := p.tab.str(refs[i].id); got != s.ID {
			t.Errorf("session %d, frozen: id %q, want %q", i, got, s.ID)
		}
	}
	if mains == 0 {
		t.Error("no main file's path is shared with its job")
	}
	if len(p.jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(p.jobs), len(want))
	}
	for i, s := range ss.Sessions {
		if p.agentOf(i) != s.Agent {
			t.Errorf("session %d: agent %q, want %q", i, p.agentOf(i), s.Agent)
		}
		if sc, _ := session.As[usage.Scanner](s.Agent); p.scannerOf(i) != sc {
			t.Errorf("session %d: another scanner", i)
		}
	}
	for k, j := range p.jobs {
		if got := p.tab.str(j.path); got != paths[k] {
			t.Errorf("job %d: path %q, want %q", k, got, paths[k])
		}
		j.path = 0
		if j != want[k] {
			t.Errorf("job %d: %+v, want %+v", k, j, want[k])
		}
	}
	if p.total != total {
		t.Errorf("total %d, want %d", p.total, total)
	}
}

// With release, planScan lets each session go once its jobs are made (the
// sessions behind it are nil by the time the next is taken), and makes the
// same plan as without.
func TestPlanScanReleasesAsItGoes(t *testing.T) {
	keep, ss := session.Discover(testRoots(), false).Sessions, session.Discover(testRoots(), false).Sessions
	if len(ss) < 2 {
		t.Fatalf("%d sessions in testdata", len(ss))
	}
	taken := 0
	p := planScan(session.Slice(ss), true, func(i int, s *session.Session, p *scanPlan, first int) {
		if s == nil || s.Main != keep[i].Main {
			t.Fatalf("session %d: given %v, want %s", i, s, keep[i].Main)
		}
		for k, prev := range ss[:i] {
			if prev != nil {
				t.Fatalf("taking session %d: session %d is still held", i, k)
			}
		}
		taken++
	})
	if taken != len(keep) {
		t.Fatalf("%d sessions taken, want %d", taken, len(keep))
	}
	for i, s := range ss {
		if s != nil {
			t.Errorf("session %d is held after the plan", i)
		}
	}
	q := planScan(session.Slice(keep), false, nil)
	if !slices.Equal(p.jobs, q.jobs) || p.total != q.total || !slices.Equal(p.agent, q.agent) {
		t.Fatal("another plan with release")
	}
	for k := range p.jobs {
		if a, b := p.tab.str(p.jobs[k].path), q.tab.str(q.jobs[k].path); a != b {
			t.Errorf("job %d: path %q, want %q", k, a, b)
		}
	}
}
