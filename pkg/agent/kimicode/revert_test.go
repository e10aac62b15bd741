package kimicode

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestRevertCutsAtTurnPrompt: reverting the real wire to turn N keeps the
// bytes before turn N's turn.prompt record, unchanged, and nothing after;
// the history left is the first N turns'. (TestKimiCodeRevert proves Kimi
// Code resumes such a file at turn N.)
func TestRevertCutsAtTurnPrompt(t *testing.T) {
	path := wirePath(t)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(orig), "\n")
	for n := 0; n < 4; n++ {
		p, err := checkpoint.PlanRevert(context.Background(), path, Agent, n, checkpoint.Auto)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := (Home{}).WriteRevert(p, bytes.NewReader(orig), &out, time.Now()); err != nil {
			t.Fatal(err)
		}
		// the expected cut: before the (n+1)th turn.prompt line, found
		// by text
		seen, want := 0, ""
		for _, l := range lines {
			if strings.HasPrefix(l, `{"type":"turn.prompt"`) {
				if seen == n {
					break
				}
				seen++
			}
			want += l
		}
		if out.String() != want || p.Mechanism != checkpoint.Truncate {
			t.Errorf("revert to %d: %d bytes (mechanism %s), want the %d bytes before turn.prompt #%d", n, out.Len(), p.Mechanism, len(want), n)
		}
		dir := t.TempDir()
		cut := dir + "/wire.jsonl"
		if err := os.WriteFile(cut, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		turns, err := Home{}.Turns(context.Background(), cut)
		if err != nil || len(turns) != n {
			t.Errorf("revert to %d: %d turns left (%v)", n, len(turns), err)
		}
		prompts := 0
		Home{}.History(context.Background(), cut, session.HistoryOptions{}, func(m *session.Message) error {
			if m.Prompt {
				prompts++
			}
			return nil
		})
		if prompts != n {
			t.Errorf("revert to %d: %d prompts in the history", n, prompts)
		}
	}
	if _, err := checkpoint.PlanRevert(context.Background(), path, Agent, 1, checkpoint.Rollback); err == nil {
		t.Error("a rollback mechanism was accepted")
	}
}

// TestCompactLayoutLegacyTail: the appended record compacts exactly the
// history before the split; the live history after it is the summary
// then the kept tail as it was, and the turns in the tail stay live.
// (TestKimiCodeCompact proves Kimi Code resumes such a record so.)
func TestCompactLayoutLegacyTail(t *testing.T) {
	path := wirePath(t)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := Home{}.Turns(context.Background(), path)
	if err != nil || len(turns) != 4 {
		t.Fatal(turns, err)
	}
	var before []session.Message
	Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
		before = append(before, *m)
		return nil
	})
	split := turns[2].Offset // keep turns 2 and 3
	var tail []string
	for _, m := range before {
		if m.Offset >= split {
			tail = append(tail, string(m.Role)+":"+m.Text)
		}
	}
	f, err := scan(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := (&compactLayout{fold: f}).Write(&layout.Compaction{Summary: "SUMMARY", SplitOffset: split, Now: time.Unix(1, 0)})
	if err != nil || !out.Append || len(out.Lines) != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	dir := t.TempDir()
	cp := filepath.Join(dir, "wire.jsonl")
	if err := os.WriteFile(cp, append(append(orig, out.Lines[0]...), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	Home{}.History(context.Background(), cp, session.HistoryOptions{}, func(m *session.Message) error {
		got = append(got, string(m.Role)+":"+m.Text)
		return nil
	})
	want := append([]string{"user:SUMMARY"}, tail...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the record:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	after, _ := Home{}.Turns(context.Background(), cp)
	for i, tn := range after {
		if (tn.State == session.Compacted) != (i < 2) {
			t.Errorf("turn %d: state %s", i, tn.State)
		}
	}
}
