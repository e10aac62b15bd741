package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/session"
)

func compactOpts() compact.Options {
	return compact.Options{Force: true, Now: func() time.Time { return time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC) },
		MaxToolOutput: compact.DefaultMaxToolOutput}
}

const sampleRollout = "rollout-2026-11-22T02-59-33-01a20131-d660-7d01-9c2a-095cf6a93b50.jsonl"

func sampleCopy(t *testing.T) (string, []byte) {
	t.Helper()
	src := filepath.Join("..", "..", "..", "..", "shared", "samples", "real-clients", "codex-home", "codex", "sessions", "2026", "11", "22", sampleRollout)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Skip("shared samples not present")
	}
	path := filepath.Join(t.TempDir(), sampleRollout)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestCompactTurn compacts the real 0.169 rollout: a turn of its own
// (task_started, compacted, token_count, task_complete, ordinals going on),
// whose replacement history is the summary and the kept items verbatim.
func TestCompactTurn(t *testing.T) {
	path, orig := sampleCopy(t)
	o := compactOpts()
	o.Keep = 3 // the last turn's prompt and reply, and the reply before
	res, err := compact.Compact(context.Background(), path, Agent, o)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.HasPrefix(after, orig) {
		t.Fatal("original bytes changed")
	}
	last, _ := Ordinal(bytes.Split(bytes.TrimSpace(orig), []byte("\n"))[bytes.Count(bytes.TrimSpace(orig), []byte("\n"))])
	added := bytes.Split(bytes.TrimSuffix(after[len(orig):], []byte("\n")), []byte("\n"))
	if len(added) != 4 || res.AppendedLines != 4 {
		t.Fatalf("%d lines appended, want task_started, compacted, token_count, task_complete", len(added))
	}
	type rec struct {
		Timestamp string `json:"timestamp"`
		Ordinal   int64  `json:"ordinal"`
		Type      string `json:"type"`
		Payload   struct {
			Type               string            `json:"type"`
			TurnID             string            `json:"turn_id"`
			Message            string            `json:"message"`
			ReplacementHistory []json.RawMessage `json:"replacement_history"`
			Info               struct {
				Last map[string]int64 `json:"last_token_usage"`
			} `json:"info"`
			LastAgentMessage *string `json:"last_agent_message"`
		} `json:"payload"`
	}
	var rs [4]rec
	for i := range rs {
		if err := json.Unmarshal(added[i], &rs[i]); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if rs[i].Ordinal != last+int64(i)+1 {
			t.Errorf("line %d ordinal %d, want %d", i, rs[i].Ordinal, last+int64(i)+1)
		}
	}
	if rs[0].Payload.Type != "task_started" || rs[3].Payload.Type != "task_complete" || rs[0].Payload.TurnID == "" ||
		rs[0].Payload.TurnID != rs[3].Payload.TurnID || rs[3].Payload.LastAgentMessage != nil {
		t.Errorf("the compaction's turn: %s … %s", added[0], added[3])
	}
	if !strings.HasPrefix(string(added[0]), `{"timestamp":"2026-11-22T05:00:00.000Z","ordinal":`) ||
		!strings.Contains(string(added[0]), `"turn_attribution":{"turn_id":"`+rs[0].Payload.TurnID+`","turn_trigger":"exec"`) {
		t.Errorf("task_started is not shaped like 0.169's: %s", added[0])
	}
	c := rs[1]
	if c.Type != "compacted" || c.Payload.Message != SummaryPrefix+"\n"+res.Summary {
		t.Errorf("compacted %.300s", added[1])
	}
	if rs[2].Payload.Type != "token_count" || rs[2].Payload.Info.Last["total_tokens"] != int64(res.Tokens.After) || rs[2].Payload.Info.Last["input_tokens"] != 0 {
		t.Errorf("token_count %s", added[2])
	}
	// every kept response item is in the history verbatim, after the summary
	summaryAt := -1
	for i, it := range c.Payload.ReplacementHistory {
		if bytes.Contains(it, []byte("Another language model started")) {
			summaryAt = i
		}
	}
	if summaryAt < 0 {
		t.Fatal("no summary message in replacement_history")
	}
	for _, l := range bytes.Split(orig, []byte("\n"))[res.SplitLine-1:] {
		var env struct {
			Type    string
			Payload json.RawMessage
		}
		if json.Unmarshal(l, &env) != nil || env.Type != "response_item" {
			continue
		}
		if !bytes.Contains(added[1], env.Payload) {
			t.Errorf("kept item missing from replacement_history: %.120s", env.Payload)
		}
	}
	// the compacted-away first prompt is only inside the summary
	if n := bytes.Count(added[1], []byte("Please list the files here")); n != 2 { // message + the summary item
		t.Errorf("the first prompt appears %d times", n)
	}
	// what Codex resumes from
	var live []string
	Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		if !m.Injected {
			live = append(live, fmt.Sprintf("%s %.20s", m.Role, m.Text))
		}
		return nil
	})
	want := []string{"user Another language mod", "assistant Done. The command ou", "user NOTOOL say hi", "assistant Acknowledged (no too"}
	if strings.Join(live, "|") != strings.Join(want, "|") {
		t.Errorf("live history %q", live)
	}
	// and turns keep their numbers
	turns, err := Home{}.Turns(context.Background(), path)
	if err != nil || len(turns) != 3 || turns[2].N != 2 || turns[2].Prompt != "NOTOOL say hi" {
		t.Errorf("turns %+v (%v)", turns, err)
	}
}

func TestCompactLegacyRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rollout-2025-05-01T10-00-00-x.jsonl")
	long := strings.Repeat("words of a long request ", 50)
	orig := []byte(strings.Join([]string{
		`{"id":"x","timestamp":"2025-05-01T10:00:00.000Z","instructions":null}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"one ` + long + `"}]}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"three"}]}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"four"}]}`}, "\n") + "\n")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := compact.Compact(context.Background(), path, Agent, compactOpts())
	if err == nil || !strings.Contains(err.Error(), "without session_meta") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, orig) {
		t.Error("file changed")
	}
}
