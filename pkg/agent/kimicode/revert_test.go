package kimicode

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
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
