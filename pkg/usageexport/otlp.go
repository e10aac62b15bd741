package usageexport

import (
	"context"
	"fmt"
	"time"

	"github.com/sessctl/sessctl/pkg/stats"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// The metrics a push sends (docs/export.md). Claude Code's own telemetry
// sends the first two under these names, units and "type" values; the
// third is the GenAI semantic conventions' name.
const (
	MetricClaudeTokens = "claude_code.token.usage"
	MetricClaudeCost   = "claude_code.cost.usage"
	MetricGenAITokens  = "gen_ai.client.token.usage"
)

// MetricExporter sends metric data: the OpenTelemetry SDK's OTLP exporters
// (otlpmetrichttp.Exporter) are one.
type MetricExporter interface {
	Export(ctx context.Context, rm *metricdata.ResourceMetrics) error
}

// OTLPOptions says how Push sends.
type OTLPOptions struct {
	Exporter MetricExporter
	// State holds the keys sent before; Push adds the keys it sends and
	// saves it after every batch the exporter accepted.
	State *State
	// Machine is the host.name of the resource.
	Machine string
	// Batch is how many requests one Export call carries (0: 500).
	Batch int
	// Now stamps a request whose record has no time (nil: time.Now).
	Now func() time.Time
	// SaveEvery bounds how often the state file is rewritten during a run
	// (0: 2s); it is always saved at the end, and when a batch fails.
	SaveEvery time.Duration
}

// PushResult is what a Push did.
type PushResult struct {
	Sent, AlreadySent, Batches int
}

// Push sends the requests of rq that the state does not hold as OTLP
// metrics with delta temporality: one data point per request and token
// type, stamped with the request's own time (the point covers the
// millisecond before it), so history is backfilled where it happened.
// After each batch the exporter accepted, the batch's keys are added to
// the state; the state is saved every SaveEvery, at the end, and when the
// run stops on an error or an interrupt: a run cut short sends only the
// rest next time. (A crash that gives no chance to save, SIGKILL or power
// loss, sends again what was accepted since the last save: the state
// cannot be written in the same step as the receiver's answer.)
func Push(ctx context.Context, rq *stats.Requests, opt OTLPOptions) (PushResult, error) {
	var res PushResult
	if opt.Batch <= 0 {
		opt.Batch = 500
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.SaveEvery <= 0 {
		opt.SaveEvery = 2 * time.Second
	}
	b := newBatch(opt.Machine)
	dirty, saved := false, time.Now()
	save := func() error {
		if opt.State == nil || !dirty {
			return nil
		}
		if err := opt.State.Save(); err != nil {
			return fmt.Errorf("sent, and the state not saved (the requests will be sent again): %w", err)
		}
		dirty, saved = false, time.Now()
		return nil
	}
	flush := func() error {
		if b.n == 0 {
			return nil
		}
		if err := opt.Exporter.Export(ctx, b.data()); err != nil {
			return fmt.Errorf("otlp export: %w", err)
		}
		res.Sent += b.n
		res.Batches++
		if opt.State != nil {
			opt.State.Add(b.keys...)
			dirty = true
		}
		b.reset()
		if time.Since(saved) >= opt.SaveEvery {
			return save()
		}
		return nil
	}
	err := Each(rq, opt.Machine, func(r *Row) error {
		if opt.State != nil && opt.State.Has(r.Key) {
			res.AlreadySent++
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		b.add(r, opt.Now)
		if b.n >= opt.Batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	// what the receiver accepted is recorded, whatever stopped the run
	if serr := save(); err == nil {
		err = serr
	}
	return res, err
}

// batch is the data of one Export call.
type batch struct {
	res           *resource.Resource
	n             int
	keys          []string
	claude, genai []metricdata.DataPoint[int64]
	cost          []metricdata.DataPoint[float64]
}

func newBatch(machine string) *batch {
	return &batch{res: resource.NewSchemaless(
		attribute.String("service.name", "sessctl"),
		attribute.String("host.name", machine),
		attribute.Int("sessctl.usage.schema_version", SchemaVersion),
	)}
}

func (b *batch) reset() {
	b.n, b.keys = 0, b.keys[:0]
	b.claude, b.genai, b.cost = b.claude[:0], b.genai[:0], b.cost[:0]
}

// tokenTypes are the token columns, with the "type" value Claude Code
// sends and the gen_ai.token.type value.
var tokenTypes = []struct {
	claude, genai string
	get           func(*Row) int64
}{
	{"input", "input", func(r *Row) int64 { return r.InputTokens }},
	{"output", "output", func(r *Row) int64 { return r.OutputTokens }},
	{"cacheRead", "cache_read", func(r *Row) int64 { return r.CacheReadTokens }},
	{"cacheCreation", "cache_creation", func(r *Row) int64 { return r.CacheCreationTokens }},
}

func (b *batch) add(r *Row, now func() time.Time) {
	t, ok := r.Time()
	if !ok {
		t = now().UTC()
	}
	start := t.Add(-time.Millisecond)
	model := ""
	if r.Model != nil {
		model = *r.Model
	}
	for _, tt := range tokenTypes {
		v := tt.get(r)
		if v == 0 {
			continue
		}
		b.claude = append(b.claude, metricdata.DataPoint[int64]{StartTime: start, Time: t, Value: v,
			Attributes: attribute.NewSet(attribute.String("type", tt.claude), attribute.String("model", model),
				attribute.String("session.id", r.Session), attribute.String("sessctl.agent", r.Agent))})
		b.genai = append(b.genai, metricdata.DataPoint[int64]{StartTime: start, Time: t, Value: v,
			Attributes: attribute.NewSet(attribute.String("gen_ai.token.type", tt.genai),
				attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.response.model", model),
				attribute.String("session.id", r.Session), attribute.String("sessctl.agent", r.Agent))})
	}
	if r.CostUSD != nil && *r.CostUSD != 0 {
		b.cost = append(b.cost, metricdata.DataPoint[float64]{StartTime: start, Time: t, Value: *r.CostUSD,
			Attributes: attribute.NewSet(attribute.String("model", model),
				attribute.String("session.id", r.Session), attribute.String("sessctl.agent", r.Agent))})
	}
	b.keys = append(b.keys, r.Key)
	b.n++
}

func (b *batch) data() *metricdata.ResourceMetrics {
	var ms []metricdata.Metrics
	if len(b.claude) > 0 {
		ms = append(ms,
			metricdata.Metrics{Name: MetricClaudeTokens, Unit: "tokens", Description: "Number of tokens used",
				Data: metricdata.Sum[int64]{Temporality: metricdata.DeltaTemporality, IsMonotonic: true, DataPoints: b.claude}},
			metricdata.Metrics{Name: MetricGenAITokens, Unit: "{token}", Description: "Number of input and output tokens used",
				Data: metricdata.Sum[int64]{Temporality: metricdata.DeltaTemporality, IsMonotonic: true, DataPoints: b.genai}})
	}
	if len(b.cost) > 0 {
		ms = append(ms, metricdata.Metrics{Name: MetricClaudeCost, Unit: "USD", Description: "Cost of the Claude Code session",
			Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality, IsMonotonic: true, DataPoints: b.cost}})
	}
	return &metricdata.ResourceMetrics{Resource: b.res, ScopeMetrics: []metricdata.ScopeMetrics{{
		Scope:   instrumentation.Scope{Name: "github.com/sessctl/sessctl/pkg/usageexport", Version: fmt.Sprint(SchemaVersion)},
		Metrics: ms,
	}}}
}
