package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/sessctl/sessctl/internal/oracle"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestOracleCases replays the resumes of the real Claude Code 2.1.197 that
// the e2e oracle kept (testdata/oracle: the file just before the resume,
// the prompt, and every item the client sent; README there says which
// scenario each comes from): the history this home predicts for the file
// must be what the client sent.
func TestOracleCases(t *testing.T) {
	dir := filepath.Join("testdata", "oracle")
	cases, err := oracle.LoadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases in testdata/oracle")
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c := cases[name]
			if c.Agent != Agent {
				t.Fatalf("a %s case", c.Agent)
			}
			d, err := oracle.Replay(context.Background(), dir, c)
			if err != nil {
				t.Fatal(err)
			}
			if d != "" {
				t.Errorf("the client sent something else:\n%s", d)
			}
		})
	}
}

// TestInjectedContext: the oracle's filter is what Claude Code adds to
// every request (system entries, reminders), and show marks it injected.
func TestInjectedContext(t *testing.T) {
	h := Home{}
	for _, c := range []struct {
		role session.Role
		text string
		want bool
	}{
		{session.RoleSystem, "Available agent types for the Agent tool:", true},
		{session.RoleUser, "<system-reminder>\nAs you answer…</system-reminder>", true},
		{session.RoleUser, "\n <system-reminder>x</system-reminder>", true},
		{session.RoleUser, "list the files", false},
		{session.RoleUser, "Continue from where you left off.", false},
		{session.RoleUser, "<local-command-stdout>Compacted</local-command-stdout>", false},
		{session.RoleAssistant, "No response requested.", false},
	} {
		if got := h.InjectedContext(c.role, c.text); got != c.want {
			t.Errorf("InjectedContext(%s, %q) = %v, want %v", c.role, c.text, got, c.want)
		}
	}
	r := decodeLine(t, `{"type":"user","isMeta":true,"message":{"role":"user","content":"<system-reminder>x</system-reminder>"},"uuid":"d"}`)
	if m := message(&r); !m.Injected {
		t.Error("show does not mark a reminder injected")
	}
}

// TestTurnTakesTheRunBeforeIt: when Claude Code resumes a history that
// ends with a user message, it writes "Continue from where you left off."
// and "No response requested." in the run that leads to the new prompt;
// they belong to that turn. own-compact-then-turn.jsonl is
// own-compact-preserved-segment.jsonl plus the run of turn C, so turn C is
// cut exactly where that file ended.
func TestTurnTakesTheRunBeforeIt(t *testing.T) {
	dir := filepath.Join("testdata", "oracle")
	before, err := os.Stat(filepath.Join(dir, "own-compact-preserved-segment.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	turns, err := Home{}.Turns(context.Background(), filepath.Join(dir, "own-compact-then-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 3 || turns[2].Prompt != "NOTOOL turn C" || turns[2].Cut != before.Size() {
		t.Errorf("turns %+v: want turn 2 \"NOTOOL turn C\" cut at %d", turns, before.Size())
	}
	var pair []int
	err = Home{}.History(context.Background(), filepath.Join(dir, "own-compact-then-turn.jsonl"), session.HistoryOptions{}, func(m *session.Message) error {
		if m.Text == continueText || m.Text == noResponseText {
			pair = append(pair, m.Turn)
		}
		return nil
	})
	if err != nil || len(pair) != 2 || pair[0] != 2 || pair[1] != 2 {
		t.Errorf("the synthetic pair is in turns %v (%v), want [2 2]", pair, err)
	}
}

// TestTurnsOfCompactionTail: sessctl's compaction copies the kept prompt
// into the tail with a new timestamp and the same promptId; it is the same
// turn, live through the copy, beginning where the original is.
func TestTurnsOfCompactionTail(t *testing.T) {
	path := filepath.Join("testdata", "oracle", "leaf-after-appended-boundary.jsonl")
	turns, err := Home{}.Turns(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range turns {
		got = append(got, fmt.Sprintf("%d %s %s after=%v", u.N, u.Prompt, u.State, u.CompactedAfter))
	}
	want := []string{
		"0 Please list the files here OLDONE compacted after=true",
		"1 NOTOOL second turn OLDTWO compacted after=true",
		"2 NOTOOL third turn KEEPTHREE live after=true",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("turns:\n got %q\nwant %q", got, want)
	}
	if len(turns) == 3 && turns[2].Line > 20 {
		t.Errorf("turn 2 begins at line %d, the copy; want the original", turns[2].Line)
	}
}
