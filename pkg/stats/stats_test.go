package stats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

func repoDir(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func samples(t *testing.T) string {
	dir := filepath.Join(repoDir(t), "..", "shared", "samples")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("shared samples not available")
	}
	return dir
}

func one(t *testing.T, path string) *session.Session {
	t.Helper()
	res := session.DiscoverPaths([]string{path})
	if len(res.Sessions) != 1 {
		t.Fatalf("%s: %d sessions (errors %v)", path, len(res.Sessions), res.Errors)
	}
	return res.Sessions[0]
}

func analyze(t *testing.T, path string) *Report {
	t.Helper()
	rep, err := Analyze(context.Background(), one(t, path), Options{Top: 5, Heuristic: true})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Hand check, Claude Code 2.1.197 (39b7004e…): the file holds two responses.
// msg_93fe… is written on lines 6 and 7 with the same usage (input 167,
// output 53, cache creation 1,505 flat with a 5m/1h split of 0+0, cache read
// 17,671); msg_8341… on line 9 (181, 62, 1,637 flat, split 0+0, 17,671).
// Counted once each: input 167+181 = 348, output 53+62 = 115, cache read
// 2×17,671 = 35,342, cache creation 0 (the split wins over the flat field,
// as in ccusage) — 35,805 in all, which is also what ccusage 20.0.24 prints.
// Context now = the last assistant usage: 181 + 1,637 + 17,671 + 62 = 19,551
// (the flat cache creation: it is what the prompt held).
func TestHandCheckClaude(t *testing.T) {
	dir := samples(t)
	rep := analyze(t, filepath.Join(dir, "real-clients/claude-home/claude/projects/-home-dev-work-demo/39b7004e-999e-4837-9dc6-1fa1543f13f8.jsonl"))
	got := rep.Consumption.Totals
	if got.Input != 348 || got.Output != 115 || got.CacheRead != 35342 || got.CacheCreation != 0 || got.Total() != 35805 || got.Requests != 2 {
		t.Errorf("consumption %+v", got)
	}
	if u := got.ByModel.Get("claude-opus-4-8"); u.Total() != 35805 {
		t.Errorf("by model %+v", got.ByModel)
	}
	c := rep.Context
	if c.Recorded != 19551 || c.Basis != "recorded" {
		t.Errorf("context %+v, want recorded 19,551", c)
	}
	if rep.Window.Tokens != 200000 || rep.Window.Usable != 150000 || rep.Window.CompactAt != 160000 {
		t.Errorf("window %+v", rep.Window)
	}
	if c.Left != 160000-19551 {
		t.Errorf("left %d", c.Left)
	}
	if len(rep.Growth) != 1 || rep.Growth[0].Recorded != 19551 {
		t.Errorf("growth %+v", rep.Growth)
	}
}

// Hand check, Codex 0.169 (02-59-33…): the last token_count (line 47) has
// total_token_usage input 50,396 of which 35,275 cached, output 207 (15 of
// it reasoning), total 50,603: non-cached input 15,121, cache read 35,275,
// output 207 = 50,603, equal to threads.tokens_used and to ccusage. Its
// last_token_usage.total_tokens, 10,433, is the context now, against the
// recorded window of 258,400 (compaction at 80 %: 206,720).
func TestHandCheckCodex(t *testing.T) {
	dir := samples(t)
	rep := analyze(t, filepath.Join(dir, "real-clients/codex-home/codex/sessions/2026/11/22/rollout-2026-11-22T02-59-33-01a20131-d660-7d01-9c2a-095cf6a93b50.jsonl"))
	got := rep.Consumption.Totals
	if got.Input != 15121 || got.CacheRead != 35275 || got.Output != 207 || got.Reasoning != 15 || got.Total() != 50603 {
		t.Errorf("consumption %+v", got)
	}
	if rep.Context.Recorded != 10433 || rep.Window.Tokens != 258400 || rep.Window.Source != "recorded" || rep.Window.CompactAt != 206720 {
		t.Errorf("context %+v window %+v", rep.Context, rep.Window)
	}
	if rep.Model != "gpt-5" || !rep.Estimate.Exact && rep.Estimate.Method != "bytes/4" {
		t.Errorf("model %q estimate %+v", rep.Model, rep.Estimate)
	}
	if len(rep.Growth) != 3 {
		t.Errorf("growth: %d turns, want 3", len(rep.Growth))
	}
}

// Hand check, Kimi (repo testdata, written by hand): wire.jsonl has two
// StatusUpdates: input_other 1,120 + 1,210 = 2,330, output 40 + 15 = 55,
// cache read 8,000 + 8,000 = 16,000; max_context_tokens 262,144, so Kimi
// compacts at min(ceil(0.85 × 262,144), 262,144 − 50,000) = 212,144.
// context.jsonl's last _usage (never summed) is the gauge.
func TestHandCheckKimi(t *testing.T) {
	dir := filepath.Join(repoDir(t), "testdata/sessions/kimi/sessions/e33d5307e458280d2a3ce8298d246f98/3f2c9a1e-7b4d-4e8a-9c61-0d5b2e8f4a17")
	rep := analyze(t, filepath.Join(dir, "context.jsonl"))
	got := rep.Consumption.Totals
	if got.Input != 2330 || got.Output != 55 || got.CacheRead != 16000 || got.CacheCreation != 0 || got.Requests != 2 {
		t.Errorf("consumption %+v", got)
	}
	if rep.Window.Tokens != 262144 || rep.Window.CompactAt != 212144 || rep.Window.Usable != 212144 {
		t.Errorf("window %+v", rep.Window)
	}
	if rep.Context.Basis != "recorded" || rep.Context.Recorded < 0 {
		t.Errorf("context %+v", rep.Context)
	}
}

// Kimi sample ex2 (kimi-cli's own Context class): _usage is written twice
// per step (lines 8, 10, 12, 15, 17); the last one, 13,412 on line 17, ends
// the file, so no text follows it: context now 13,412 + 0 pending.
func TestKimiGauge(t *testing.T) {
	dir := samples(t)
	rep := analyze(t, filepath.Join(dir, "kimi/ex2_compacted_session/context.jsonl"))
	if rep.Context.Recorded != 13412 {
		t.Errorf("context %+v, want 13,412", rep.Context)
	}
	if rep.Consumption.Totals.Requests != 0 {
		t.Errorf("Kimi _usage must never be summed: %+v", rep.Consumption.Totals)
	}
	if rep.GrowthUnit != "checkpoint" || len(rep.Growth) == 0 {
		t.Errorf("growth %s %+v", rep.GrowthUnit, rep.Growth)
	}
}

// Hand check, clawdcode (repo testdata, written by hand): one assistant
// line with usage 1,820 in / 42 out; after the compaction the summary's
// postTokens, 9,120, is the context now.
func TestHandCheckClawdcode(t *testing.T) {
	rep := analyze(t, filepath.Join(repoDir(t), "testdata/sessions/clawdcode/projects/home-alice-app/N-jKgMMEsFVxfvZ5q6lVM.jsonl"))
	got := rep.Consumption.Totals
	if got.Input != 1820 || got.Output != 42 || got.Total() != 1862 {
		t.Errorf("consumption %+v", got)
	}
	if rep.Context.Recorded != 9120 || rep.Context.RecordedSource != "compactMetadata.postTokens" {
		t.Errorf("context %+v", rep.Context)
	}
	if rep.Compactions != 2 {
		t.Errorf("compactions %d, want 2 (boundary and summary)", rep.Compactions)
	}
}

// The damaged real-client files: corrupt lines are counted and shown, not
// fatal; the dangling and glued lines do not break the totals.
func TestCorruptLinesCounted(t *testing.T) {
	dir := samples(t)
	rep := analyze(t, filepath.Join(dir, "real-clients/claude-home/claude/projects/-home-dev-work-demo/850e96c4-25a0-4b28-949f-cd3faf78e68d.jsonl"))
	if rep.Corrupt != 1 || len(rep.CorruptLines) != 1 || rep.CorruptLines[0] != 11 {
		t.Errorf("corrupt %d at %v, want line 11", rep.Corrupt, rep.CorruptLines)
	}
	if rep.Consumption.Totals.Total() != 71557 { // ccusage 20.0.24's figure
		t.Errorf("total %d, want 71,557", rep.Consumption.Totals.Total())
	}
}

func TestTokensByRoleAndTool(t *testing.T) {
	rep := analyze(t, filepath.Join(repoDir(t), "testdata/sessions/clawdcode/projects/home-alice-app/N-jKgMMEsFVxfvZ5q6lVM.jsonl"))
	var sum int64
	for _, r := range rep.ByRole {
		sum += r.Tokens
	}
	if sum != rep.Estimate.Total || sum == 0 {
		t.Errorf("roles sum to %d, estimate total %d", sum, rep.Estimate.Total)
	}
	var read *ToolTokens
	for i := range rep.ByTool {
		if rep.ByTool[i].Name == "Read" {
			read = &rep.ByTool[i]
		}
	}
	// the Read call and its result; "export function add(a, b) { return a +
	// b; }" is 44 bytes: ceil(44/4) = 11 tokens by the heuristic
	if read == nil || read.Calls != 1 || read.Results != 1 || read.ResultTokens != 11 {
		t.Errorf("Read tool %+v", read)
	}
	if rep.Tools.Calls != 1 || rep.Tools.Results != 2 {
		t.Errorf("tools %+v (the orphan result counts under (unknown))", rep.Tools)
	}
	if len(rep.Largest) == 0 || rep.Largest[0].Tokens < rep.Largest[len(rep.Largest)-1].Tokens {
		t.Errorf("largest not sorted: %+v", rep.Largest)
	}
}

func TestConsumptionGroups(t *testing.T) {
	res := session.Discover([]session.Root{{Path: filepath.Join(repoDir(t), "testdata/sessions")}}, false)
	sus, err := Consumption(context.Background(), res.Sessions, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sus) != len(res.Sessions) || len(sus) < 4 {
		t.Fatalf("%d sessions", len(sus))
	}
	var all int64
	for _, su := range sus {
		all += su.Totals.Total()
	}
	for _, by := range []string{BySession, ByProject, ByDay, ByModel, ByAgent} {
		rows, err := Group(sus, by, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for i := range rows.Len() {
			sum += rows.Row(i).Totals.Total()
		}
		if sum != all {
			t.Errorf("--by %s: groups sum to %d, sessions to %d", by, sum, all)
		}
	}
	if _, err := Group(sus, "week", time.UTC); err == nil {
		t.Error("unknown grouping accepted")
	}
}

// By session, a row is a session, largest total first and then by key; a
// session id found twice (Distinct keeps none such in a store, but Group
// is given what it is given) is one row of both, as every other grouping
// sums its groups.
func TestGroupBySession(t *testing.T) {
	su := func(agent session.Agent, id string, input int64) *SessionUsage {
		s := &SessionUsage{Agent: agent, ID: id}
		s.Totals.View = usage.ViewSessctl
		s.Totals.Input = input
		s.Totals.Requests = 1
		s.Totals.ByModel = usage.ByModel{{Model: fmt.Sprint("m", input), Usage: session.Usage{Input: input}}}
		return s
	}
	sus := []*SessionUsage{
		su(session.Claude, "b", 5),
		su(session.Codex, "a", 7),
		su(session.Claude, "a", 5),
		su(session.Claude, "c", 3),
		su(session.Codex, "x", 1),
		su(session.Claude, "c", 4), // c again: one row of 7
		su(session.Kimi, "z", 9),
	}
	g, err := Group(sus, BySession, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		key      string
		sessions int
		total    int64
		models   int
	}
	want := []row{
		{string(session.Kimi) + ":z", 1, 9, 1},
		{"claude:c", 2, 7, 2}, // before codex:a by key, at the same total
		{"codex:a", 1, 7, 1},
		{"claude:a", 1, 5, 1},
		{"claude:b", 1, 5, 1},
		{"codex:x", 1, 1, 1},
	}
	if g.Len() != len(want) {
		t.Fatalf("%d rows, want %d", g.Len(), len(want))
	}
	for i, w := range want {
		r := g.Row(i)
		got := row{r.Key, r.Sessions, r.Totals.Total(), len(r.Totals.ByModel)}
		if got != w {
			t.Errorf("row %d: %+v, want %+v", i, got, w)
		}
		if len(r.Agents) != 1 || r.Key[:len(r.Agents[0])+1] != r.Agents[0]+":" {
			t.Errorf("row %d: agents %v for key %s", i, r.Agents, r.Key)
		}
		if r.Totals.View != usage.ViewSessctl {
			t.Errorf("row %d: view %q", i, r.Totals.View)
		}
	}
	// a session's own totals are not changed by its row
	if sus[3].Totals.Total() != 3 || len(sus[3].Totals.ByModel) != 1 {
		t.Errorf("a merged session's totals changed: %+v", sus[3].Totals)
	}
}

// Growth rows are the turns as `checkpoints` and `revert --checkpoint N`
// number them (issue 10: stats counted from 1, they from 0): on every
// sample and testdata transcript, the rows' numbers and lines are
// pkg/checkpoint's points, rolled-back turns included as -1.
func TestGrowthNumbersAreCheckpoints(t *testing.T) {
	roots := []string{filepath.Join(repoDir(t), "testdata/sessions"), filepath.Join(repoDir(t), "testdata/kimi-code-2.1.0")}
	if dir := filepath.Join(repoDir(t), "..", "shared", "samples"); dirExists(dir) {
		roots = append(roots, dir)
	}
	checked := map[session.Agent]int{}
	for _, root := range roots {
		res := session.Discover([]session.Root{{Path: root}}, false)
		for _, s := range res.Sessions {
			rep, err := Analyze(context.Background(), s, Options{Heuristic: true})
			if err != nil {
				t.Fatal(err)
			}
			l, err := checkpoint.List(context.Background(), s.Main, s.Agent)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, g := range rep.Growth {
				got = append(got, fmt.Sprintf("%d@%d", g.N, g.Line))
			}
			for _, p := range l.Points {
				want = append(want, fmt.Sprintf("%d@%d", p.N, p.Line))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: growth rows %v, checkpoints %v", s.Main, got, want)
			}
			if len(rep.Growth) > 0 && rep.Growth[0].N > 0 && rep.GrowthUnit == "turn" {
				t.Errorf("%s: first turn is %d, not 0", s.Main, rep.Growth[0].N)
			}
			checked[s.Agent] += len(got)
		}
	}
	for _, a := range session.Registered() {
		if checked[a] == 0 {
			t.Errorf("%s: no turns compared", a)
		}
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// Every agent's home gives stats what it asks of homes, so that no
// operation needs to know which agent it reads.
func TestHomesImplementStatsInterfaces(t *testing.T) {
	for _, h := range session.Homes() {
		if _, ok := h.(usage.Scanner); !ok {
			t.Errorf("%s: no usage.Scanner", h.Agent())
		}
		if _, ok := h.(ContextRules); !ok {
			t.Errorf("%s: no stats.ContextRules", h.Agent())
		}
		if _, ok := h.(session.Gauge); !ok {
			t.Errorf("%s: no session.Gauge", h.Agent())
		}
	}
}
