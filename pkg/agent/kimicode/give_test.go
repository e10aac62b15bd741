package kimicode

import (
	"context"
	"os"
	"path/filepath"
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
