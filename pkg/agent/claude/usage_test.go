package claude

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

// claudeLineOf builds an assistant line the way Claude Code 2.1.114 writes it.
func claudeLineOf(msg, req, usage string, extra string) string {
	r := ""
	if req != "" {
		r = `,"requestId":"` + req + `"`
	}
	return `{"parentUuid":"p","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"` + msg +
		`","type":"message","role":"assistant","content":[{"type":"text","text":"a \"usage\":{ in text"}],"usage":` + usage + `}` +
		r + extra + `,"type":"assistant","uuid":"u","timestamp":"2026-11-22T02:58:38.406Z","sessionId":"s","version":"2.1.114"}`
}

func TestClaudeDedupeKeepsLargestPerResponse(t *testing.T) {
	// one response over three lines with growing output (streaming
	// partials), a second response, and a line without message.id (never
	// deduplicated, as in ccusage)
	fu := scan(t, claudeLineOf("msg_1", "req_1", `{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}`, ""),
		claudeLineOf("msg_1", "req_1", `{"input_tokens":10,"output_tokens":7,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}`, ""),
		claudeLineOf("msg_1", "req_1", `{"input_tokens":10,"output_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}`, ""),
		claudeLineOf("msg_2", "req_2", `{"input_tokens":20,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":2000,"cache_creation":{"ephemeral_5m_input_tokens":30,"ephemeral_1h_input_tokens":12}}`, ""),
		`{"type":"assistant","timestamp":"2026-11-22T02:58:38.406Z","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"assistant","timestamp":"2026-11-22T02:58:38.406Z","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`,
	)
	if fu.UsageLines != 6 || fu.RejectedCount != 0 || fu.SessctlOnly != 0 {
		t.Fatalf("usage lines %d, rejected %d, sessctl-only %d", fu.UsageLines, fu.RejectedCount, fu.SessctlOnly)
	}
	var lg usage.Ledger
	lg.Add(fu)
	if len(lg.Requests) != 4 {
		t.Fatalf("got %d requests, want 4 (msg_1, msg_2, two without id)", len(lg.Requests))
	}
	// msg_1 keeps output 7; msg_2's cache creation is the 5m+1h split (42),
	// not the flat field (0), 12 of it written to the 1-hour cache
	want := session.Usage{Input: 10 + 20 + 1 + 1, Output: 7 + 5 + 1 + 1, CacheRead: 1000 + 2000, CacheCreation: 100 + 42, CacheCreation1h: 12}
	if got := total(lg.Requests); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if got := total(lg.CCUsageView()); got != want {
		t.Errorf("ccusage view %+v, want %+v", got, want)
	}
}

func TestClaudeDedupeAcrossFilesAndSidechain(t *testing.T) {
	u := `{"input_tokens":5,"output_tokens":5}`
	a := scan(t, claudeLineOf("msg_1", "req_1", u, ""))
	// the same response replayed in a resumed file: counted once, in the
	// first file (equal totals: the first one stays)
	b := scan(t, claudeLineOf("msg_1", "req_1", u, ""))
	// a sidechain copy under a new requestId: the message id alone matches
	c := scan(t, strings.Replace(claudeLineOf("msg_1", "req_9", `{"input_tokens":50,"output_tokens":5}`, ""), `"isSidechain":false`, `"isSidechain":true`, 1))
	var lg usage.Ledger
	lg.Add(a)
	lg.Add(b)
	lg.Add(c)
	if len(lg.Requests) != 1 || lg.Requests[0].File != 0 || lg.Requests[0].Usage.Input != 5 {
		t.Fatalf("requests %+v: want one, from file 0, the non-sidechain one (input 5)", lg.Requests)
	}
}

func TestClaudeBadInputAndCCUsageQuirks(t *testing.T) {
	spaced := `{"parentUuid": null, "message": {"id": "msg_s", "model": "claude-opus-4-8", "usage": {"input_tokens": 20, "output_tokens": 7}}, "type": "assistant", "timestamp": "2026-11-22T02:58:38.406Z"}`
	fu := scan(t, spaced, // ccusage drops it (no exact "usage":{ bytes); sessctl counts it
		claudeLineOf("msg_n", "", `{"input_tokens":3,"output_tokens":4}`, `,"costUSD":null`), // ccusage: null key
		claudeLineOf("msg_a", "", `{"input_tokens":"40","output_tokens":9}`, ""),             // a string
		claudeLineOf("msg_b", "", `{"input_tokens":40,"output_tokens":-9}`, ""),              // negative
		claudeLineOf("msg_c", "", `{"input_tokens":null,"output_tokens":9}`, ""),             // null
		claudeLineOf("msg_d", "", `{"input_tokens":4.5,"output_tokens":9}`, ""),              // fraction
		claudeLineOf("msg_e", "", `{"input_tokens":99999999999999,"output_tokens":1}`, ""),   // absurd
		claudeLineOf("msg_f", "", `{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":null}`, ""),
		`{"type":"assistant","message": {"usage":{ GARBAGE`,
		`not json at all`,
	)
	if fu.RejectedCount != 6 {
		t.Errorf("rejected %d lines %v, want 6 (string, negative, null, fraction, absurd, corrupt)", fu.RejectedCount, fu.Rejected)
	}
	// the fast scan looks only at lines that can carry usage: the garbled
	// usage line (9) counts, "not json at all" is skipped unseen
	if fu.Corrupt != 1 || fu.Rejected[len(fu.Rejected)-1].Line != 9 || fu.Lines != 10 {
		t.Errorf("corrupt %d, last rejection %+v, lines %d; want 1, line 9, 10", fu.Corrupt, fu.Rejected[len(fu.Rejected)-1], fu.Lines)
	}
	if fu.SessctlOnly != 3 || fu.CCUsageOnly != 1 {
		t.Errorf("sessctl-only %d (want 3: spaced, costUSD null, cache null), ccusage-only %d (want 1: absurd)", fu.SessctlOnly, fu.CCUsageOnly)
	}
	for _, d := range fu.Rejected {
		if d.Reason == "" || d.Line == 0 {
			t.Errorf("a rejection without line or reason: %+v", d)
		}
	}
	var lg usage.Ledger
	lg.Add(fu)
	if got, want := total(lg.Requests), (session.Usage{Input: 20 + 3 + 1, Output: 7 + 4 + 1}); got != want {
		t.Errorf("sessctl %+v, want %+v", got, want)
	}
	if got, want := total(lg.CCUsageView()), (session.Usage{Input: 99999999999999, Output: 1}); got != want {
		t.Errorf("ccusage view %+v, want %+v", got, want)
	}
}
