package index

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A run's result is found by the next run, in the same run before it is
// written, and not once it is among the older than the maxRuns newest; a
// value larger than MaxRun is not kept; a nil index keeps nothing.
func TestRunsStoredAndAgedOut(t *testing.T) {
	dir := t.TempDir()
	ix := Open(dir)
	if ix == nil {
		t.Fatal("no index")
	}
	ix.StoreRun([]byte("k0"), []byte("v0"))
	if v := ix.LoadRun([]byte("k0")); string(v) != "v0" {
		t.Fatalf("pending run: %q", v)
	}
	ix.StoreRun([]byte("big"), []byte(strings.Repeat("x", MaxRun+1)))
	ix = reopen(t, ix, dir)
	if v := ix.LoadRun([]byte("k0")); string(v) != "v0" {
		t.Fatalf("after reopening: %q", v)
	}
	if v := ix.LoadRun([]byte("big")); v != nil {
		t.Fatalf("a value over MaxRun was kept (%d bytes)", len(v))
	}
	if v := ix.LoadRun([]byte("k1")); v != nil {
		t.Fatalf("a key never stored: %q", v)
	}
	if st := ix.Stats(); st.RunHits != 1 {
		t.Fatalf("%d run hits, want 1", st.RunHits)
	}
	// maxRuns more, each in a run of its own (a later time): k0 goes
	for i := 1; i <= maxRuns; i++ {
		time.Sleep(time.Millisecond)
		ix.StoreRun([]byte(fmt.Sprint("k", i)), []byte(fmt.Sprint("v", i)))
		ix = reopen(t, ix, dir)
	}
	if v := ix.LoadRun([]byte("k0")); v != nil {
		t.Errorf("the oldest of %d runs was kept", maxRuns+1)
	}
	for i := 1; i <= maxRuns; i++ {
		if v := ix.LoadRun([]byte(fmt.Sprint("k", i))); string(v) != fmt.Sprint("v", i) {
			t.Errorf("run k%d: %q", i, v)
		}
	}
	ix.Close()

	var none *Index
	none.StoreRun([]byte("k"), []byte("v"))
	if v := none.LoadRun([]byte("k")); v != nil {
		t.Errorf("a nil index gave %q", v)
	}
}
