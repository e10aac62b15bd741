package stats

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/sessctl/sessctl/pkg/session"
)

// The scan holds a sessAcc for every session of the store: what few
// sessions have goes to a sessRare, and the rest fits 40 bytes (it was 80).
func TestSessAccSize(t *testing.T) {
	if n := unsafe.Sizeof(sessAcc{}); n > 40 {
		t.Fatalf("a sessAcc is %d bytes", n)
	}
}

// claudeUsageLine is an assistant line of Claude Code with the usage u
// (JSON), spaced as JSON.Marshal would not when spaced is set.
func claudeUsageLine(msg, u string, spaced bool) string {
	sep := ":"
	if spaced {
		sep = ": "
	}
	return `{"parentUuid":"p","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"` + msg +
		`","type":"message","role":"assistant","content":[{"type":"text","text":"x"}],"usage"` + sep + u +
		`},"requestId":"r` + msg + `","type":"assistant","uuid":"u` + msg + `","timestamp":"2026-11-22T02:58:38.406Z","sessionId":"s","version":"2.1.114"}`
}

// What few sessions have (sessRare) reaches the session's result, and a
// session without any has none of it: lines only ccusage counts (an absurd
// usage), lines only sessctl counts (spaced JSON), damaged lines.
func TestRareCountsReachResults(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-home-u-p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := claudeUsageLine("m1", `{"input_tokens":10,"output_tokens":2}`, false) + "\n"
	rare := plain +
		claudeUsageLine("m2", `{"input_tokens":99999999999999,"output_tokens":1}`, false) + "\n" + // ccusage only
		claudeUsageLine("m3", `{"input_tokens":5,"output_tokens":1}`, true) + "\n" + // sessctl only
		`{"type":"assistant","message":{"id":"m4","usage":{"input_tokens":1` + "\n" // damaged
	for name, body := range map[string]string{
		"0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl": plain,
		"1b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl": rare,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := session.Discover([]session.Root{{Path: root, Agent: session.Claude}}, false)
	if len(res.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(res.Sessions))
	}
	check := func(how string, sus map[string]*SessionUsage) {
		t.Helper()
		p, r := sus["0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"], sus["1b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"]
		if p == nil || r == nil {
			t.Fatalf("%s: results %v", how, sus)
		}
		if p.CCUsageOnly != 0 || p.SessctlOnly != 0 || p.Corrupt != 0 || p.Rejected != 0 || p.RejectedLines != nil || p.SessctlLines != nil || p.UsageLines != 1 {
			t.Errorf("%s: the plain session: %+v", how, p)
		}
		if r.CCUsageOnly != 1 || r.SessctlOnly != 1 || r.Corrupt != 1 || r.Rejected != 2 || len(r.RejectedLines) != 2 || len(r.SessctlLines) != 1 {
			t.Errorf("%s: the other: ccusage only %d (want 1), sessctl only %d (1), corrupt %d (1), rejected %d (2), lines %d (2) and %d (1)",
				how, r.CCUsageOnly, r.SessctlOnly, r.Corrupt, r.Rejected, len(r.RejectedLines), len(r.SessctlLines))
		}
	}
	sus, err := Consumption(context.Background(), res.Sessions, nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*SessionUsage{}
	for _, su := range sus {
		byID[su.ID] = su
	}
	check("Consumption", byID)
	byID = map[string]*SessionUsage{}
	err = ConsumptionEach(context.Background(), session.Slice(res.Sessions), nil, nil, nil, func(i int, su *SessionUsage) error {
		byID[su.ID] = su
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("ConsumptionEach", byID)
}
