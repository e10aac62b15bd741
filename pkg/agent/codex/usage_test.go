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
