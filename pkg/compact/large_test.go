package compact_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/session"
)

// writeLargeClaude writes a Claude Code 2.1.197 session of about size
// bytes: turns of a prompt, a tool call with a 20 KB output (every 50th
// one 2 MB), and a reply.
func writeLargeClaude(t testing.TB, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	parent := ""
	out := strings.Repeat("ok  \tgithub.com/example/module/pkg\t0.012s\n", 500) // ~20 KB
	big := strings.Repeat(out, 100)                                             // ~2 MB
	for i := 0; written < size; i++ {
		u, a1, r, a2 := fmt.Sprintf("u-%d", i), fmt.Sprintf("a-%d", i), fmt.Sprintf("r-%d", i), fmt.Sprintf("b-%d", i)
		o := out
		if i%50 == 49 {
			o = big
		}
		lines := []string{
			claudeLine("user", u, parent, "2026-11-22T03:00:00.000Z", userText(fmt.Sprintf("Step %d: run the tests of pkg%d and fix what fails in src/pkg%d/file.go", i, i, i))),
			claudeLine("assistant", a1, u, "2026-11-22T03:00:01.000Z", asst(fmt.Sprintf("msg_%da", i), toolUse(fmt.Sprintf("call-%d", i), "Bash", fmt.Sprintf(`{"command":"go test ./pkg%d/..."}`, i)))),
			claudeLine("user", r, a1, "2026-11-22T03:00:02.000Z", toolResult(fmt.Sprintf("call-%d", i), o), fmt.Sprintf(`"sourceToolAssistantUUID":"%s"`, a1)),
			claudeLine("assistant", a2, r, "2026-11-22T03:00:03.000Z", asst(fmt.Sprintf("msg_%db", i), textBlock(strings.Repeat(fmt.Sprintf("Step %d is done; the tests pass. ", i), 20)))),
		}
		for _, l := range lines {
			n, _ := w.WriteString(l + "\n")
			written += int64(n)
		}
		parent = a2
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestLargeSession compacts a 100 MB session and checks that memory stays
// bounded (the live heap is sampled while it runs). It is slow, so it runs
// only with SESSCTL_LARGE=1 (sizes in MB with SESSCTL_LARGE_MB).
func TestLargeSession(t *testing.T) {
	if os.Getenv("SESSCTL_LARGE") != "1" || testing.Short() {
		t.Skip("set SESSCTL_LARGE=1 to compact a 100 MB session")
	}
	mb := int64(100)
	if s := os.Getenv("SESSCTL_LARGE_MB"); s != "" {
		fmt.Sscan(s, &mb)
	}
	path := filepath.Join(t.TempDir(), "large.jsonl")
	if p := os.Getenv("SESSCTL_LARGE_FILE"); p != "" {
		path = p // kept afterwards, e.g. to time the CLI on it
	}
	writeLargeClaude(t, path, mb<<20)
	fi, _ := os.Stat(path)

	var peak uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
		}
	}()
	start := time.Now()
	res, err := compact.Compact(context.Background(), path, session.Claude, compact.Options{Force: true, MaxToolOutput: compact.DefaultMaxToolOutput})
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compacted %d MB (%d messages) in %.2fs; peak heap in use %d MB; tokens %d → %d; summary %d tokens",
		fi.Size()>>20, res.Messages, time.Since(start).Seconds(), peak>>20, res.Tokens.Before, res.Tokens.After, res.SummaryTokens)
	if peak > 64<<20 {
		t.Errorf("peak heap %d MB: memory grows with the file", peak>>20)
	}
	if res.SummaryTokens > compact.DefaultSummaryTokens {
		t.Errorf("summary %d tokens over the budget", res.SummaryTokens)
	}
}
