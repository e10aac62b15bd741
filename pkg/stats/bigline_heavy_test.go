//go:build heavy

package stats

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// A huge line costs its own size a few times over, not the tokenizer's
// and the decoder's copies of it (issue 11: stats on one 20 MB line peaked
// at 1.2 GB). The line is CJK, the tokenizer's worst case: one piece of
// the whole string.
func TestHugeLineAllocations(t *testing.T) {
	text := strings.Repeat("世界你好", 2<<20/12)
	line, _ := json.Marshal(map[string]any{"role": "user", "content": text})
	dir := t.TempDir()
	p := filepath.Join(dir, "context.jsonl")
	if err := os.WriteFile(p, append(append([]byte(`{"role": "_checkpoint", "id": 0}`+"\n"), line...), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := tokens.NewCounter(tokens.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	// the least of three runs: the parallel reader's timing (and a loaded
	// machine) moves the figure by a few MiB; the regression this guards
	// against is 5× the bound
	alloc := ^uint64(0)
	var a *analyzer
	var tokensSeen int64
	for run := 0; run < 3; run++ {
		a = newAnalyzer(&Report{Agent: session.Kimi}, Options{})
		a.counter = c
		a.precounted = true
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tokensSeen = 0
		err = readParallel(context.Background(), p, session.FormatFor(session.Kimi), a.countCut, a.precount, func(r *session.Record, bigs []bigCount, counts []int) error {
			for _, b := range bigs {
				tokensSeen += b.tokens
			}
			a.bigs, a.pre = bigs, counts
			return a.record(r)
		})
		if err != nil {
			t.Fatal(err)
		}
		a.flush()
		runtime.ReadMemStats(&after)
		alloc = min(alloc, after.TotalAlloc-before.TotalAlloc)
	}
	n := uint64(len(line))
	// jsonl.Reader's growth to hold the line is about 5× of it, the
	// tokenizer's scratch for a chunk a few MiB; without cutting, the
	// decoder's copies and the tokenizer's merge on one piece of the whole
	// string were 40×
	t.Logf("a %d MiB line: %d MiB allocated", n>>20, alloc>>20)
	if alloc > 8*n+16<<20 {
		t.Errorf("reading and estimating a %d MiB line allocated %d MiB (> 8× + 16 MiB)", n>>20, alloc>>20)
	}
	if tokensSeen == 0 || a.rep.Estimate.Total < tokensSeen {
		t.Errorf("the cut part counted %d tokens, the estimate %d", tokensSeen, a.rep.Estimate.Total)
	}
}
