package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// Ctrl-C before a command's action begins (its line still being parsed,
// on a slow start) stops it there: the program does not wait for it, and
// the action never runs. Before, such a command was waited for as one that
// may write: it ran to its end and exited 0.
func TestInterruptBeforeTheActionBegins(t *testing.T) {
	var out bytes.Buffer
	env := &appEnv{stdout: &out, stderr: &out, getenv: func(string) string { return "" }, home: t.TempDir(), now: time.Now}
	never := make(chan error)
	start := time.Now()
	if err := awaitInterrupted(env, never); !errors.Is(err, errInterrupted) {
		t.Fatalf("awaitInterrupted before the action: %v, want interrupted", err)
	}
	if d := time.Since(start); d >= interruptGrace {
		t.Errorf("waited %v for a command that had not begun", d)
	}
	app := newApp(env)
	err := app.RunContext(context.Background(), []string{"sessctl", "ls", "--root", "../../testdata/sessions"})
	if !errors.Is(err, errInterrupted) {
		t.Errorf("the action after Ctrl-C: %v, want interrupted", err)
	}
	if out.Len() != 0 {
		t.Errorf("the action ran after Ctrl-C: %q", out.String())
	}
}

// Once a command's action has begun, Ctrl-C waits for one that may write
// (it rolls back before it returns), and gives one that only reads
// interruptGrace to stop.
func TestInterruptWaitsForWriting(t *testing.T) {
	env := &appEnv{}
	env.phase.Store(phaseWriting)
	done := make(chan error, 1)
	go func() {
		time.Sleep(3 * interruptGrace)
		done <- errors.New("rolled back")
	}()
	if err := awaitInterrupted(env, done); err == nil || err.Error() != "rolled back" {
		t.Errorf("a writing command: %v, want its own error once it returned", err)
	}
	env.phase.Store(phaseReading)
	if err := awaitInterrupted(env, make(chan error)); !errors.Is(err, errInterrupted) {
		t.Errorf("a reading command that does not stop: %v, want interrupted", err)
	}
	if env.phase.Load() != phaseReading {
		t.Errorf("phase %d after Ctrl-C of a running command", env.phase.Load())
	}
}
