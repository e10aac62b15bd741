//go:build unix

package claude

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/livemaptest"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestLiveMapRefusesFIFO: a live map kept for a path that now names a FIFO
// does not have the search open it and wait for a writer.
func TestLiveMapRefusesFIFO(t *testing.T) {
	src := "../../../testdata/sessions/claude/projects/-home-alice-src-web/5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl"
	b, _, err := buildLiveMap(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "s.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	kept := &livemaptest.Memory{}
	kept.Keep(fifo, liveMapTag, b)
	done := make(chan error, 1)
	go func() {
		_, err := Home{}.historyByLiveMap(context.Background(), fifo,
			session.HistoryOptions{Want: func([]byte) bool { return true }, LiveMaps: kept},
			func(*session.Message) error { return nil })
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO was searched without an error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the search opened the FIFO and waits")
	}
}
