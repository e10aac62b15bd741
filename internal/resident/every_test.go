package resident

import (
	"sync/atomic"
	"testing"
	"time"
)

// ShedEvery sheds until it is stopped, and not after: stop returns once
// its last shed is done, and may be called twice.
func TestShedEvery(t *testing.T) {
	var n atomic.Int64
	old := shed
	shed = func() { n.Add(1) }
	defer func() { shed = old }()
	stop := ShedEvery(time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for n.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stop()
	stop()
	at := n.Load()
	if at < 3 {
		t.Fatalf("%d sheds in 10 s, want 3 or more", at)
	}
	time.Sleep(20 * time.Millisecond)
	if got := n.Load(); got != at {
		t.Errorf("%d sheds after stop returned, want none", got-at)
	}
}
