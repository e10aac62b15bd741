package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestDiscoverSubagentNamedDirectly: a subagent transcript given as a path
// is its parent's session (Claude's nested and flat layouts, Kimi's), not a
// session of its own.
func TestDiscoverSubagentNamedDirectly(t *testing.T) {
	dir := t.TempDir()
	const id = "11111111-1111-4111-8111-111111111111"
	line := `{"type":"user","isSidechain":true,"message":{"role":"user","content":"x"},"uuid":"22222222-2222-4222-8222-222222222222","sessionId":"` + id + `"}` + "\n"
	files := map[string]string{
		"c/" + id + ".jsonl":                    line,
		"c/" + id + "/subagents/agent-a1.jsonl": line,
		"f/" + id + ".jsonl":                    line,
		"f/agent-b2.jsonl":                      line,
		"k/s1/context.jsonl":                    `{"role":"user","content":"x"}` + "\n",
		"k/s1/subagents/sub1/context.jsonl":     `{"role":"user","content":"y"}` + "\n",
		"orphan/subagents/agent-c3.jsonl":       line, // no parent: a session of its own
	}
	for p, c := range files {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for named, main := range map[string]string{
		"c/" + id + "/subagents/agent-a1.jsonl": "c/" + id + ".jsonl",
		"f/agent-b2.jsonl":                      "f/" + id + ".jsonl",
		"k/s1/subagents/sub1/context.jsonl":     "k/s1/context.jsonl",
		"orphan/subagents/agent-c3.jsonl":       "orphan/subagents/agent-c3.jsonl",
	} {
		res := session.DiscoverPaths([]string{filepath.Join(dir, named)})
		if len(res.Sessions) != 1 || res.Sessions[0].Main != filepath.Join(dir, main) {
			var got []string
			for _, s := range res.Sessions {
				got = append(got, s.Main)
			}
			t.Errorf("%s: sessions %v, want the one of %s (errors %v)", named, got, main, res.Errors)
		}
	}
}
