package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/rewrite"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// A Kimi file with a malformed line before checkpoint 1, so that the
// revert really drops bytes that only the rotation keeps.
const kimiOrig = `{"role": "_system_prompt", "content": "p"}
{"role": "_checkpoint", "id": 0}
{"role":"user","content":"hello"}
{"role":"assistant","content":"unterminated
{"role": "_checkpoint", "id": 1}
{"role":"user","content":"again"}
`

const kimiWant = `{"role": "_system_prompt", "content": "p"}
{"role": "_checkpoint", "id": 0}
{"role":"user","content":"hello"}
`

func kimiSession(t *testing.T) *session.Session {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "context.jsonl")
	if err := os.WriteFile(p, []byte(kimiOrig), 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	return &session.Session{Agent: session.Kimi, Main: p, Dir: dir}
}

func testEnv() (*appEnv, *bytes.Buffer) {
	var out bytes.Buffer
	return &appEnv{stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" }, now: time.Now}, &out
}

// recoverable: the original bytes are in place or in a rotation, nothing
// else changed, and no temp file is left.
func assertRecoverable(t *testing.T, s *session.Session, step string) {
	t.Helper()
	cur, _ := os.ReadFile(s.Main)
	ents, _ := os.ReadDir(s.Dir)
	found := string(cur) == kimiOrig
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".sessctl-tmp-"):
			t.Errorf("%s: temp file left: %s", step, name)
		case strings.HasPrefix(name, "context_"):
			b, _ := os.ReadFile(filepath.Join(s.Dir, name))
			if string(b) == kimiOrig {
				found = true
			} else if len(b) != 0 {
				t.Errorf("%s: rotation %s holds %q", step, name, b)
			}
		}
	}
	if !found {
		t.Errorf("%s: the original bytes are nowhere (session file %q)", step, cur)
	}
	if string(cur) != kimiOrig && string(cur) != kimiWant {
		t.Errorf("%s: session file is neither the original nor the reverted file: %q", step, cur)
	}
}

// TestRevertFaultAtEveryStep makes revert fail after writing the new
// content, after the rotation and just
// before the rename: each time the command fails and every original byte is
// still present, in place or in a rotation.
func TestRevertFaultAtEveryStep(t *testing.T) {
	for _, step := range []string{rewrite.StepWritten, rewrite.StepRotated, rewrite.StepRename} {
		s := kimiSession(t)
		env, _ := testEnv()
		boom := errors.New("injected fault at " + step)
		err := runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto, fault: func(at string) error {
			if at == step {
				return boom
			}
			return nil
		}})
		if !errors.Is(err, boom) {
			t.Errorf("%s: err %v", step, err)
		}
		cur, _ := os.ReadFile(s.Main)
		if string(cur) != kimiOrig {
			t.Errorf("%s: the session file changed: %q", step, cur)
		}
		assertRecoverable(t, s, step)
		// and a retry succeeds
		env, _ = testEnv()
		if err := runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto}); err != nil {
			t.Errorf("%s: retry: %v", step, err)
		}
		if cur, _ := os.ReadFile(s.Main); string(cur) != kimiWant {
			t.Errorf("%s: retry wrote %q", step, cur)
		}
		assertRecoverable(t, s, step+" retry")
	}
}

// TestRevertFaultMidWrite: the writer fails halfway through the new file.
func TestRevertFaultMidWrite(t *testing.T) {
	s := kimiSession(t)
	plan, err := checkpoint.PlanRevert(context.Background(), s.Main, s.Agent, 1, checkpoint.Auto)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := rewrite.Begin(context.Background(), s.Main, s.Agent, rewrite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	boom := errors.New("disk full")
	_, err = tx.Replace(context.Background(), func(orig io.Reader, dst io.Writer) error {
		return plan.Write(orig, &failAfter{w: dst, n: 50, err: boom}, time.Now())
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	assertRecoverable(t, s, "mid-write")
	if cur, _ := os.ReadFile(s.Main); string(cur) != kimiOrig {
		t.Errorf("session file changed: %q", cur)
	}
}

type failAfter struct {
	w   io.Writer
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n, _ := f.w.Write(p[:f.n])
		f.n = 0
		return n, f.err
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestRevertChangedUnderUs: the client appends while sessctl works; the
// rename is aborted and the appended bytes are kept.
func TestRevertChangedUnderUs(t *testing.T) {
	s := kimiSession(t)
	env, _ := testEnv()
	err := runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto, fault: func(at string) error {
		if at == rewrite.StepRename {
			f, _ := os.OpenFile(s.Main, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(`{"role":"user","content":"late"}` + "\n")
			f.Close()
		}
		return nil
	}})
	if !errors.Is(err, safety.ErrChanged) || exitCode(err) != exitRefused {
		t.Fatalf("err %v (exit %d)", err, exitCode(err))
	}
	if n := strings.Count(err.Error(), s.Main); n != 1 {
		t.Errorf("the message names the path %d times: %v", n, err)
	}
	cur, _ := os.ReadFile(s.Main)
	if string(cur) != kimiOrig+`{"role":"user","content":"late"}`+"\n" {
		t.Errorf("session file %q", cur)
	}
}

// TestRevertRefusesLiveAndLocked: a fresh file is live (exit 3) unless
// --force; a second sessctl holding the lock always wins (exit 3).
func TestRevertRefusesLiveAndLocked(t *testing.T) {
	s := kimiSession(t)
	now := time.Now()
	os.Chtimes(s.Main, now, now)
	env, _ := testEnv()
	err := runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto})
	if !errors.Is(err, safety.ErrLive) || exitCode(err) != exitRefused {
		t.Errorf("live: %v", err)
	}
	lock, err := safety.LockFile(s.Main)
	if err != nil {
		t.Fatal(err)
	}
	err = runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto, force: true})
	if !errors.Is(err, safety.ErrLocked) || exitCode(err) != exitRefused {
		t.Errorf("locked: %v", err)
	}
	var stderr bytes.Buffer
	report(&stderr, err)
	if h := stderr.String(); strings.Contains(h, "--force if") || !strings.Contains(h, "hint: another sessctl run is working on this session") {
		t.Errorf("the hint for a lock held by another sessctl: %s", h)
	}
	lock.Unlock()
	if cur, _ := os.ReadFile(s.Main); string(cur) != kimiOrig {
		t.Errorf("session file changed")
	}
	if err := runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto, force: true}); err != nil {
		t.Errorf("forced: %v", err)
	}
}

// TestRestoreFaultAtEveryStep: restore rotates the current file first; a
// failure at any step leaves the session file and rotation K as they were.
func TestRestoreFaultAtEveryStep(t *testing.T) {
	for _, step := range []string{rewrite.StepWritten, rewrite.StepRotated, rewrite.StepRename} {
		s := kimiSession(t)
		env, _ := testEnv()
		if err := runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto}); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour)
		os.Chtimes(s.Main, old, old)
		boom := errors.New("injected")
		err := runRestore(context.Background(), env, s, restoreOptions{n: 1, fault: func(at string) error {
			if at == step {
				return boom
			}
			return nil
		}})
		if !errors.Is(err, boom) {
			t.Errorf("%s: %v", step, err)
		}
		if cur, _ := os.ReadFile(s.Main); string(cur) != kimiWant {
			t.Errorf("%s: session file %q", step, cur)
		}
		if b, _ := os.ReadFile(filepath.Join(s.Dir, "context_1.jsonl")); string(b) != kimiOrig {
			t.Errorf("%s: rotation 1 changed", step)
		}
		if err := runRestore(context.Background(), env, s, restoreOptions{n: 1}); err != nil {
			t.Errorf("%s: retry: %v", step, err)
		}
		if cur, _ := os.ReadFile(s.Main); string(cur) != kimiOrig {
			t.Errorf("%s: restore wrote %q", step, cur)
		}
	}
}

// TestPruneRespectsLock: while another sessctl holds a session's lock,
// prune-rotations deletes none of its rotations and exits 3.
func TestPruneRespectsLock(t *testing.T) {
	s := kimiSession(t)
	for _, n := range []string{"context_1.jsonl", "context_2.jsonl"} {
		os.WriteFile(filepath.Join(s.Dir, n), []byte(kimiOrig), 0o600)
	}
	lock, err := safety.LockFile(s.Main)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := testEnv()
	err = runPrune(context.Background(), env, []*session.Session{s}, nil, pruneOptions{keep: 0})
	if exitCode(err) != exitRefused {
		t.Errorf("err %v (exit %d), want a refusal", err, exitCode(err))
	}
	for _, n := range []string{"context_1.jsonl", "context_2.jsonl"} {
		if _, err := os.Stat(filepath.Join(s.Dir, n)); err != nil {
			t.Errorf("%s deleted while locked", n)
		}
	}
	lock.Unlock()
	if err := runPrune(context.Background(), env, []*session.Session{s}, nil, pruneOptions{keep: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "context_1.jsonl")); err == nil {
		t.Errorf("context_1.jsonl kept")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "context_2.jsonl")); err != nil {
		t.Errorf("context_2.jsonl deleted")
	}
}

// TestRevertForcedWithAppendingWriter: an agent keeps the session open and
// appends. Before the rename that is a refusal (exit 3, nothing replaced, no
// rotation left); after it, revert succeeds and warns on stderr that the
// appended bytes are only in the rotation.
func TestRevertForcedWithAppendingWriter(t *testing.T) {
	const late = `{"role":"user","content":"late"}` + "\n"
	for _, step := range []string{rewrite.StepWritten, rewrite.StepRenamed} {
		s := kimiSession(t)
		w, err := os.OpenFile(s.Main, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		var out, errb bytes.Buffer
		env := &appEnv{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, now: time.Now}
		err = runRevert(context.Background(), env, s, revertOptions{n: 1, mechanism: checkpoint.Auto, force: true, fault: func(at string) error {
			if at == step {
				_, err := w.WriteString(late)
				return err
			}
			return nil
		}})
		rot := filepath.Join(s.Dir, "context_1.jsonl")
		switch step {
		case rewrite.StepWritten:
			if exitCode(err) != exitRefused || !errors.Is(err, safety.ErrChanged) {
				t.Errorf("%s: err %v (exit %d), want a refusal", step, err, exitCode(err))
			}
			// the message names the file once (issue 11 saw it twice)
			var msg bytes.Buffer
			report(&msg, err)
			if n := strings.Count(msg.String(), s.Main); n != 1 || !strings.Contains(msg.String(), "changed while sessctl was working on it") {
				t.Errorf("%s: the path %d times in %q", step, n, msg.String())
			}
			if cur, _ := os.ReadFile(s.Main); string(cur) != kimiOrig+late {
				t.Errorf("%s: session file %q", step, cur)
			}
			if _, err := os.Stat(rot); err == nil {
				t.Errorf("%s: a rotation was left behind", step)
			}
		case rewrite.StepRenamed:
			if err != nil {
				t.Fatalf("%s: %v", step, err)
			}
			if b, _ := os.ReadFile(rot); string(b) != kimiOrig+late {
				t.Errorf("%s: rotation %q", step, b)
			}
			want := fmt.Sprintf("sessctl: warning: %d bytes were appended to %s while sessctl rewrote it; they are only in the rotation %s", len(late), s.Main, rot)
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%s: stderr %q, want %q", step, errb.String(), want)
			}
		}
	}
}
