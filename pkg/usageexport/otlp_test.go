package usageexport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/stats"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
)

// fakeExporter keeps what it is sent, and fails the call number failAt.
type fakeExporter struct {
	calls, failAt int
	tokens        map[string]int64 // by claude_code type
	genai         map[string]int64 // by gen_ai.token.type
	cost          float64
	points        int
	times         map[int64]bool // point times (Unix ms)
}

func (f *fakeExporter) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	f.calls++
	if f.calls == f.failAt {
		return errors.New("collector unavailable")
	}
	if f.tokens == nil {
		f.tokens, f.genai, f.times = map[string]int64{}, map[string]int64{}, map[int64]bool{}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if d.Temporality != metricdata.DeltaTemporality || !d.IsMonotonic {
					return errors.New(m.Name + " is not a monotonic delta sum")
				}
				for _, p := range d.DataPoints {
					if !p.StartTime.Before(p.Time) {
						return errors.New("a point's start is not before its time")
					}
					f.times[p.Time.UnixMilli()] = true
					switch m.Name {
					case MetricClaudeTokens:
						v, _ := p.Attributes.Value("type")
						f.tokens[v.AsString()] += p.Value
						f.points++
					case MetricGenAITokens:
						v, _ := p.Attributes.Value("gen_ai.token.type")
						f.genai[v.AsString()] += p.Value
					}
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					f.cost += p.Value
				}
			}
		}
	}
	return nil
}

func consumption(t *testing.T) *stats.Requests {
	t.Helper()
	res := session.Discover([]session.Root{{Path: "../../testdata/sessions"}, {Path: "../../testdata/claude-2.1.330"}}, false)
	rq, err := stats.CountedRequests(context.Background(), res.Sessions, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rq.Close() })
	return rq
}

// TestPushOnce: the metrics pushed add up to the rows, and with the state
// file each request is sent once, through a failed batch and a restart.
func TestPushOnce(t *testing.T) {
	rq := consumption(t)
	var want struct {
		in, out, cr, cc int64
		cost            float64
		rows            int
		times           map[int64]bool
	}
	want.times = map[int64]bool{}
	Each(rq, "m", func(r *Row) error {
		want.in += r.InputTokens
		want.out += r.OutputTokens
		want.cr += r.CacheReadTokens
		want.cc += r.CacheCreationTokens
		if r.CostUSD != nil {
			want.cost += *r.CostUSD
		}
		if r.Timestamp != nil {
			want.times[*r.Timestamp] = true
		}
		want.rows++
		return nil
	})
	if want.rows < 10 {
		t.Fatalf("%d rows: too few to batch", want.rows)
	}
	path := filepath.Join(t.TempDir(), "state", "otlp.keys")
	fake := &fakeExporter{failAt: 2}
	now := func() time.Time { return time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC) }

	// the second batch fails: the first is recorded, the run stops
	st, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Push(context.Background(), rq, OTLPOptions{Exporter: fake, State: st, Machine: "m", Batch: 4, Now: now})
	if err == nil || res.Sent != 4 || res.Batches != 1 {
		t.Fatalf("first run: %+v, %v; want 4 sent and the error", res, err)
	}
	// a new process: the state comes from the file
	st, err = LoadState(path)
	if err != nil || st.Len() != 4 {
		t.Fatalf("state after the failed run: %d keys, %v", st.Len(), err)
	}
	res, err = Push(context.Background(), rq, OTLPOptions{Exporter: fake, State: st, Machine: "m", Batch: 4, Now: now})
	if err != nil || res.Sent != want.rows-4 || res.AlreadySent != 4 {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	got := fake.tokens
	if got["input"] != want.in || got["output"] != want.out || got["cacheRead"] != want.cr || got["cacheCreation"] != want.cc {
		t.Errorf("claude_code.token.usage %v, rows in %d out %d cacheRead %d cacheCreation %d", got, want.in, want.out, want.cr, want.cc)
	}
	g := fake.genai
	if g["input"] != want.in || g["output"] != want.out || g["cache_read"] != want.cr || g["cache_creation"] != want.cc {
		t.Errorf("gen_ai.client.token.usage %v", g)
	}
	if d := fake.cost - want.cost; d > 1e-9 || d < -1e-9 {
		t.Errorf("cost %v, rows %v", fake.cost, want.cost)
	}
	for ts := range want.times {
		if !fake.times[ts] {
			t.Errorf("no point at the request time %s", time.UnixMilli(ts).UTC())
		}
	}
	// a third run (cron, the next day) sends nothing
	st, _ = LoadState(path)
	calls := fake.calls
	res, err = Push(context.Background(), rq, OTLPOptions{Exporter: fake, State: st, Machine: "m", Batch: 4, Now: now})
	if err != nil || res.Sent != 0 || res.AlreadySent != want.rows || fake.calls != calls {
		t.Fatalf("third run: %+v, %v, %d export calls", res, err, fake.calls-calls)
	}
}

func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.keys")
	os.WriteFile(p, []byte("not a state\n"), 0o600)
	if _, err := LoadState(p); err == nil || !strings.Contains(err.Error(), "not a sessctl state file") {
		t.Errorf("a foreign file: %v", err)
	}
	os.WriteFile(p, []byte(stateHeader+"\n0123\n"), 0o600)
	if _, err := LoadState(p); err == nil {
		t.Error("a torn key was taken")
	}
	st, err := LoadState(filepath.Join(dir, "new", "s.keys"))
	if err != nil || st.Len() != 0 {
		t.Fatalf("a missing file: %v", err)
	}
	st.Add("0123456789abcdef0123456789abcdef")
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "new", "s.keys"))
	if string(b) != stateHeader+"\n0123456789abcdef0123456789abcdef\n" {
		t.Errorf("state file %q", b)
	}
}

// TestStateKeysSortedAndSmall: the state file is written sorted and
// without repeats whatever order the keys came in (an unsorted file, as
// older sessctl builds wrote, is read too), and a key held costs about its
// 16 bytes, not a string and a map entry.
func TestStateKeysSortedAndSmall(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.keys")
	k := func(i int) string { return fmt.Sprintf("%032x", uint64(i)*0x9e3779b97f4a7c15) }
	os.WriteFile(p, []byte(stateHeader+"\n"+k(3)+"\n"+k(1)+"\n"+k(3)+"\n"), 0o600)
	st, err := LoadState(p)
	if err != nil || st.Len() != 2 || !st.Has(k(1)) || !st.Has(k(3)) || st.Has(k(2)) {
		t.Fatalf("an unsorted file: %d keys, %v", st.Len(), err)
	}
	st.Add(k(2), k(1), k(2))
	if st.Len() != 3 || !st.Has(k(2)) {
		t.Fatalf("after Add: %d keys", st.Len())
	}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	want := []string{k(1), k(2), k(3)}
	slices.Sort(want)
	b, _ := os.ReadFile(p)
	if string(b) != stateHeader+"\n"+strings.Join(want, "\n")+"\n" {
		t.Errorf("state file %q", b)
	}
	if !st.Has(k(2)) || st.Has(k(4)) {
		t.Error("Has after Save")
	}

	// 200,000 keys: about 16 bytes each once saved and loaded again
	const n = 200_000
	for i := 10; i < n+10; i++ {
		st.Add(k(i))
	}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st2, err := LoadState(p)
	if err != nil || st2.Len() != n+3 {
		t.Fatalf("reloaded: %d keys, %v", st2.Len(), err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if per := float64(after.HeapAlloc-before.HeapAlloc) / n; per > 24 {
		t.Errorf("%.1f bytes a key held", per)
	}
	runtime.KeepAlive(st2)
}
