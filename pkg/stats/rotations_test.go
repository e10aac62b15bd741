package stats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// Rotations and subagents: spend is counted exactly once whatever a revert
// moved where (issue 10). A rotation that repeats a file adds nothing; what
// only a rotation holds (the turns a revert cut off) is counted, in
// sessctl's view only.

func writeStore(t *testing.T, files map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, lines := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// usageOf is the consumption of the one session under root.
func usageOf(t *testing.T, root string) *SessionUsage {
	t.Helper()
	res := session.Discover([]session.Root{{Path: root}}, false)
	if len(res.Sessions) != 1 {
		var mains []string
		for _, s := range res.Sessions {
			mains = append(mains, s.Main)
		}
		t.Fatalf("%d sessions %v (errors %v)", len(res.Sessions), mains, res.Errors)
	}
	sus, err := Consumption(context.Background(), res.Sessions, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sus[0]
}

func claudeAssistant(id, req string, in, out int, side bool) string {
	ids := ""
	if id != "" {
		ids = `"id":"` + id + `",`
	}
	r := ""
	if req != "" {
		r = `"requestId":"` + req + `",`
	}
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":%v,"message":{%s"model":"claude-opus-4-8","role":"assistant","content":[],"usage":{"input_tokens":%d,"output_tokens":%d}},%s"type":"assistant","uuid":"u-%s-%d","timestamp":"2026-11-01T10:00:0%d.000Z","sessionId":"s","version":"2.1.197"}`,
		side, ids, in, out, r, id, in, in%10)
}

func TestRotationRepeatingTheFileAddsNothing(t *testing.T) {
	claude := []string{
		claudeAssistant("msg_1", "req_1", 10, 1, false),
		claudeAssistant("msg_1", "req_1", 10, 1, false), // the same response over two lines: once
		claudeAssistant("", "", 7, 2, false),            // no message.id: never de-duplicated by key
		claudeAssistant("", "", 7, 2, false),            // written twice: counted twice, as ccusage does
		claudeAssistant("msg_2", "req_2", 20, 3, false),
	}
	const claudeIn, claudeOut = 10 + 7 + 7 + 20, 1 + 2 + 2 + 3
	clawd := []string{
		`{"uuid":"a","type":"assistant","timestamp":"2026-11-01T09:15:07.031Z","message":{"role":"assistant","content":"x","model":"glm-4.6","usage":{"input_tokens":100,"output_tokens":4}}}`,
		`{"uuid":"b","type":"assistant","timestamp":"2026-11-01T09:16:07.031Z","message":{"role":"assistant","content":"y","model":"glm-4.6","usage":{"input_tokens":200,"output_tokens":5}}}`,
	}
	wire := []string{
		`{"timestamp": 1793520003.0, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 11, "output": 1, "input_cache_read": 0, "input_cache_creation": 0}, "message_id": "m1"}}}`,
		`{"timestamp": 1793520004.0, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": 13, "output": 2, "input_cache_read": 0, "input_cache_creation": 0}}}}`,
	}
	for _, c := range []struct {
		name    string
		files   map[string][]string
		in, out int64
	}{
		{"claude", map[string][]string{
			"projects/-w/11111111-1111-4111-8111-111111111111.jsonl":   claude,
			"projects/-w/11111111-1111-4111-8111-111111111111.jsonl.1": claude,
			"projects/-w/11111111-1111-4111-8111-111111111111.jsonl.2": claude[:3],
		}, claudeIn, claudeOut},
		{"clawdcode", map[string][]string{
			".clawdcode/projects/p/N-aaaaaaaaaaaaaaaaaaaa.jsonl":   clawd,
			".clawdcode/projects/p/N-aaaaaaaaaaaaaaaaaaaa.jsonl.1": clawd,
		}, 300, 9},
		{"kimi", map[string][]string{
			"sessions/e33d5307e458280d2a3ce8298d246f98/s1/context.jsonl": {`{"role": "user", "content": "hi"}`},
			"sessions/e33d5307e458280d2a3ce8298d246f98/s1/wire.jsonl":    wire,
			"sessions/e33d5307e458280d2a3ce8298d246f98/s1/wire.jsonl.1":  wire,
		}, 24, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			su := usageOf(t, writeStore(t, c.files))
			if got := su.Totals; got.Input != c.in || got.Output != c.out {
				t.Errorf("sessctl counts %d in / %d out, want %d / %d (the rotations repeat the file)", got.Input, got.Output, c.in, c.out)
			}
			if su.InRotations != nil {
				t.Errorf("in_rotations %+v: a rotation that repeats the file holds nothing of its own", *su.InRotations)
			}
			if len(su.Files) != len(c.files)-strings.Count(fmt.Sprint(c.files), "context.jsonl") {
				t.Errorf("files %v: every usage file, rotations included", su.Files)
			}
		})
	}
}

// A rotation that holds lines the file no longer has (a cut revert) adds
// them, and only them; ccusage's view does not see them.
func TestRotationAddsWhatOnlyItHolds(t *testing.T) {
	main := []string{
		claudeAssistant("msg_1", "req_1", 10, 1, false),
		claudeAssistant("", "", 7, 2, false),
	}
	cut := []string{
		claudeAssistant("msg_2", "req_2", 20, 3, false),
		claudeAssistant("", "", 5, 5, false),
	}
	su := usageOf(t, writeStore(t, map[string][]string{
		"projects/-w/11111111-1111-4111-8111-111111111111.jsonl":   main,
		"projects/-w/11111111-1111-4111-8111-111111111111.jsonl.1": append(append([]string{}, main...), cut...),
	}))
	if got := su.Totals; got.Input != 42 || got.Output != 11 || got.Requests != 4 {
		t.Errorf("sessctl %+v, want 42 in, 11 out in 4 requests", got)
	}
	if r := su.InRotations; r == nil || r.Input != 25 || r.Output != 8 {
		t.Errorf("in_rotations %+v, want 25 in, 8 out", r)
	}
	if cc := su.AsCCUsage; cc == nil || cc.Input != 17 || cc.Output != 3 || cc.View != "ccusage 20.0.24" {
		t.Errorf("ccusage view %+v: it reads the live file only", cc)
	}
	if su.Totals.View != "sessctl" {
		t.Errorf("view %q", su.Totals.View)
	}
}

// A Codex rollout cut by a revert keeps a prefix of its rotation, line for
// line, and Codex resumes from the prefix's last total: the new turn's
// delta adds to what the rotation alone holds.
func TestCodexCutRotation(t *testing.T) {
	// a token_count with the thread's running total and the request's own
	tc := func(ts string, in, out, lastIn, lastOut int) string {
		u := func(in, out int) string {
			return fmt.Sprintf(`{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d}`, in, out, in+out)
		}
		return `{"timestamp":"2026-11-22T02:59:` + ts + `Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":` + u(in, out) +
			`,"last_token_usage":` + u(lastIn, lastOut) + `,"model_context_window":258400}}}`
	}
	head := []string{
		`{"timestamp":"2026-11-22T02:59:00.000Z","type":"session_meta","payload":{"id":"01a20131-d660-7d01-9c2a-095cf6a93b50","cwd":"/w"}}`,
		`{"timestamp":"2026-11-22T02:59:01.000Z","type":"turn_context","payload":{"model":"gpt-5"}}`,
		tc("02.000", 100, 10, 100, 10),
	}
	original := append(append([]string{}, head...), tc("03.000", 250, 30, 150, 20), tc("04.000", 400, 50, 150, 20))
	live := append(append([]string{}, head...), tc("09.000", 180, 20, 80, 10)) // resumed after the cut
	const name = "sessions/2026/11/22/rollout-2026-11-22T02-59-00-01a20131-d660-7d01-9c2a-095cf6a93b50.jsonl"
	su := usageOf(t, writeStore(t, map[string][]string{name: live, name + ".1": original}))
	if got := su.Totals; got.Input != 400+80 || got.Output != 50+10 {
		t.Errorf("sessctl %d in / %d out, want 480 / 60 (the original's 400/50, the new turn's 80/10)", got.Input, got.Output)
	}
	if r := su.InRotations; r == nil || r.Input != 300 || r.Output != 40 {
		t.Errorf("in_rotations %+v, want the cut turns' 300 in / 40 out", r)
	}
	if cc := su.AsCCUsage; cc == nil || cc.Input != 180 {
		t.Errorf("ccusage view %+v, want the live rollout's 180 in", cc)
	}
}

// The subagent of a turn a revert removed: counted once whether its file
// stays, moves to a rotation, or both.
func TestSubagentOfRemovedTurnCountedOnce(t *testing.T) {
	main := []string{claudeAssistant("msg_1", "req_1", 10, 1, false)}
	sub := []string{claudeAssistant("msg_s", "req_s", 70, 14, true)}
	const dir = "projects/-w/11111111-1111-4111-8111-111111111111"
	for _, c := range []struct {
		name  string
		files map[string][]string
	}{
		{"stays", map[string][]string{dir + ".jsonl": main, dir + "/subagents/agent-a1.jsonl": sub}},
		{"rotated", map[string][]string{dir + ".jsonl": main, dir + "/subagents/agent-a1.jsonl.1": sub}},
		{"both", map[string][]string{dir + ".jsonl": main, dir + "/subagents/agent-a1.jsonl": sub, dir + "/subagents/agent-a1.jsonl.1": sub}},
	} {
		t.Run(c.name, func(t *testing.T) {
			su := usageOf(t, writeStore(t, c.files))
			if got := su.Totals; got.Input != 80 || got.Output != 15 || got.Requests != 2 {
				t.Errorf("sessctl %+v, want 80 in, 15 out in 2 requests", got)
			}
		})
	}
}
