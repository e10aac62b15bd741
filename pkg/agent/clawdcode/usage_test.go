package clawdcode

import (
	"context"
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

func TestClawdSumsAssistantUsage(t *testing.T) {
	fu := scan(t, `{"uuid":"a","type":"assistant","timestamp":"2026-03-02T09:15:07.031Z","message":{"role":"assistant","content":"x","model":"glm-4.6","usage":{"input_tokens":1820,"output_tokens":42}}}`,
		`{"uuid":"b","type":"assistant","timestamp":"2026-03-02T09:16:07.031Z","message":{"role":"assistant","content":"y","model":"glm-4.6","usage":{"input_tokens":1900,"output_tokens":8}}}`,
		`{"uuid":"c","type":"user","message":{"role":"user","content":"the word usage"}}`,
	)
	if got, want := total(fu.Requests), (session.Usage{Input: 3720, Output: 50}); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
}
