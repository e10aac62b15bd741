package checkpoint_test

import (
	"context"

	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/checkpoint"

	"github.com/sessctl/sessctl/pkg/session"
)

// samplesDir is ../shared/samples seen from the repository root.
func samplesDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join("..", "..", "..", "shared", "samples")
	if _, err := os.Stat(d); err != nil {
		t.Skip("shared samples not present")
	}
	return d
}

func realClient(t *testing.T, rel string) string {
	t.Helper()
	return filepath.Join(samplesDir(t), "real-clients", rel)
}

const (
	claude7bd0 = "claude-home/claude/projects/-home-dev-work-demo/7bd0bccd-9f75-4483-b19b-c7e227cb8be6.jsonl"
	codex3     = "codex-home/codex/sessions/2026/11/22/rollout-2026-11-22T02-59-33-01a20131-d660-7d01-9c2a-095cf6a93b50.jsonl"
	codexComp  = "codex-home/codex/sessions/2026/11/22/rollout-2026-11-22T03-04-11-01a20136-17a3-7870-8d59-1ebca8f88e68.jsonl"
)

func list(t *testing.T, path string, a session.Agent) *checkpoint.Listing {
	t.Helper()
	l, err := checkpoint.List(context.Background(), path, a)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func lineOffset(data []byte, line int) int64 {
	off := 0
	for i := 1; i < line; i++ {
		off += bytes.IndexByte(data[off:], '\n') + 1
	}
	return int64(off)
}

// TestClaudeTurns: the real 7bd0 file (claude-code.md §6 lists its lines):
// prompts at lines 3, 13, 22, 30, 47 and 53; the /compact command line 39,
// the summary 37 and the meta/tool-result lines are not turns.
func TestClaudeTurns(t *testing.T) {
	path := realClient(t, claude7bd0)
	data, _ := os.ReadFile(path)
	l := list(t, path, session.Claude)
	var lines []int
	for _, p := range l.Points {
		lines = append(lines, p.Line)
	}
	if want := []int{3, 13, 22, 30, 47, 53}; !reflect.DeepEqual(lines, want) {
		t.Fatalf("turn lines %v, want %v", lines, want)
	}
	// turn 1's cut is before its queue-operation pair (lines 11-12)
	if got, want := l.Points[1].Cut, lineOffset(data, 11); got != want {
		t.Errorf("turn 1 cut %d, want %d (line 11)", got, want)
	}
	if l.Points[1].Preview != "Now list the files again" || l.Points[4].Tokens != 686 {
		t.Errorf("turn 1 preview %q, turn 4 tokens %d (postTokens 686)", l.Points[1].Preview, l.Points[4].Tokens)
	}
	p, err := checkpoint.PlanRevert(context.Background(), path, session.Claude, 1, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Write(bytes.NewReader(data), &out, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data[:lineOffset(data, 11)]) {
		t.Errorf("truncated file is not the first 10 lines")
	}
	if p.RemovedRecords != 48 {
		t.Errorf("removed %d records, want 48 (lines 11-58)", p.RemovedRecords)
	}
	if _, err := checkpoint.PlanRevert(context.Background(), path, session.Claude, 6, checkpoint.Auto); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Errorf("turn 6: %v", err)
	}
}

// TestClaudeCutDropsTrailingToolUse: a turn whose previous turn ended in an
// unanswered tool_use is cut before that tool_use, and a custom-title after
// the cut is kept.
func TestClaudeCutDropsTrailingToolUse(t *testing.T) {
	in := `{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"first"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"ok"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"a1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}
{"type":"queue-operation","operation":"enqueue","content":"second"}
{"type":"user","uuid":"u2","parentUuid":"a1","message":{"role":"user","content":"second"}}
{"type":"custom-title","customTitle":"my name","sessionId":"s"}
{"type":"assistant","uuid":"a3","parentUuid":"u2","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"yes"}]}}
`
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	os.WriteFile(path, []byte(in), 0o600)
	p, err := checkpoint.PlanRevert(context.Background(), path, session.Claude, 1, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p.Write(strings.NewReader(in), &out, time.Now())
	lines := strings.SplitAfter(in, "\n")
	want := lines[0] + lines[1] + lines[5]
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if p.KeptAfterCut != 1 || p.RemovedRecords != 4 {
		t.Errorf("kept %d removed %d", p.KeptAfterCut, p.RemovedRecords)
	}
}

// TestCodexRollback: the three-turn 0.169 file; reverting to turn 1 appends
// thread_rolled_back with num_turns 2 and the next ordinal, keeping every
// byte.
func TestCodexRollback(t *testing.T) {
	path := realClient(t, codex3)
	data, _ := os.ReadFile(path)
	l := list(t, path, session.Codex)
	if len(l.Points) != 3 || l.Points[2].Preview != "NOTOOL say hi" {
		t.Fatalf("points %+v", l.Points)
	}
	p, err := checkpoint.PlanRevert(context.Background(), path, session.Codex, 1, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mechanism != checkpoint.Rollback || p.RollbackTurns != 2 {
		t.Fatalf("plan %+v", p)
	}
	now := time.Date(2026, 11, 22, 3, 0, 0, 5e6, time.UTC)
	var out bytes.Buffer
	if err := p.Write(bytes.NewReader(data), &out, now); err != nil {
		t.Fatal(err)
	}
	nlines := bytes.Count(data, []byte("\n"))
	want := string(data) + `{"timestamp":"2026-11-22T03:00:00.005Z","ordinal":` + strconv.Itoa(nlines) + `,"type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}` + "\n"
	if out.String() != want {
		t.Errorf("appended %q", out.String()[len(data):])
	}
	// after the rollback, the listing hides the rolled-back turns
	tmp := filepath.Join(t.TempDir(), "r.jsonl")
	os.WriteFile(tmp, out.Bytes(), 0o644)
	l2 := list(t, tmp, session.Codex)
	if l2.Live != 1 || !l2.Points[1].RolledBack || l2.Points[1].N != -1 {
		t.Errorf("after rollback: live %d points %+v", l2.Live, l2.Points)
	}
}

// TestCodexCompactedTruncates: turn 1 of the compaction sample is followed
// by the compaction, so auto cuts the file before turn 1 instead.
func TestCodexCompactedTruncates(t *testing.T) {
	path := realClient(t, codexComp)
	p, err := checkpoint.PlanRevert(context.Background(), path, session.Codex, 1, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if p.Mechanism != checkpoint.Truncate || p.Cut >= p.Point.Offset {
		t.Errorf("plan %+v", p)
	}
	if _, err := checkpoint.PlanRevert(context.Background(), path, session.Codex, 1, checkpoint.Rollback); err == nil {
		t.Errorf("a forced rollback over a compaction must be refused")
	}
	if p2, err := checkpoint.PlanRevert(context.Background(), path, session.Codex, 2, checkpoint.Auto); err != nil || p2.Mechanism != checkpoint.Rollback || p2.RollbackTurns != 1 {
		t.Errorf("turn 2 (after the compaction): %+v %v", p2, err)
	}
}

// TestClaudeDanglingToolUse: the real 68b2b030 file was cut after an
// assistant tool_use (line 7) and resumed with a new prompt (line 10).
// Reverting to that turn cuts before the unanswered tool_use.
func TestClaudeDanglingToolUse(t *testing.T) {
	path := realClient(t, "claude-home/claude/projects/-home-dev-work-demo/68b2b030-9eda-4c17-b1a4-84d728904891.jsonl")
	data, _ := os.ReadFile(path)
	p, err := checkpoint.PlanRevert(context.Background(), path, session.Claude, 1, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	if p.Point.Line != 10 || p.CutLine != 7 || p.Cut != lineOffset(data, 7) || p.RemovedRecords != 7 {
		t.Errorf("plan: prompt line %d, cut line %d at %d (want line 7 at %d), removed %d", p.Point.Line, p.CutLine, p.Cut, lineOffset(data, 7), p.RemovedRecords)
	}
}
