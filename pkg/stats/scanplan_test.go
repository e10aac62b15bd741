package stats

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

func TestStrTab(t *testing.T) {
	var tab strTab
	words := []string{"", "/a/b/c.jsonl", "x", "/a/b/c.jsonl", "ünï"}
	refs := make([]strRef, len(words))
	for i, w := range words {
		refs[i] = tab.add(w)
	}
	for i, w := range words {
		if got := tab.str(refs[i]); got != w {
			t.Errorf("str(add(%q)) = %q", w, got)
		}
	}
	for i, a := range words {
		for j, b := range words {
			if got, want := tab.cmp(refs[i], refs[j]), strings.Compare(a, b); got != want {
				t.Errorf("cmp(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
	// a part of a stored string takes no bytes of its own
	main := "/p/-home-me/0b6f.jsonl"
	r := tab.add(main)
	n := len(tab.b)
	id := tab.within(r, main, "0b6f")
	if got := tab.str(id); got != "0b6f" {
		t.Errorf("within: %q, want 0b6f", got)
	}
	if len(tab.b) != n {
		t.Errorf("within stored %d bytes for a part of a stored string", len(tab.b)-n)
	}
	if got := tab.str(tab.within(r, main, "elsewhere")); got != "elsewhere" {
		t.Errorf("within, not a part: %q", got)
	}
	// a string too long for a ref's length is kept whole
	long := strings.Repeat("l", 1<<refLenBits)
	lr := tab.add(long)
	if lr&refLong == 0 || tab.str(lr) != long {
		t.Errorf("a string of %d bytes: ref %x", len(long), lr)
	}
	if got := tab.cmp(lr, refs[1]); got != strings.Compare(long, words[1]) {
		t.Errorf("cmp of a long string: %d", got)
	}
	if got := tab.str(tab.within(lr, long, "ll")); got != "ll" {
		t.Errorf("within a long string: %q", got)
	}
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
	p := planScan(ss.Sessions, func(i int, s *session.Session, p *scanPlan, first int) {
		main := p.mainOf(s, first)
		if got := p.tab.str(main); got != s.Main {
			t.Errorf("session %d: main %q, want %q", i, got, s.Main)
		}
		for _, j := range p.jobs[first:] {
			if j.path == main {
				mains++ // the main file's path, stored once
			}
		}
		if got := p.tab.str(p.tab.within(main, s.Main, s.ID)); got != s.ID {
			t.Errorf("session %d: id %q, want %q", i, got, s.ID)
		}
	})
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
