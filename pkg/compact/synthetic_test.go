package compact_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestCodexTailCallWithoutOutput: a kept call whose output Codex never
// wrote (killed during the tool, then resumed). The history carries
// Codex's own "aborted" output for it, a message no line holds; the
// compaction's tail must hold the call once and one aborted output, not a
// second copy of the call's line.
func TestCodexTailCallWithoutOutput(t *testing.T) {
	src := filepath.Join(samples(t, "real-clients", "codex-home", "codex", "sessions", "2026", "11", "22"), codexSample)
	path := filepath.Join(t.TempDir(), codexSample)
	b := copyFile(t, src, path)
	// drop the second call's output (line 32)
	lines := strings.SplitAfter(string(b), "\n")
	if !strings.Contains(lines[31], `"function_call_output"`) {
		t.Fatalf("line 32 of the sample is not an output: %.80s", lines[31])
	}
	lines = append(lines[:31], lines[32:]...)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	callID := func(ms []session.Message) (calls, outs int) {
		for _, m := range ms {
			for _, c := range m.ToolCalls {
				if strings.Contains(lines[28], c.ID) {
					calls++
				}
			}
			for _, r := range m.ToolResults {
				if strings.Contains(lines[28], r.CallID) {
					outs++
				}
			}
		}
		return
	}
	if c, o := callID(live(t, path, session.Codex)); c != 1 || o != 1 {
		t.Fatalf("before: the call %d times, outputs %d", c, o)
	}
	o := opts()
	o.Keep = 3
	if _, err := compact.Compact(context.Background(), path, session.Codex, o); err != nil {
		t.Fatal(err)
	}
	if c, o := callID(live(t, path, session.Codex)); c != 1 || o != 1 {
		t.Errorf("after the compaction: the call %d times, outputs %d (want 1 and 1)", c, o)
	}
}
