package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/sessctl/sessctl/pkg/index"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// ls runs under the warm limit while the index serves it, under the cold
// one once loosened or without an index (never without a limit), and puts
// back what was set before; a limit set by the user is kept throughout.
func TestBoundLsMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	// the longest file Summarize reads is a subagent's, not the rotation
	s := &session.Session{Files: []session.File{{Role: session.FileMain, Size: 4 << 20},
		{Role: session.FileSubagent, Size: 30 << 20}, {Role: session.FileRotation, Size: 90 << 20}}}
	bytes, longest := summarized(s)
	if bytes != 34<<20 || longest != 30<<20 {
		t.Fatalf("summarized: %d bytes, the longest %d", bytes, longest)
	}
	const n = 100000
	const warm, cold = 64<<20 + 256*n, 32<<20 + 700*n + 2*30<<20
	limit := func() int64 { return debug.SetMemoryLimit(-1) }

	loosen, restore := boundLsMemory(&index.Index{}, n, longest)
	if got := limit(); got != warm {
		t.Errorf("served by the index: limit %d, want %d", got, warm)
	}
	loosen()
	if got := limit(); got != cold {
		t.Errorf("loosened: limit %d, want %d", got, cold)
	}
	restore()
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("restored: limit %d, want none", got)
	}

	_, restore = boundLsMemory(nil, n, longest)
	if got := limit(); got != cold {
		t.Errorf("without an index: limit %d, want %d", got, cold)
	}
	restore()
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("restored: limit %d, want none", got)
	}

	// a small store: at least 64 MiB
	_, restore = boundLsMemory(nil, 5, 4<<20)
	if got := limit(); got != 64<<20+2*4<<20 {
		t.Errorf("5 sessions without an index: limit %d, want %d", got, 64<<20+2*4<<20)
	}
	restore()

	debug.SetMemoryLimit(123 << 20) // GOMEMLIMIT
	loosen, restore = boundLsMemory(nil, n, longest)
	loosen()
	restore()
	if got := limit(); got != 123<<20 {
		t.Errorf("the user's limit became %d", got)
	}
}

// paceGC sets GOGC and puts it back after, unless the user set GOGC.
func TestPaceGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	percent := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	restore := paceGC(func(string) string { return "" }, lsGCPercent)
	if got := percent(); got != lsGCPercent {
		t.Errorf("during the run: GOGC %d, want %d", got, lsGCPercent)
	}
	restore()
	if got := percent(); got != 100 {
		t.Errorf("after the run: GOGC %d, want 100", got)
	}
	debug.SetGCPercent(150) // as GOGC=150 sets it
	restore = paceGC(func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}, lsGCPercent)
	if got := percent(); got != 150 {
		t.Errorf("the user's GOGC: %d during the run, want 150", got)
	}
	restore()
}

// stats grows its memory limit by indexWriteRoom once, when the index has
// missed limitMisses files as it reads them (a run that fills it), and
// not when the user set GOMEMLIMIT.
func TestReadRoomy(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	data := t.TempDir()
	var paths []string
	for i := range limitMisses + 10 {
		p := filepath.Join(data, fmt.Sprintf("%d.jsonl", i))
		if err := os.WriteFile(p, []byte(`{"type":"user"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	a := session.Claude
	sc, ok := session.As[usage.Scanner](a)
	if !ok {
		t.Fatal("no usage scanner for claude")
	}
	ss := []*session.Session{{Agent: a, Files: []session.File{{Path: paths[0], Size: 16}}}}
	for _, user := range []int64{0, 100 << 20} {
		debug.SetMemoryLimit(math.MaxInt64)
		if user != 0 {
			debug.SetMemoryLimit(user) // as GOMEMLIMIT sets it
		}
		grow, restore := boundScanMemory(session.Slice(ss))
		set := limit()
		if user != 0 && set != user {
			t.Fatalf("the user's limit %d became %d", user, set)
		}
		ix := index.Open(t.TempDir())
		if ix == nil {
			t.Fatal("no index")
		}
		// what the index missed before the scan (the heads --by project
		// reads) does not count
		before := filepath.Join(t.TempDir(), "before.jsonl")
		if err := os.WriteFile(before, []byte(`{"type":"user"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var rd usage.Reader
		if _, err := ix.ReadUsage(context.Background(), &rd, before, a, sc, usage.Carries); err != nil || missed(ix) != 1 {
			t.Fatalf("a miss before the scan: %d misses, %v", missed(ix), err)
		}
		read := readRoomy(ix, grow, limitMisses)
		for i, p := range paths {
			if _, err := read(context.Background(), &rd, p, a, sc, usage.Carries|usage.CCUsage); err != nil {
				t.Fatal(err)
			}
			want := set
			if user == 0 && i+1 >= limitMisses {
				want += indexWriteRoom
			}
			if got := limit(); got != want {
				t.Fatalf("user's limit %d, after %d misses: limit %d, want %d", user, i+1, got, want)
			}
		}
		ix.Close()
		restore()
	}
}

// softLimit sets the limit asked for and gives back the one before, and
// leaves a limit the user set (GOMEMLIMIT) alone: stats discovers under
// discoveryLimit, then counts its own from the sessions.
func TestSoftLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	set, restore := softLimit(discoveryLimit)
	if !set || limit() != discoveryLimit {
		t.Fatalf("set %v, limit %d, want %d", set, limit(), discoveryLimit)
	}
	restore()
	if limit() != math.MaxInt64 {
		t.Fatalf("restored to %d, want none", limit())
	}
	debug.SetMemoryLimit(100 << 20) // as GOMEMLIMIT sets it
	set, restore = softLimit(discoveryLimit)
	if set || limit() != 100<<20 {
		t.Fatalf("over the user's limit: set %v, limit %d", set, limit())
	}
	restore()
	if limit() != 100<<20 {
		t.Fatalf("the user's limit became %d", limit())
	}
}

// A run the index serves is paced at scanGCPercent until the index has
// missed paceMisses files in it (misses before it do not count), and no
// longer after; without the index the read is not wrapped.
func TestAfterMisses(t *testing.T) {
	data := t.TempDir()
	a := session.Claude
	sc, ok := session.As[usage.Scanner](a)
	if !ok {
		t.Fatal("no usage scanner for claude")
	}
	file := func(name string) string {
		p := filepath.Join(data, name)
		if err := os.WriteFile(p, []byte(`{"type":"user"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ix := index.Open(t.TempDir())
	if ix == nil {
		t.Fatal("no index")
	}
	defer ix.Close()
	var rd usage.Reader
	if _, err := ix.ReadUsage(context.Background(), &rd, file("before.jsonl"), a, sc, usage.Carries); err != nil || missed(ix) != 1 {
		t.Fatalf("a miss before the run: %d misses, %v", missed(ix), err)
	}
	unpaced := 0
	read := afterMisses(ix, ix.ReadUsage, paceMisses, func() { unpaced++ })
	// files the index has: hits, however many
	for range 2 * paceMisses {
		if _, err := read(context.Background(), &rd, filepath.Join(data, "before.jsonl"), a, sc, usage.Carries); err != nil {
			t.Fatal(err)
		}
	}
	if unpaced != 0 {
		t.Fatalf("unpaced after %d misses", missed(ix)-1)
	}
	for i := range paceMisses + 4 {
		if _, err := read(context.Background(), &rd, file(fmt.Sprintf("%d.jsonl", i)), a, sc, usage.Carries); err != nil {
			t.Fatal(err)
		}
		want := 0
		if i+1 >= paceMisses {
			want = 1
		}
		if unpaced != want {
			t.Fatalf("after %d misses: unpaced %d times, want %d", i+1, unpaced, want)
		}
	}
	if afterMisses(nil, nil, paceMisses, func() { t.Fatal("unpaced without the index") }) != nil {
		t.Fatal("without the index the read is wrapped")
	}
}

// A run takes room and pace for filling the index after k misses, and
// where the index holds less of itself after a quarter of its sessions.
func TestFillingMisses(t *testing.T) {
	for _, c := range []struct{ n, k, want int }{
		{10, 500, 500},
		{holdLessFrom - 1, 16, 16},
		{holdLessFrom, 16, holdLessFrom / 4},
		{100_000, 500, 25_000},
		{holdLessFrom, 1 << 20, 1 << 20},
	} {
		if got := fillingMisses(c.n, c.k); got != c.want {
			t.Errorf("fillingMisses(%d, %d) = %d, want %d", c.n, c.k, got, c.want)
		}
	}
}
