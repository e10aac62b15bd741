package claude

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/session"
)

// v330 is a hand-written Claude Code 2.1.330 session: three turns with the
// six record types 2.1.330 added, cost-states that add up the usage lines
// before them, and a custom-title at the end.
const v330 = "testdata/v2.1.330/3a0b2c1d-0000-4000-8000-000000000330.jsonl"

func TestDecode330(t *testing.T) {
	for _, typ := range []string{"api-request", "api-request-shape", "api-request-blob", "cost-state", "tools-used", "atis-latch"} {
		if !(Home{}).KnownType(typ) {
			t.Errorf("%s is not a known type", typ)
		}
		r := decodeLine(t, `{"type":"`+typ+`","sessionId":"s"}`)
		if r.Kind != session.KindMetadata || r.Type != typ {
			t.Errorf("%s: kind %v type %q, want metadata", typ, r.Kind, r.Type)
		}
	}
	r := decodeLine(t, `{"type":"api-request","sessionId":"s","id":"r","shapeHash":"h","params":{"model":"claude-opus-5-5","max_tokens":128000}}`)
	if r.Model != "claude-opus-5-5" {
		t.Errorf("api-request model %q", r.Model)
	}
	if r := decodeLine(t, `{"type":"api-request","params":"odd"}`); r.Kind != session.KindMetadata || r.Model != "" {
		t.Errorf("api-request with odd params: %+v", r)
	}
	if r := decodeLine(t, `{"type":"cost-state","sessionId":"s"}`); session.IsUUID(r.UUID) || r.Usage != nil {
		t.Errorf("a cost-state is not a message with usage: %+v", r)
	}
}

func TestClientTotals(t *testing.T) {
	const ok = `{"type":"cost-state","sessionId":"s","totalCostUSD":1,"modelUsage":{"claude-opus-5-5":{"inputTokens":3,"outputTokens":4,"thinkingTokens":1,"cacheReadInputTokens":5,"cacheCreationInputTokens":6,"costUSD":1},"claude-haiku-4-5":{"inputTokens":1,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0}}}`
	r := decodeLine(t, ok)
	got, src, valid := Home{}.ClientTotals(&r)
	if !valid || src != "cost-state" || len(got) != 2 {
		t.Fatalf("valid cost-state: %v %q %v", got, src, valid)
	}
	if u := got["claude-opus-5-5"]; u != (session.Usage{Input: 3, Output: 4, CacheRead: 5, CacheCreation: 6, Reasoning: 1}) {
		t.Errorf("opus totals %+v", u)
	}
	// what the client's own schema rejects, it does not restore
	for name, line := range map[string]string{
		"negative":      strings.Replace(ok, `"inputTokens":3`, `"inputTokens":-3`, 1),
		"fraction":      strings.Replace(ok, `"inputTokens":3`, `"inputTokens":3.5`, 1),
		"string":        strings.Replace(ok, `"inputTokens":3`, `"inputTokens":"3"`, 1),
		"missing":       strings.Replace(ok, `"inputTokens":3,`, ``, 1),
		"too large":     strings.Replace(ok, `"inputTokens":3`, `"inputTokens":1e16`, 1),
		"control char":  strings.Replace(ok, `claude-haiku-4-5`, `claude\u0007haiku`, 1),
		"no modelUsage": `{"type":"cost-state","sessionId":"s"}`,
		"other type":    strings.Replace(ok, `"cost-state"`, `"tools-used"`, 1),
		"not an object": strings.Replace(ok, `{"inputTokens":1,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0}`, `[]`, 1),
	} {
		r := decodeLine(t, line)
		if _, _, valid := (Home{}).ClientTotals(&r); valid {
			t.Errorf("%s: accepted %s", name, line)
		}
	}
}

// TestRevert330 reverts the hand-written 2.1.330 session before turn 1:
// the file is the part before the cut, byte for byte, then the newest
// cost-state and the custom-title from after it, unchanged; the request
// journal, the latches and the older cost-states of turns 1 and 2 go.
func TestRevert330(t *testing.T) {
	data, err := os.ReadFile(v330)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(v330))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := checkpoint.PlanRevert(context.Background(), path, session.Claude, 1, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Write(bytes.NewReader(data), &out, time.Now()); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	// turn 1 starts at line 15 (its queue-operation); lines 32 and 33 are
	// the newest cost-state and the custom-title
	want := strings.Join(lines[:14], "") + lines[31] + lines[32]
	if out.String() != want {
		t.Errorf("reverted file:\n%s\nwant:\n%s", out.String(), want)
	}
	if p.KeptAfterCut != 2 || p.NewSize(int64(len(data))) != int64(len(want)) {
		t.Errorf("kept %d after the cut, predicted size %d, want 2 and %d", p.KeptAfterCut, p.NewSize(int64(len(data))), len(want))
	}
	if p.RemovedRecords != 33-14-2 {
		t.Errorf("removed %d records, want %d", p.RemovedRecords, 33-14-2)
	}

	// without a cost-state after the cut nothing but the title is kept
	p, err = checkpoint.PlanRevert(context.Background(), path, session.Claude, 2, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := p.Write(bytes.NewReader(data), &out, time.Now()); err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(lines[:23], "") + lines[31] + lines[32]; out.String() != want {
		t.Errorf("revert before turn 2:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestReal330Files decodes the sessions the real Claude Code 2.1.330 wrote
// (testdata/claude-2.1.330): no record of an unknown type, every
// cost-state one the client would restore, and in the session sessctl
// never rewrote, the newest cost-state's input, output and cache reads
// are the sums of the usage lines (each response once). Cache writes
// differ there: the fake server's split is all zeros (README).
func TestReal330Files(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/claude-2.1.330/projects/*/*.jsonl")
	if len(files) != 3 {
		t.Fatalf("%d files of Claude Code 2.1.330, want 3", len(files))
	}
	all := map[string]int{}
	for _, f := range files {
		var types = map[string]int{}
		var client map[string]session.Usage
		seen := map[string]bool{}
		var sum session.Usage
		err := session.ReadFileContext(context.Background(), f, Home{}, func(r *session.Record) error {
			if r.Kind == session.KindUnknown || r.Kind == session.KindCorrupt {
				t.Errorf("%s: line %d: %v record of type %q", filepath.Base(f), r.Line.Num, r.Kind, r.Type)
			}
			types[r.Type]++
			if r.Type == "cost-state" {
				u, _, ok := Home{}.ClientTotals(r)
				if !ok {
					t.Errorf("%s: line %d: a cost-state the client would not restore", filepath.Base(f), r.Line.Num)
				}
				client = u
			}
			if r.Usage != nil && !seen[r.MessageID] {
				seen[r.MessageID] = true
				sum = sum.Add(*r.Usage)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for typ, n := range types {
			all[typ] += n
		}
		if strings.Contains(f, "f6f4eaf6") {
			c := client["claude-opus-5-5"]
			if c.Input != sum.Input || c.Output != sum.Output || c.CacheRead != sum.CacheRead || len(client) != 1 {
				t.Errorf("%s: client totals %+v, usage lines %+v", filepath.Base(f), client, sum)
			}
		}
	}
	for _, typ := range []string{"api-request", "api-request-shape", "api-request-blob", "cost-state", "tools-used", "atis-latch"} {
		if all[typ] == 0 {
			t.Errorf("no %s record in the files", typ)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	for v, want := range map[string]bool{
		"2.1.330": true, "2.1.331": true, "2.2.0": true, "3.0.0": true, "2.1.197": false, "2.0.999": false,
		"1.9.400": false, "": false, "2.1": false, "2.1.x": false, "2.1.330-beta": false,
	} {
		if got := versionAtLeast(v, 2, 1, 330); got != want {
			t.Errorf("versionAtLeast(%q, 2.1.330) = %v", v, got)
		}
	}
}
