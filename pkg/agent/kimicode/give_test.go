package kimicode

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// words reports what of a message's words the fold holds: the constants
// it writes itself (an interrupted call's result, the continuation after a
// compaction) are not the file's.
func words(m *session.Message) []string {
	var out []string
	if m.Text != "" && m.Text != interruptedOutput && m.Text != compactionContinuation {
		out = append(out, "text "+m.Text)
	}
	if m.Thinking != "" {
		out = append(out, "thinking "+m.Thinking)
	}
	for _, c := range m.ToolCalls {
		if c.Input != "" {
			out = append(out, "input "+c.Input)
		}
	}
	for _, r := range m.ToolResults {
		if r.Output != interruptedOutput {
			out = append(out, "result "+r.Output)
		}
	}
	return out
}

// TestFoldHoldsNoWords: the fold keeps where a message's words are, not
// the words (a wire can be gigabytes: a 300 MB one took 575 MB to show
// when it kept them), and History still gives them.
func TestFoldHoldsNoWords(t *testing.T) {
	for _, path := range []string{wirePath(t), "testdata/compacted.wire.jsonl"} {
		f, err := scan(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.all) < 5 {
			t.Fatalf("%s: %d messages folded", path, len(f.all))
		}
		for _, m := range f.all {
			if w := words(&m.m); len(w) > 0 {
				t.Errorf("%s line %d: the fold holds %q", path, m.m.Line, w)
			}
		}
		given := 0
		err = Home{}.History(context.Background(), path, session.HistoryOptions{All: true}, func(m *session.Message) error {
			given += len(words(m))
			return nil
		})
		if err != nil || given == 0 {
			t.Errorf("%s: History gave %d words (%v)", path, given, err)
		}
	}
}

// TestGiveAfterTheFileChanged: a wire rewritten between the fold and the
// reading of the words (sessctl's own rewrites rename a new file in) gives
// every message folded, in order, with what its lines hold now; it neither
// hangs nor fails.
func TestGiveAfterTheFileChanged(t *testing.T) {
	orig, err := os.ReadFile(wirePath(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wire.jsonl")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := scan(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, m := range f.all {
		lines = append(lines, m.m.Line)
	}
	// the second half of the file gone, its first line cut short
	if err := os.WriteFile(path, orig[:len(orig)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	var got []int
	empty := 0
	err = give(context.Background(), path, f.all, false, func(m *session.Message) error {
		got = append(got, m.Line)
		if len(words(m)) == 0 {
			empty++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(lines) {
		t.Fatalf("gave %d messages of %d", len(got), len(lines))
	}
	for i := range got {
		if got[i] != lines[i] {
			t.Fatalf("message %d: line %d, want %d", i, got[i], lines[i])
		}
	}
	if empty == 0 || empty == len(got) {
		t.Errorf("%d of %d messages without words: the cut should empty some, not all", empty, len(got))
	}
}

// TestCompactionSummaryText: the summary of a context.apply_compaction, in
// each of the shapes the fold reads, is the record's text (stats counted
// Kimi Code's summaries as 0 tokens), and the summary message History
// gives has the same words.
func TestCompactionSummaryText(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"type":"context.apply_compaction","summary":"the summary","compactedCount":1,"keptUserMessageCount":1,"time":1}`, "the summary"},
		{`{"type":"context.apply_compaction","contextSummary":"from contextSummary","summary":"not this","count":1,"time":1}`, "from contextSummary"},
		{`{"type":"context.apply_compaction","summary":{"role":"user","content":[{"type":"text","text":"in parts"}]},"count":1,"time":1}`, "in parts"},
	} {
		path := filepath.Join(t.TempDir(), "wire.jsonl")
		prompt := `{"type":"context.append_message","agentId":"main","message":{"role":"user","content":[{"type":"text","text":"hi"}],"id":"p1","toolCalls":[],"origin":{"kind":"user"}},"time":1}`
		if err := os.WriteFile(path, []byte(prompt+"\n"+c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var got []string
		err := session.ReadFileContext(context.Background(), path, Home{}, func(r *session.Record) error {
			if r.Kind == session.KindCompaction {
				got = append(got, r.Text)
			}
			return nil
		})
		if err != nil || len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: record texts %q (%v), want %q", c.line, got, err, c.want)
		}
		var summary []string
		Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
			if m.Summary {
				summary = append(summary, m.Text)
			}
			return nil
		})
		if len(summary) != 1 || summary[0] != c.want {
			t.Errorf("%s: History's summary %q, want %q", c.line, summary, c.want)
		}
	}
}

// TestFoldHomeAsHome: the fold's decoder leaves out the loop events'
// words and nothing else: on every line of the test wires it gives
// Home's record but for those.
func TestFoldHomeAsHome(t *testing.T) {
	for _, path := range []string{wirePath(t), "testdata/compacted.wire.jsonl"} {
		var full []session.Record
		if err := session.ReadFileContext(context.Background(), path, Home{}, func(r *session.Record) error {
			c := *r
			c.Line.Raw = nil
			full = append(full, c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		k, words := 0, 0
		err := session.ReadFileContext(context.Background(), path, foldHome{}, func(r *session.Record) error {
			want := full[k]
			k++
			if strings.HasPrefix(want.Type, "context.append_loop_event/") {
				if want.Text != "" || want.Thinking != "" || len(want.ToolCalls) > 0 || len(want.ToolResults) > 0 {
					words++
				}
				want.Text, want.Thinking, want.ToolCalls, want.ToolResults = "", "", nil, nil
			}
			got := *r
			got.Line.Raw = nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s line %d: the fold's decoder gave\n%+v\nHome's, less the words\n%+v", path, r.Line.Num, got, want)
			}
			return nil
		})
		if err != nil || k != len(full) || words == 0 {
			t.Errorf("%s: %d of %d records, %d loop events with words (%v)", path, k, len(full), words, err)
		}
	}
}

// TestWantAcrossParts: a reply streamed in parts can hold what grep looks
// for across two of them, which no line holds: the search with Want finds
// it as the one without does (a search of a generated wire lost such a
// hit).
func TestWantAcrossParts(t *testing.T) {
	lines := []string{
		`{"type":"context.append_message","agentId":"main","message":{"role":"user","content":[{"type":"text","text":"go"}],"id":"p1","toolCalls":[],"origin":{"kind":"user"}},"time":1}`,
		`{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.begin","uuid":"s1","turnId":"0","step":1},"time":2}`,
		`{"type":"context.append_loop_event","agentId":"main","event":{"type":"content.part","uuid":"u1","turnId":"0","step":1,"stepUuid":"s1","part":{"type":"text","text":"run rebase"}},"time":3}`,
		`{"type":"context.append_loop_event","agentId":"main","event":{"type":"content.part","uuid":"u2","turnId":"0","step":1,"stepUuid":"s1","part":{"type":"text","text":" commit now"}},"time":4}`,
		`{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.end","uuid":"s1","turnId":"0","step":1,"finishReason":"end_turn"},"time":5}`,
	}
	path := filepath.Join(t.TempDir(), "wire.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := func(raw []byte) bool { return strings.Contains(string(raw), "rebase commit") }
	var got []string
	err := Home{}.History(context.Background(), path, session.HistoryOptions{Want: want}, func(m *session.Message) error {
		if strings.Contains(m.Text, "rebase commit") {
			got = append(got, m.Text)
		}
		return nil
	})
	if err != nil || len(got) != 1 || got[0] != "run rebase commit now" {
		t.Errorf("with Want: %q (%v), want the reply \"run rebase commit now\"", got, err)
	}
}

// TestWantKeepsPromptsApart: two prompts with a reply between them are
// sent as two messages; the search with Want, which does not read the
// reply, must not join them (a search of a generated wire reported such
// prompts as one).
func TestWantKeepsPromptsApart(t *testing.T) {
	prompt := func(id, text string) string {
		return `{"type":"context.append_message","agentId":"main","message":{"role":"user","content":[{"type":"text","text":"` + text + `"}],"id":"` + id + `","toolCalls":[],"origin":{"kind":"user"}},"time":1}`
	}
	lines := []string{
		prompt("p1", "first needle"),
		`{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.begin","uuid":"s1","turnId":"0","step":1},"time":2}`,
		`{"type":"context.append_loop_event","agentId":"main","event":{"type":"content.part","uuid":"u1","turnId":"0","step":1,"stepUuid":"s1","part":{"type":"text","text":"a reply"}},"time":3}`,
		`{"type":"context.append_loop_event","agentId":"main","event":{"type":"step.end","uuid":"s1","turnId":"0","step":1,"finishReason":"end_turn"},"time":4}`,
		prompt("p2", "second needle"),
	}
	path := filepath.Join(t.TempDir(), "wire.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []func([]byte) bool{nil, func(raw []byte) bool { return strings.Contains(string(raw), "needle") }} {
		var got []string
		err := Home{}.History(context.Background(), path, session.HistoryOptions{Want: want}, func(m *session.Message) error {
			if strings.Contains(m.Text, "needle") {
				got = append(got, m.Text)
			}
			return nil
		})
		if err != nil || strings.Join(got, "|") != "first needle|second needle" {
			t.Errorf("Want %v: %q (%v), want the two prompts apart", want != nil, got, err)
		}
	}
}

// TestFoldReadsTheMessageTheRecordHas: a line with "message" twice is read
// by Kimi Code (JSON.parse) as its last message whole. The fold used to
// parse the line again its own way, merging both into one (the origin of
// the first with the content of the second), while the record had the
// last; it now reads what the record's decoder parsed.
func TestFoldReadsTheMessageTheRecordHas(t *testing.T) {
	lines := []string{
		`{"type":"context.append_message","agentId":"main","message":{"role":"user","content":[{"type":"text","text":"go"}],"id":"p1","toolCalls":[],"origin":{"kind":"injection"}},"message":{"role":"user","content":[{"type":"text","text":"real prompt"}],"id":"p2","toolCalls":[]},"time":1}`,
	}
	path := filepath.Join(t.TempDir(), "wire.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []*session.Message
	err := Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		c := *m
		got = append(got, &c)
		return nil
	})
	if err != nil || len(got) != 1 {
		t.Fatalf("History: %d messages (%v), want 1", len(got), err)
	}
	if m := got[0]; m.Text != "real prompt" || m.Injected {
		t.Errorf("the message is %q, injected %v; want the last message, \"real prompt\", not injected", m.Text, m.Injected)
	}
}
