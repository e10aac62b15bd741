// Package otlp proves `sessctl export --usage --otlp` against the OTLP
// receiver of the OpenTelemetry Collector itself (its otlpreceiver module,
// feeding a consumertest sink): what arrives adds up to `stats --all`, at
// the requests' own times, and a second cron run sends nothing new.
//
// It is a module of its own so that the Collector's dependencies stay out
// of sessctl's go.mod; it runs sessctl as a program, built from the
// repository (or $SESSCTL_BIN). scripts/e2e-otlp.sh runs it (make
// e2e-otlp, .ci/run).
package otlp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// sessctl returns the sessctl program to run: $SESSCTL_BIN, or one built
// from the repository (once for all tests).
func sessctl(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("SESSCTL_BIN"); b != "" {
		return b
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sessctl-otlp-")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "sessctl")
		cmd := exec.Command("go", "build", "-o", built, "./cmd/sessctl")
		cmd.Dir = "../.."
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
	os.Exit(code)
}

// roots are the stores to push: $OTLP_ROOTS (separated by ':') or the
// repository's testdata, which holds sessions of all four agents.
func roots() []string {
	if r := os.Getenv("OTLP_ROOTS"); r != "" {
		return strings.Split(r, ":")
	}
	repo, _ := filepath.Abs("../..")
	return []string{filepath.Join(repo, "testdata", "sessions"), filepath.Join(repo, "testdata", "claude-2.1.330")}
}

func run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	for _, r := range roots() {
		args = append(args, "--root", r)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sessctl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// receiver starts the Collector's OTLP receiver, OTLP/HTTP only, on a free
// loopback port, and returns its URL and the sink that gets the metrics.
func receiver(t *testing.T) (string, *consumertest.MetricsSink) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC = configoptional.None[configgrpc.ServerConfig]()
	http := cfg.Protocols.HTTP.Get()
	if http == nil {
		http = cfg.Protocols.HTTP.GetOrInsertDefault()
	}
	http.ServerConfig.NetAddr.Endpoint = addr
	cfg.Protocols.HTTP = configoptional.Some(*http)
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return "http://" + addr, sink
}

// received is what the sink holds, summed.
type received struct {
	claude, genai map[string]int64 // tokens by type
	cost          float64
	points        int
	times         map[int64]bool // point times, Unix ms
	hosts         map[string]bool
}

func sum(t *testing.T, sink *consumertest.MetricsSink) received {
	t.Helper()
	got := received{claude: map[string]int64{}, genai: map[string]int64{}, times: map[int64]bool{}, hosts: map[string]bool{}}
	for _, md := range sink.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			rm := rms.At(i)
			if h, ok := rm.Resource().Attributes().Get("host.name"); ok {
				got.hosts[h.Str()] = true
			}
			sms := rm.ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					if m.Type() != pmetric.MetricTypeSum {
						t.Fatalf("%s is a %s, not a sum", m.Name(), m.Type())
					}
					s := m.Sum()
					if s.AggregationTemporality() != pmetric.AggregationTemporalityDelta || !s.IsMonotonic() {
						t.Fatalf("%s: temporality %s, monotonic %v", m.Name(), s.AggregationTemporality(), s.IsMonotonic())
					}
					dps := s.DataPoints()
					for p := 0; p < dps.Len(); p++ {
						dp := dps.At(p)
						if dp.StartTimestamp() >= dp.Timestamp() {
							t.Fatalf("%s: a point starts at %s and ends at %s", m.Name(), dp.StartTimestamp(), dp.Timestamp())
						}
						got.times[dp.Timestamp().AsTime().UnixMilli()] = true
						got.points++
						str := func(k string) string {
							v, _ := dp.Attributes().Get(k)
							return v.AsString()
						}
						switch m.Name() {
						case "claude_code.token.usage":
							got.claude[str("type")] += dp.IntValue()
						case "gen_ai.client.token.usage":
							got.genai[str("gen_ai.token.type")] += dp.IntValue()
						case "claude_code.cost.usage":
							got.cost += dp.DoubleValue()
						default:
							t.Fatalf("unexpected metric %s", m.Name())
						}
					}
				}
			}
		}
	}
	return got
}

type totals struct {
	Input         int64   `json:"input_tokens"`
	Output        int64   `json:"output_tokens"`
	CacheRead     int64   `json:"cache_read_tokens"`
	CacheCreation int64   `json:"cache_creation_tokens"`
	Requests      int     `json:"requests"`
	CostUSD       float64 `json:"cost_usd"`
}

func statsAll(t *testing.T, bin string) totals {
	t.Helper()
	var d struct {
		Recorded totals `json:"recorded"`
	}
	if err := json.Unmarshal([]byte(run(t, bin, "stats", "--all", "--json", "--no-progress")), &d); err != nil {
		t.Fatal(err)
	}
	if d.Recorded.Requests == 0 {
		t.Fatal("stats --all counts no request: the test would prove nothing")
	}
	return d.Recorded
}

// rowTimes are the timestamps of the rows of the NDJSON export that carry
// tokens (a request of zero tokens, a client's synthetic reply, sends no
// point: a delta of 0 adds nothing).
func rowTimes(t *testing.T, bin string) (map[int64]bool, int) {
	t.Helper()
	times, untimed := map[int64]bool{}, 0
	for _, line := range strings.Split(strings.TrimSpace(run(t, bin, "export", "--usage", "--format", "ndjson")), "\n") {
		var r struct {
			Timestamp *string `json:"timestamp"`
			totals
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Input+r.Output+r.CacheRead+r.CacheCreation == 0 {
			continue
		}
		if r.Timestamp == nil {
			untimed++
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, *r.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		times[ts.UnixMilli()] = true
	}
	return times, untimed
}

func check(t *testing.T, what string, got received, want totals) {
	t.Helper()
	for name, byType := range map[string]map[string]int64{
		"claude_code.token.usage":   {"input": got.claude["input"], "output": got.claude["output"], "cacheRead": got.claude["cacheRead"], "cacheCreation": got.claude["cacheCreation"]},
		"gen_ai.client.token.usage": {"input": got.genai["input"], "output": got.genai["output"], "cacheRead": got.genai["cache_read"], "cacheCreation": got.genai["cache_creation"]},
	} {
		if byType["input"] != want.Input || byType["output"] != want.Output || byType["cacheRead"] != want.CacheRead || byType["cacheCreation"] != want.CacheCreation {
			t.Errorf("%s: %s %v, stats --all %+v", what, name, byType, want)
		} else {
			t.Logf("%s: %s = stats --all: input %d, output %d, cache read %d, cache creation %d", what, name, want.Input, want.Output, want.CacheRead, want.CacheCreation)
		}
	}
	if math.Abs(got.cost-want.CostUSD) > 1e-6 {
		t.Errorf("%s: claude_code.cost.usage %.9f, stats --all %.9f", what, got.cost, want.CostUSD)
	} else {
		t.Logf("%s: claude_code.cost.usage %.6f = stats --all %.6f", what, got.cost, want.CostUSD)
	}
}

// TestPushToCollector: one push sends everything stats counts, at the
// requests' own times; the next run sends nothing.
func TestPushToCollector(t *testing.T) {
	bin := sessctl(t)
	want := statsAll(t, bin)
	url, sink := receiver(t)
	state := filepath.Join(t.TempDir(), "state", "otlp.keys")

	out := run(t, bin, "export", "--usage", "--otlp", url, "--state", state, "--machine", "e2e-host")
	t.Logf("first run: %s", strings.TrimSpace(out))
	got := sum(t, sink)
	check(t, "first run", got, want)
	if len(got.hosts) != 1 || !got.hosts["e2e-host"] {
		t.Errorf("host.name %v, want e2e-host", got.hosts)
	}
	times, untimed := rowTimes(t, bin)
	for ts := range times {
		if !got.times[ts] {
			t.Errorf("no point at the request time %s", time.UnixMilli(ts).UTC())
		}
	}
	if untimed == 0 && len(got.times) != len(times) {
		t.Errorf("points at %d times, the requests have %d", len(got.times), len(times))
	}

	points := got.points
	out = run(t, bin, "export", "--usage", "--otlp", url, "--state", state, "--machine", "e2e-host")
	t.Logf("second run: %s", strings.TrimSpace(out))
	if !strings.HasPrefix(out, "sent 0 requests") {
		t.Errorf("second run: %s", out)
	}
	if n := sum(t, sink).points; n != points {
		t.Errorf("the second run sent %d points more", n-points)
	}
}

// TestPushInParts: a run that sent part of the history (one agent) and a
// later run that sends the rest deliver every request exactly once.
func TestPushInParts(t *testing.T) {
	bin := sessctl(t)
	want := statsAll(t, bin)
	url, sink := receiver(t)
	state := filepath.Join(t.TempDir(), "otlp.keys")
	first := run(t, bin, "export", "--usage", "--agent", "claude", "--otlp", url, "--state", state)
	rest := run(t, bin, "export", "--usage", "--otlp", url, "--state", state)
	t.Logf("claude only: %s; then all: %s", strings.TrimSpace(first), strings.TrimSpace(rest))
	if strings.HasPrefix(first, "sent 0 ") || !strings.Contains(rest, "sent before") || strings.Contains(rest, " 0 sent before") {
		t.Errorf("the parts are not parts: %q, %q", first, rest)
	}
	check(t, "in parts", sum(t, sink), want)
}
