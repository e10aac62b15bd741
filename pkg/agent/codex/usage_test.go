package codex

import (
	"context"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

func scan(t *testing.T, lines ...string) *usage.FileUsage {
	t.Helper()
	fu, err := new(usage.Reader).Read(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), "test.jsonl", Home{}, usage.Carries|usage.CCUsage)
	if err != nil {
		t.Fatal(err)
	}
	return fu
}

func total(reqs []usage.Request) session.Usage {
	var u session.Usage
	for _, r := range reqs {
		u = u.Add(r.Usage)
	}
	return u
}

func codexTC(total, last string) string {
	return `{"timestamp":"2026-11-22T02:59:33.239Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":` + total +
		`,"last_token_usage":` + last + `,"model_context_window":258400},"rate_limits":null}}`
}

func cu(in, cached, out, reas int) string {
	return `{"input_tokens":` + itoa(in) + `,"cached_input_tokens":` + itoa(cached) + `,"output_tokens":` + itoa(out) +
		`,"reasoning_output_tokens":` + itoa(reas) + `,"total_tokens":` + itoa(in+out) + `}`
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestCodexDeltas(t *testing.T) {
	fu := scan(t, `{"timestamp":"2026-11-22T02:59:33.113Z","type":"session_meta","payload":{"id":"x","cwd":"/w"}}`,
		`{"timestamp":"2026-11-22T02:59:33.113Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}`,
		`{"timestamp":"2026-11-22T02:59:33.130Z","type":"turn_context","payload":{"model":"gpt-5.3-codex"}}`,
		codexTC(cu(100, 60, 10, 4), cu(100, 60, 10, 4)),
		codexTC(cu(100, 60, 10, 4), cu(100, 60, 10, 4)), // written twice: adds nothing
		codexTC(cu(250, 160, 30, 4), cu(150, 100, 20, 0)),
		codexTC(cu(250, 160, 30, 4), `{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":6187}`), // synthetic
	)
	var lg usage.Ledger
	lg.Add(fu)
	want := session.Usage{Input: 250 - 160, CacheRead: 160, Output: 30, Reasoning: 4}
	if got := total(lg.Requests); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if fu.Context != 6187 || fu.Window != 258400 || fu.CWD != "/w" {
		t.Errorf("context %d window %d cwd %q", fu.Context, fu.Window, fu.CWD)
	}
	for _, r := range lg.Requests {
		if m := lg.Model(&r); m != "gpt-5.3-codex" {
			t.Errorf("model %q, want the turn_context's", m)
		}
	}
}

func codexRec(resp, u string) string {
	return `{"timestamp":"2026-11-22T02:59:33.174Z","ordinal":12,"type":"token_usage_record","payload":{"thread_id":"x","turn_id":"t","response_id":"` + resp +
		`","usage":` + u + `,"turn_token_usage":` + u + `,"thread_token_usage":` + u + `}}`
}

// viewTotal is the usage of the requests one view counts.
func viewTotal(reqs []usage.Request, cc bool) session.Usage {
	var u session.Usage
	for _, r := range reqs {
		if (cc && r.CCUsage) || (!cc && r.Counted) {
			u = u.Add(r.Usage)
		}
	}
	return u
}

// Codex 0.169's per-response records are what sessctl counts; the
// cumulative token_count view (ccusage's) stays beside them. Here the
// token_count of the second response was lost (its request ended before
// the event, or the line was removed) and a resume restarted the totals
// from the first: the records still have all three responses.
func TestCodexPerResponseRecords(t *testing.T) {
	fu := scan(t, `{"timestamp":"2026-11-22T02:59:33.113Z","type":"session_meta","payload":{"id":"x","cwd":"/w"}}`,
		`{"timestamp":"2026-11-22T02:59:33.130Z","type":"turn_context","payload":{"model":"gpt-5"}}`,
		codexRec("resp_1", cu(100, 60, 10, 4)),
		codexTC(cu(100, 60, 10, 4), cu(100, 60, 10, 4)),
		codexTC(cu(100, 60, 10, 4), cu(100, 60, 10, 4)), // written twice
		codexRec("resp_2", cu(150, 100, 20, 0)),
		// (its token_count is lost)
		codexRec("resp_3", cu(300, 200, 5, 0)),
		codexTC(cu(400, 260, 15, 4), cu(300, 200, 5, 0)), // seeded from the first total
		// a compaction carries a copy of the latest record: not counted again
		`{"timestamp":"2026-11-22T02:59:34.000Z","type":"compacted","payload":{"message":"m","replacement_history":[],"latest_token_usage_record":{"response_id":"resp_3","usage":`+cu(300, 200, 5, 0)+`}}}`,
	)
	records := session.Usage{Input: 40 + 50 + 100, CacheRead: 60 + 100 + 200, Output: 35, Reasoning: 4}
	if got := viewTotal(fu.Requests, false); got != records {
		t.Errorf("sessctl's view %+v, want the sum of the records %+v", got, records)
	}
	cumulative := session.Usage{Input: 40 + 100, CacheRead: 60 + 200, Output: 15, Reasoning: 4}
	if got := viewTotal(fu.Requests, true); got != cumulative {
		t.Errorf("ccusage's view %+v, want the cumulative %+v", got, cumulative)
	}
	if fu.PerResponse != 3 || fu.PerResponseView != records.Total() || fu.CumulativeView != cumulative.Total() {
		t.Errorf("per-response records %d, views %d / %d, want 3, %d / %d", fu.PerResponse, fu.PerResponseView, fu.CumulativeView, records.Total(), cumulative.Total())
	}
	if why := (Home{}).ExplainViews(3, records.Total(), cumulative.Total()); !strings.Contains(why, "token_usage_record") || !strings.Contains(why, "missing") {
		t.Errorf("explanation %q", why)
	}
}

// A file written before 0.169 (no records) is counted by its cumulative
// counters, and one resumed by 0.169 adds the records of the new responses
// without counting their counter changes twice.
func TestCodexRecordsAfterOlderPart(t *testing.T) {
	fu := scan(t, `{"timestamp":"2026-11-22T02:59:33.130Z","type":"turn_context","payload":{"model":"gpt-5"}}`,
		codexTC(cu(100, 60, 10, 4), cu(100, 60, 10, 4)),
		codexRec("resp_2", cu(150, 100, 20, 0)),
		codexTC(cu(250, 160, 30, 4), cu(150, 100, 20, 0)),
	)
	want := session.Usage{Input: 90, CacheRead: 160, Output: 30, Reasoning: 4}
	if got := viewTotal(fu.Requests, false); got != want {
		t.Errorf("sessctl's view %+v, want %+v", got, want)
	}
	if got := viewTotal(fu.Requests, true); got != want {
		t.Errorf("ccusage's view %+v, want %+v", got, want)
	}
	if fu.PerResponse != 1 || fu.PerResponseView != want.Total() || fu.CumulativeView != want.Total() {
		t.Errorf("per-response records %d, views %d / %d, want 1, both %d", fu.PerResponse, fu.PerResponseView, fu.CumulativeView, want.Total())
	}
}
