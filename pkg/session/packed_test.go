package session

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// randomSession makes a session of the shapes discovery makes, and of
// some it does not (paths with no directory, ids that are not part of the
// main file, files anywhere).
func randomSession(r *rand.Rand) *Session {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	dir := pick("/home/u/.claude/projects/-home-u-p", "/a", "rel/dir", "", "/", "/x/y/z/ü")
	id := fmt.Sprintf("%08x-%04x", r.Uint32(), r.IntN(1<<16))
	main := id + ".jsonl"
	if dir != "" {
		main = strings.TrimSuffix(dir, "/") + "/" + main
	}
	s := &Session{Agent: Agent(pick("claude", "codex", "kimi")), ID: id, Main: main,
		Project: pick("", "-home-u-p", "/abs/project"), Root: pick("", "/home/u/.claude")}
	switch r.IntN(3) {
	case 0:
		s.ID = pick("other-id", "")
	case 1:
		s.Dir = strings.TrimSuffix(main, ".jsonl")
	}
	t := func() time.Time {
		if r.IntN(5) == 0 {
			return time.Time{}
		}
		return time.Unix(r.Int64N(1<<33), r.Int64N(1e9))
	}
	s.Files = []File{{Path: main, Role: FileMain, Size: r.Int64N(1 << 40), ModTime: t(), dev: r.Uint64N(1 << 20), ino: r.Uint64()}}
	for range r.IntN(4) {
		f := File{Role: FileRole(1 + r.IntN(5)), Size: r.Int64N(1 << 20), ModTime: t(), Rotation: r.Int32(), Dir: r.IntN(4) == 0}
		switch r.IntN(3) {
		case 0:
			f.Path = strings.TrimSuffix(main, ".jsonl") + "/subagents/agent-" + id + ".jsonl"
		case 1:
			f.Path = "/elsewhere/" + id + ".jsonl.zst"
		default:
			f.Path = "plain"
		}
		s.Files = append(s.Files, f)
	}
	return s
}

func TestPackedKeepsSessions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var want []*Session
	p := &Packed{}
	for range 5000 {
		s := randomSession(r)
		want = append(want, s)
		p.Add(s)
	}
	if p.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", p.Len(), len(want))
	}
	for i, s := range want {
		if got := p.At(i); !reflect.DeepEqual(got, s) {
			t.Fatalf("session %d:\n got %+v\nwant %+v", i, got, s)
		}
		if got := p.MainPath(i); got != s.Main {
			t.Fatalf("MainPath(%d) = %q, want %q", i, got, s.Main)
		}
	}
	for range 20000 {
		i, j := r.IntN(len(want)), r.IntN(len(want))
		if got, w := sign(p.CompareMain(i, j)), sign(strings.Compare(want[i].Main, want[j].Main)); got != w {
			t.Fatalf("CompareMain(%q, %q) = %d, want %d", want[i].Main, want[j].Main, got, w)
		}
	}
}

func sign(c int) int { return min(max(c, -1), 1) }

func TestCompareJoined(t *testing.T) {
	for _, c := range [][4]string{
		{"/a/", "b", "/a/b/", "c"}, {"/a/b/", "c", "/a/", "b"}, {"/a/", "b.jsonl", "/a/b/", "c"},
		{"", "x", "/", "x"}, {"/ab/", "x", "/a/", "bx"}, {"/a/", "z", "/b/", "a"}, {"/a/", "x", "/a/", "x"},
	} {
		if got, want := sign(compareJoined(c[0], c[1], c[2], c[3])), sign(strings.Compare(c[0]+c[1], c[2]+c[3])); got != want {
			t.Errorf("compareJoined%q = %d, want %d", c, got, want)
		}
	}
}

func TestPackedSetReorderKeepPatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := &Packed{}
	var want []*Session
	for range 300 {
		s := randomSession(r)
		want = append(want, s)
		p.Add(s)
	}
	// Set: the new session at its place, the others as they were
	s := randomSession(r)
	s.Files = append(s.Files, File{Path: "/new/agent-x.jsonl", Role: FileSubagent, Size: 7})
	p.Set(10, s)
	want[10] = s
	// patch: the size and time written in place
	at := p.At(20)
	_, files := p.files(20)
	when := time.Unix(1_800_000_000, 5)
	for k := range files {
		p.patch(files[k], int64(100+k), when)
		at.Files[k].Size, at.Files[k].ModTime = int64(100+k), when
	}
	want[20] = at
	// Reorder and Keep
	order := make([]int32, len(want))
	for k := range order {
		order[k] = int32(len(want) - 1 - k)
	}
	p.Reorder(order)
	p.Keep(func(i int) bool { return i%3 != 0 })
	var kept []*Session
	for k := range order {
		if k%3 != 0 {
			kept = append(kept, want[order[k]])
		}
	}
	if p.Len() != len(kept) {
		t.Fatalf("Len = %d, want %d", p.Len(), len(kept))
	}
	for i, s := range kept {
		if got := p.At(i); !reflect.DeepEqual(got, s) {
			t.Fatalf("session %d:\n got %+v\nwant %+v", i, got, s)
		}
	}
}

// A session of one file, as discovery makes them over a Claude Code
// store, takes about a third of what it takes as values.
func TestPackedSize(t *testing.T) {
	p := &Packed{}
	const n = 10000
	for i := range n {
		main := fmt.Sprintf("/home/user/.claude/projects/-home-user-src-project-%03d/%08x-1234-5678-9abc-def012345678.jsonl", i%100, i)
		p.Add(&Session{Agent: Claude, ID: main[len(main)-42 : len(main)-6], Main: main, Project: "-home-user-src-project-000", Root: "/home/user/.claude",
			Files: []File{{Path: main, Role: FileMain, Size: 6000, ModTime: time.Unix(1_795_000_000+int64(i), 123456789), dev: 2049, ino: uint64(1_000_000 + i)}}})
	}
	bytes := 0
	for _, c := range p.chunks {
		bytes += len(c)
	}
	per := (bytes + 8*n) / n
	if per > 100 {
		t.Errorf("%d bytes a session, want at most 100", per)
	}
	t.Logf("%d bytes a session", per)
}

// Release lets a chunk go with the last of its sessions, and no other.
func TestPackedRelease(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	p := &Packed{}
	var want []*Session
	for range 3000 {
		s := randomSession(r)
		want = append(want, s)
		p.Add(s)
	}
	if len(p.chunks) < 3 {
		t.Fatalf("%d chunks, want several", len(p.chunks))
	}
	last := p.Len() - 1
	for i := range last {
		p.Release(i)
		// every session not let go is still there
		if i%500 == 0 {
			for j := i + 1; j <= last; j += 97 {
				if got := p.At(j); !reflect.DeepEqual(got, want[j]) {
					t.Fatalf("after releasing %d, session %d differs", i, j)
				}
			}
		}
	}
	freed := 0
	for _, c := range p.chunks {
		if c == nil {
			freed++
		}
	}
	if freed != len(p.chunks)-1 {
		t.Fatalf("%d of %d chunks let go, want all but the last", freed, len(p.chunks))
	}
	if got := p.At(last); !reflect.DeepEqual(got, want[last]) {
		t.Fatal("the last session differs")
	}
}
