package kimi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

func writeContext(t *testing.T, path string, lines ...string) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b := []byte(strings.Join(lines, "\n") + "\n")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// restoreCheck applies kimi.md §4.1 to a file: every line a JSON object
// with a string role, _system_prompt first, checkpoint ids 0, 1, 2, ….
func restoreCheck(t *testing.T, path string) {
	t.Helper()
	next := 0
	for i, l := range readLines(t, path) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v", i+1, err)
		}
		role, _ := m["role"].(string)
		switch {
		case i == 0 && role != "_system_prompt":
			t.Errorf("first record is %q, not _system_prompt", role)
		case role == "_checkpoint":
			if id, _ := m["id"].(float64); int(id) != next {
				t.Errorf("checkpoint id %v, want %d", m["id"], next)
			}
			next++
		case role == "":
			t.Errorf("line %d has no role", i+1)
		}
	}
}

// TestCompactMatchesKimisOwnCompaction compacts the pre-compaction sample
// (context_1.jsonl, written by kimi-cli) and compares the result with the
// file Kimi itself wrote after compacting it (context.jsonl): same system
// prompt line, _checkpoint 0, the summary message shape, and the same
// preserved tail, byte for byte.
func TestCompactMatchesKimisOwnCompaction(t *testing.T) {
	dir := filepath.Join(samplesDir(t), "kimi", "ex2_compacted_session")
	before, err := os.ReadFile(filepath.Join(dir, "context_1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	kimiOut := readLines(t, filepath.Join(dir, "context.jsonl"))
	work := filepath.Join(t.TempDir(), "sessions", "h", "s")
	path := filepath.Join(work, "context.jsonl")
	writeContext(t, path, strings.TrimSuffix(string(before), "\n"))

	res, err := compact.Compact(context.Background(), path, Agent, compactOpts())
	if err != nil {
		t.Fatal(err)
	}
	if orig, _ := os.ReadFile(res.Original); res.Original != filepath.Join(work, "context_1.jsonl") || !bytes.Equal(orig, before) {
		t.Fatalf("original not kept as context_1.jsonl: %q", res.Original)
	}
	got := readLines(t, path)
	if len(got) != 8 {
		t.Fatalf("%d lines, want 8:\n%s", len(got), bytes.Join(got, []byte("\n")))
	}
	if !bytes.Equal(got[0], kimiOut[0]) {
		t.Errorf("system prompt line differs")
	}
	if string(got[1]) != `{"role": "_checkpoint", "id": 0}` {
		t.Errorf("line 2 = %s", got[1])
	}
	for i := 3; i <= 6; i++ {
		if !bytes.Equal(got[i], kimiOut[i]) {
			t.Errorf("tail line %d:\n got %s\nwant %s", i+1, got[i], kimiOut[i])
		}
	}
	var sum struct {
		Role    string `json:"role"`
		Content []struct{ Type, Text string }
	}
	if err := json.Unmarshal(got[2], &sum); err != nil || sum.Role != "user" || len(sum.Content) != 2 ||
		sum.Content[0].Text != SummaryPrefix || sum.Content[1].Text != res.Summary {
		t.Errorf("summary message %s (%v)", got[2], err)
	}
	if !strings.HasPrefix(string(got[2]), `{"role":"user","content":[{"type":"text","text":"<system>Previous context has been compacted. Here is the compaction output:</system>"},{"type":"text","text":"`) {
		t.Errorf("summary line is not serialised like Kimi's: %.200s", got[2])
	}
	if !strings.HasPrefix(string(got[7]), `{"role": "_usage", "token_count": `) || res.Tokens.RecordedAfter == nil {
		t.Errorf("last line %s", got[7])
	}
	restoreCheck(t, path)
	if res.Tokens.RecordedBefore == nil || *res.Tokens.RecordedBefore != 215020 {
		t.Errorf("recorded before = %v, want 215020", res.Tokens.RecordedBefore)
	}
}

// the messages of a small context: long enough that a summary is smaller.
var long = strings.Repeat("the parser module needs its tests fixed ", 30)

// TestCompactSpacedMessagesWrittenCompact: message lines written in
// json.dumps style (as kimi-cli's tests do) are written back the way Kimi
// writes messages: compact, raw UTF-8.
func TestCompactSpacedMessagesWrittenCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "context.jsonl")
	writeContext(t, path,
		`{"role": "_system_prompt", "content": "sp"}`,
		`{"role": "_checkpoint", "id": 0}`,
		`{"role": "user", "content": "first `+long+`"}`,
		`{"role": "assistant", "content": "second `+long+`"}`,
		`{"role": "user", "content": "caf\u00e9 third"}`,
		`{"role": "assistant", "content": "fourth", "tool_calls": [{"type": "function", "id": "t1", "function": {"name": "Shell", "arguments": "{}"}}]}`)
	if _, err := compact.Compact(context.Background(), path, Agent, compactOpts()); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, path)
	want := []string{
		`{"role":"user","content":"café third"}`,
		`{"role":"assistant","content":"fourth","tool_calls":[{"type":"function","id":"t1","function":{"name":"Shell","arguments":"{}"}}]}`,
		`{"role":"tool","content":"<system>ERROR: aborted (no result was recorded before the context was compacted)</system>","tool_call_id":"t1"}`,
	}
	if len(got) != 7 {
		t.Fatalf("%d lines:\n%s", len(got), bytes.Join(got, []byte("\n")))
	}
	for i, w := range want {
		if string(got[3+i]) != w {
			t.Errorf("line %d:\n got %s\nwant %s", 4+i, got[3+i], w)
		}
	}
	restoreCheck(t, path)
}

// TestCompactInvalidUTF8 reads lines as Kimi does: invalid UTF-8 becomes
// U+FFFD, and the message is kept; a line Kimi cannot use is left out and
// counted.
func TestCompactInvalidUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "context.jsonl")
	writeContext(t, path,
		`{"role": "_system_prompt", "content": "sp"}`,
		`{"role":"user","content":"first `+long+`"}`,
		`not json at all`,
		`{"role":"assistant","content":"second `+long+`"}`,
		"{\"role\":\"user\",\"content\":\"bad \xe4\xb8 \xff\xfe bytes\"}",
		`{"role":"system","content":"a system note"}`,
		`{"oops":"no role"}`,
		`{"role":"assistant","content":"fourth"}`)
	res, err := compact.Compact(context.Background(), path, Agent, compactOpts())
	if err != nil {
		t.Fatal(err)
	}
	got := readLines(t, path)
	if res.CorruptCompacted != 1 || res.CorruptTail != 1 || len(got) != 7 ||
		string(got[3]) != "{\"role\":\"user\",\"content\":\"bad \uFFFD \uFFFD\uFFFD bytes\"}" ||
		string(got[4]) != `{"role":"system","content":"a system note"}` || string(got[5]) != `{"role":"assistant","content":"fourth"}` {
		t.Errorf("left out %d, %d:\n%s", res.CorruptCompacted, res.CorruptTail, bytes.Join(got, []byte("\n")))
	}
}

// TestCompactTurns: Kimi's own compaction leaves one checkpoint (0); so
// does sessctl's, and show numbers every kept message under it.
func TestCompactTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "context.jsonl")
	writeContext(t, path,
		`{"role": "_system_prompt", "content": "sp"}`,
		`{"role": "_checkpoint", "id": 0}`,
		`{"role":"user","content":"first `+long+`"}`,
		`{"role":"assistant","content":"second `+long+`"}`,
		`{"role": "_checkpoint", "id": 1}`,
		`{"role":"user","content":"third"}`,
		`{"role":"assistant","content":"fourth"}`)
	if _, err := compact.Compact(context.Background(), path, Agent, compactOpts()); err != nil {
		t.Fatal(err)
	}
	turns, err := Home{}.Turns(context.Background(), path)
	if err != nil || len(turns) != 1 || turns[0].N != 0 {
		t.Fatalf("turns %+v (%v)", turns, err)
	}
	var kept []string
	err = Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		if m.Turn != 0 {
			t.Errorf("message %q in turn %d", m.Text, m.Turn)
		}
		kept = append(kept, m.Text)
		return nil
	})
	if err != nil || len(kept) != 3 || kept[1] != "third" || kept[2] != "fourth" {
		t.Errorf("history %q (%v)", kept, err)
	}
}
