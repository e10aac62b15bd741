package kimi

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

func scan(t *testing.T, lines ...string) *usage.FileUsage {
	t.Helper()
	fu, err := new(usage.Reader).Read(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), "test.jsonl", Home{}, usage.Carries)
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

func itoa(n int) string { return strconv.Itoa(n) }

func TestKimiWireDedupesSubagentEvents(t *testing.T) {
	status := func(id string, in, out int) string {
		return `{"type": "StatusUpdate", "payload": {"context_tokens": 9120, "max_context_tokens": 262144, "token_usage": {"input_other": ` + itoa(in) +
			`, "output": ` + itoa(out) + `, "input_cache_read": 8000, "input_cache_creation": 0}, "message_id": "` + id + `"}}`
	}
	main := scan(t, `{"type": "metadata", "protocol_version": "1.10"}`,
		`{"timestamp": 1793520003.0, "message": `+status("m1", 1120, 40)+`}`,
		`{"timestamp": 1793520004.0, "message": {"type": "SubagentEvent", "payload": {"event": `+status("s1", 300, 20)+`}}}`,
	)
	sub := scan(t, `{"timestamp": 1793520004.0, "message": `+status("s1", 300, 20)+`}`)
	var lg usage.Ledger
	lg.Add(main)
	lg.Add(sub)
	want := session.Usage{Input: 1120 + 300, Output: 60, CacheRead: 16000}
	if got := total(lg.Requests); got != want {
		t.Errorf("totals %+v, want %+v (s1 once)", got, want)
	}
	if main.Context != 9120 || main.Window != 262144 {
		t.Errorf("context %d window %d", main.Context, main.Window)
	}
	// context.jsonl _usage is a gauge, never billing: only wires are read
	s := &session.Session{Agent: session.Kimi, Dir: "/s"}
	for path, want := range map[string]usage.FileClass{
		"/s/context.jsonl":             0,
		"/s/context_1.jsonl":           0,
		"/s/wire.jsonl":                usage.Carries | usage.Gauge,
		"/s/wire.jsonl.2":              usage.Carries | usage.Copy,
		"/s/subagents/a/wire.jsonl":    usage.Carries,
		"/s/subagents/a/context.jsonl": 0,
		"/s/state.json":                0,
	} {
		if got := (Home{}).Classify(s, session.File{Path: path}); got != want {
			t.Errorf("%s: class %b, want %b", path, got, want)
		}
	}
}
