package stats

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// The hand-written Claude Code 2.1.330 session of the Claude home: four
// responses (input 10+12+3+5 = 30, output 5+6+4+5 = 20, cache read
// 100+150+200+300 = 750, cache write 50+20+10+0 = 80, each split 5m/1h
// adding up), and a newest cost-state (line 32) with exactly those totals.
const v330 = "../agent/claude/testdata/v2.1.330/3a0b2c1d-0000-4000-8000-000000000330.jsonl"

func TestClientCheckAgrees(t *testing.T) {
	rep := analyze(t, v330)
	cc := rep.ClientCheck
	if cc == nil {
		t.Fatal("no client check")
	}
	want := map[string]session.Usage{"claude-opus-5-5": {Input: 30, Output: 20, CacheRead: 750, CacheCreation: 80}}
	if cc.Source != "cost-state" || cc.Line != 32 || !cc.Agree || len(cc.Differences) != 0 ||
		!reflect.DeepEqual(cc.Client, want) || !reflect.DeepEqual(cc.Counted, want) {
		t.Errorf("client check %+v", cc)
	}
	if rep.Model != "claude-opus-5-5" || rep.Window.Tokens != 1_000_000 {
		t.Errorf("model %q window %d, want claude-opus-5-5 with 1,000,000", rep.Model, rep.Window.Tokens)
	}
}

// TestClientCheckDisagrees: the same session cut after turn 1 (line 23)
// with turn 2's cost-state kept, as a revert without its rotation leaves
// it: the client counted turn 2's response (input 5, output 5, cache read
// 300), the file no longer has it.
func TestClientCheckDisagrees(t *testing.T) {
	data, err := os.ReadFile(v330)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	path := filepath.Join(t.TempDir(), "3a0b2c1d-0000-4000-8000-000000000330.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:23], "")+lines[31]), 0o600); err != nil {
		t.Fatal(err)
	}
	cc := analyze(t, path).ClientCheck
	if cc == nil || cc.Agree || cc.Line != 24 {
		t.Fatalf("client check %+v", cc)
	}
	want := []ClientDiff{
		{Model: "claude-opus-5-5", Field: "input_tokens", Client: 30, Counted: 25, Difference: 5},
		{Model: "claude-opus-5-5", Field: "output_tokens", Client: 20, Counted: 15, Difference: 5},
		{Model: "claude-opus-5-5", Field: "cache_read_tokens", Client: 750, Counted: 450, Difference: 300},
	}
	if !reflect.DeepEqual(cc.Differences, want) {
		t.Errorf("differences %+v\nwant %+v", cc.Differences, want)
	}
}

func TestClientCheckModels(t *testing.T) {
	cc := newClientCheck("cost-state", 7,
		map[string]session.Usage{"a": {Input: 1}, "b": {Output: 2}},
		map[string]session.Usage{"a": {Input: 1}, "c": {CacheRead: 3}, "d": {}})
	want := []ClientDiff{
		{Model: "b", Field: "output_tokens", Client: 2, Counted: 0, Difference: 2},
		{Model: "c", Field: "cache_read_tokens", Client: 0, Counted: 3, Difference: -3},
	}
	if cc.Agree || !reflect.DeepEqual(cc.Differences, want) {
		t.Errorf("differences %+v\nwant %+v", cc.Differences, want)
	}
	if _, ok := cc.Counted["d"]; ok {
		t.Error("a model with no tokens on either side is listed")
	}
}

func TestNoClientCheckWithoutCostState(t *testing.T) {
	if rep := analyze(t, "../../testdata/sessions/claude/projects/-home-alice-src-web/5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl"); rep.ClientCheck != nil {
		t.Errorf("client check on a 2.1.197-style file: %+v", rep.ClientCheck)
	}
}
