package stats

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// claudeStore writes files Claude Code sessions of about size bytes each.
func claudeStore(t *testing.T, files, size int) string {
	t.Helper()
	store := map[string][]string{}
	filler := strings.Repeat("lorem ipsum ", 40)
	for i := range files {
		var lines []string
		for n := 0; n*600 < size; n++ {
			lines = append(lines, fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"message":{"id":"msg_%d_%d","model":"claude-opus-4-8","role":"assistant","content":[{"type":"text","text":%q}],"usage":{"input_tokens":%d,"output_tokens":1}},"requestId":"r","type":"assistant","uuid":"u%d","timestamp":"2026-11-01T10:00:00.000Z","sessionId":"s","version":"2.1.197"}`,
				i, n, filler, n, n))
		}
		store[fmt.Sprintf("projects/-w/%08d-1111-4111-8111-111111111111.jsonl", i)] = lines
	}
	return writeStore(t, store)
}

// Ctrl-C reaches a scan (issue 10): once its context is done, Consumption
// stops taking files and returns the context's error, having scanned far
// fewer files than the store holds.
func TestConsumptionStopsWhenCanceled(t *testing.T) {
	const files = 300
	res := session.Discover([]session.Root{{Path: claudeStore(t, files, 20<<10)}}, false)
	if len(res.Sessions) != files {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var scanned atomic.Int64
	sus, err := Consumption(ctx, res.Sessions, func(done, total int64) {
		scanned.Add(1)
		cancel() // as Ctrl-C after the first file
	})
	if !errors.Is(err, context.Canceled) || sus != nil {
		t.Fatalf("err %v (%d results), want context.Canceled", err, len(sus))
	}
	if n := scanned.Load(); n == 0 || n > files/10 {
		t.Errorf("%d of %d files scanned after the cancel", n, files)
	}
}

// A scan that spilled its ledger to disk and is canceled leaves nothing in
// $TMPDIR; one that ends leaves nothing once closed.
func TestSpilledScanCleansUp(t *testing.T) {
	const files = 60
	res := session.Discover([]session.Root{{Path: claudeStore(t, files, 20<<10)}}, false)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	defer usage.SetMemoryBudget(usage.SetMemoryBudget(10))
	before := usage.Spills()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var scanned atomic.Int64
	_, err := Consumption(ctx, res.Sessions, func(done, total int64) {
		if scanned.Add(1) == files/2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if usage.Spills() == before {
		t.Fatal("the scan did not spill before the cancel")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("a canceled scan left %v in $TMPDIR", left)
	}
	sus, err := Consumption(context.Background(), res.Sessions, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := EachRequest(sus, func(*SessionUsage, *usage.Request) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) == 0 || n == 0 {
		t.Errorf("%d requests, %v in $TMPDIR: the scan did not spill", n, left)
	}
	if err := Close(sus); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left %v in $TMPDIR after Close", left)
	}
}

// The one-session report stops too: the estimate pass over a large file
// returns the context's error well before the end of the file.
func TestAnalyzeStopsWhenCanceled(t *testing.T) {
	dir := claudeStore(t, 1, 3<<20)
	res := session.Discover([]session.Root{{Path: dir}}, false)
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last atomic.Int64
	var size int64
	_, err := Analyze(ctx, res.Sessions[0], Options{Heuristic: true, Progress: func(done, total int64) {
		last.Store(done)
		size = total
		cancel()
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if last.Load() == 0 || last.Load() > size/2 {
		t.Errorf("read %d of %d bytes after the cancel", last.Load(), size)
	}
}

// Ctrl-C reaches the passes over every request after the scan: grouping
// the requests by day (GroupRequests) returns the context's error.
func TestGroupRequestsStopsWhenCanceled(t *testing.T) {
	res := session.Discover([]session.Root{{Path: claudeStore(t, 20, 200<<10)}}, false)
	rq, err := ConsumptionRequests(context.Background(), res.Sessions, nil, nil, func(int, *SessionUsage) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer rq.Close()
	n := 0
	rq.src.each(func(int, *usage.Request) error { n++; return nil })
	if n < 4096 {
		t.Fatalf("%d requests: too few to be stopped", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := GroupRequests(ctx, rq, ByDay, time.UTC, func(int) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if g, err := GroupRequests(context.Background(), rq, ByDay, time.UTC, func(int) bool { return true }); err != nil || g.Len() == 0 {
		t.Errorf("not canceled: %v, %d rows", err, g.Len())
	}
}
