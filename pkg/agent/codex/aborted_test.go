package codex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestHistoryAbortedCalls: Codex sends a call without an output with an
// "aborted" output of its own, right after the call, and leaves out an
// output whose call is not in the history (codex.md §8, seen in 0.169's
// requests by the e2e oracle: TestRepairCodexKilledThenResumed). Neither
// is ever written to the file.
func TestHistoryAbortedCalls(t *testing.T) {
	lines := abortedRollout
	path := filepath.Join(t.TempDir(), "rollout-2026-11-22T03-05-20-01a20137-32a6-77c1-b56b-38215cfaf5be.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	describe := func(all bool) []string {
		var got []string
		err := Home{}.History(context.Background(), path, session.HistoryOptions{All: all}, func(m *session.Message) error {
			d := string(m.Role) + ":" + m.State.String() + ":" + m.Text
			for _, c := range m.ToolCalls {
				d += " call " + c.ID
			}
			for _, r := range m.ToolResults {
				d += " result " + r.CallID
			}
			got = append(got, d)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []string{"user:live:list", "assistant:live: call call_1", "tool:live:aborted result call_1", "user:live:next"}
	if got := describe(false); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("live history\n got %q\nwant %q", got, want)
	}
	all := describe(true)
	if len(all) != 5 || all[3] != "tool:dropped:x result call_gone" {
		t.Errorf("all history %q: the orphan output should be there, dropped", all)
	}
}

// abortedRollout has a call without an output and an output without its
// call.
var abortedRollout = []string{
	`{"timestamp":"2026-11-22T03:05:20.000Z","ordinal":0,"type":"session_meta","payload":{"id":"01a20137-32a6-77c1-b56b-38215cfaf5be","cwd":"/w"}}`,
	`{"timestamp":"2026-11-22T03:05:21.000Z","ordinal":1,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list"}]}}`,
	`{"timestamp":"2026-11-22T03:05:22.000Z","ordinal":2,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}`,
	`{"timestamp":"2026-11-22T03:05:23.000Z","ordinal":3,"type":"response_item","payload":{"type":"function_call_output","call_id":"call_gone","output":"x"}}`,
	`{"timestamp":"2026-11-22T03:05:24.000Z","ordinal":4,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"next"}]}}`,
}
