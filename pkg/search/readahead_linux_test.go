package search

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// readAhead opens what it is given without blocking: a FIFO in a store
// (nothing writes it) must not hang a search.
func TestReadAheadLeavesFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "a.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	regular := filepath.Join(dir, "b.jsonl")
	if err := os.WriteFile(regular, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		readAhead(fifo)
		readAhead(regular)
		readAhead(filepath.Join(dir, "missing.jsonl"))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("readAhead blocked on a FIFO")
	}
}
