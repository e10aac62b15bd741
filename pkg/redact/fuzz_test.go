package redact_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakesecret"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/redact"
	"github.com/sessctl/sessctl/pkg/session"
)

// FuzzFile: whatever the file, redact keeps its line count and line
// endings, leaves valid JSON lines valid JSON, copies a line it reports no
// secret in byte for byte, and a second pass finds nothing more to change
// (every agent: Kimi's lines may change style).
func FuzzFile(f *testing.F) {
	for _, c := range fakesecret.Cases() {
		f.Add(`{"role":"user","content":` + jsonString(c.Line()) + `}` + "\n" + `{"a":1}`)
		f.Add(`{"role": "_system_prompt", "content": ` + jsonString(c.Line()) + `}` + "\r\n")
		f.Add(`{"broken":` + c.Line() + "\n")
	}
	f.Add("{\"a\":\"tok\\u0065n=\\\"abcdefgh\\\"\"}\n\n[1,2]\n\"x\"")
	d, err := redact.Default()
	if err != nil {
		f.Fatal(err)
	}
	agents := []session.Agent{session.Claude, session.Codex, session.Kimi, session.Clawdcode}
	f.Fuzz(func(t *testing.T, in string) {
		agent := agents[len(in)%len(agents)]
		var out bytes.Buffer
		rep, err := redact.File(context.Background(), strings.NewReader(in), &out, agent, d)
		if err != nil {
			return // a line the two parsers disagree on is refused whole
		}
		inLines, outLines := strings.SplitAfter(in, "\n"), strings.SplitAfter(out.String(), "\n")
		if len(inLines) != len(outLines) {
			t.Fatalf("%d lines became %d", len(inLines), len(outLines))
		}
		hit := map[int]bool{}
		for _, h := range rep.Hits {
			hit[h.Line] = true
		}
		for i := range inLines {
			a, b := inLines[i], outLines[i]
			if !hit[i+1] && a != b {
				t.Fatalf("line %d changed without a finding:\n%q\n%q", i+1, a, b)
			}
			if strings.HasSuffix(a, "\r\n") != strings.HasSuffix(b, "\r\n") || strings.HasSuffix(a, "\n") != strings.HasSuffix(b, "\n") {
				t.Fatalf("line %d lost its line ending", i+1)
			}
			ra, rb := []byte(strings.TrimRight(a, "\r\n")), []byte(strings.TrimRight(b, "\r\n"))
			if jsonl.Classify(ra, true) == jsonl.OK && jsonl.Classify(rb, true) != jsonl.OK {
				t.Fatalf("line %d is no longer a JSON object: %q", i+1, rb)
			}
		}
		var again bytes.Buffer
		rep2, err := redact.File(context.Background(), strings.NewReader(out.String()), &again, agent, d)
		if err != nil {
			t.Fatal(err)
		}
		if again.String() != out.String() {
			t.Fatalf("a second pass changed more (%d hits): %q", len(rep2.Hits), again.String())
		}
	})
}
