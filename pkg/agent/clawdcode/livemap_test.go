package clawdcode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/livemaptest"
	"github.com/sessctl/sessctl/pkg/session"
)

// ownTranscript has what a live map must keep straight: messages before a
// compact_boundary (not loaded), the summary after it, calls and results
// (a result named after its call, one answered twice), two turns.
func ownTranscript() string {
	n := 0
	line := func(typ, body string) string {
		n++
		return fmt.Sprintf(`{"uuid":"u%02d","parentUuid":"u%02d","sessionId":"S1","timestamp":"2026-11-01T10:00:%02d.000Z","type":%q,"cwd":"/w","version":"0.1.0",%s}`+"\n", n, n-1, n, typ, body)
	}
	return line("user", `"message":{"role":"user","content":"first prompt, a needle"}`) +
		line("tool_use", `"message":{"role":"assistant","content":""},"tool":{"id":"call_1","name":"Read","input":{"file_path":"a"}}`) +
		line("tool_result", `"message":{"role":"assistant","content":""},"toolResult":{"id":"call_1","output":"the needle before"}`) +
		line("system", `"subtype":"compact_boundary","message":{"role":"system","content":"boundary"}`) +
		line("user", `"isCompactSummary":true,"message":{"role":"user","content":"## Summary\nabout a needle"}`) +
		line("user", `"message":{"role":"user","content":"second prompt"}`) +
		line("tool_use", `"message":{"role":"assistant","content":""},"tool":{"id":"call_2","name":"Grep","input":{"pattern":"x"}}`) +
		line("tool_result", `"message":{"role":"assistant","content":""},"toolResult":{"id":"call_2","output":"the needle is here"}`) +
		line("tool_result", `"message":{"role":"assistant","content":""},"toolResult":{"id":"call_2","output":"again"}`) +
		line("user", `"message":{"role":"user","content":"third prompt"}`) +
		line("assistant", `"message":{"role":"assistant","content":"done with the needle"}`)
}

// TestLiveMapAsHistory holds History through a transcript's live map to
// History reading the file (livemaptest.Check), on the repository's
// transcript and ownTranscript. The map must be used: a file that gets
// none fails.
func TestLiveMapAsHistory(t *testing.T) {
	own := filepath.Join(t.TempDir(), "S1.jsonl")
	if err := os.WriteFile(own, []byte(ownTranscript()), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{own, "../../../testdata/sessions/clawdcode/projects/home-alice-app/N-jKgMMEsFVxfvZ5q6lVM.jsonl"}
	wants := map[string]func([]byte) bool{"needle": func(raw []byte) bool { return bytes.Contains(raw, []byte("needle")) }}
	for name, w := range livemaptest.Wants {
		wants[name] = w
	}
	compared := 0
	for k, path := range files {
		b, _, err := buildLiveMap(context.Background(), path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		full, n := livemaptest.Check(t, Home{}, path, liveMapTag, b, wants, nil, k)
		compared += n
		if path == own {
			var d []string
			for _, m := range full {
				d = append(d, fmt.Sprintf("%d:%d", m.Line, m.Turn))
			}
			// the live part: the summary, then turns 1 and 2
			if strings.Join(d, " ") != "5:0 6:1 7:1 8:1 9:1 10:2 11:2" {
				t.Errorf("History of the own transcript: %v", d)
			}
		}
	}
	// a result comes with the call that names it, and with the other
	// result of that call (which forgets the name): the partners
	var lines []string
	err := Home{}.History(context.Background(), own, session.HistoryOptions{
		Want:     func(raw []byte) bool { return bytes.Contains(raw, []byte("needle is")) },
		LiveMaps: &livemaptest.Memory{},
	}, func(m *session.Message) error {
		lines = append(lines, fmt.Sprint(m.Line))
		return nil
	})
	if err != nil || strings.Join(lines, " ") != "7 8 9" {
		t.Errorf("searching the own transcript for its result gave lines %v (%v), want 7 8 9", lines, err)
	}
	if compared < 15 {
		t.Fatalf("only %d messages compared", compared)
	}
	t.Logf("%d files, %d messages compared", len(files), compared)
}
