package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// stats over packed sessions (session.DiscoverPacked, used from
// session.PackFrom sessions on) prints what it prints over the sessions
// as values, through the index (first and warm) and without it, with the
// filters applied to the packed list.
func TestStatsPackedSameAsValues(t *testing.T) {
	roots := []string{filepath.Join("..", "..", "testdata", "sessions"), codexTwins(t)}
	// and ../shared/samples when it is there (Codex rollouts with their
	// twins, Claude Code with subagents)
	if samples := filepath.Join("..", "..", "..", "shared", "samples"); dirExists(samples) {
		roots = append(roots, samples)
	}
	defer func(old int) { session.PackFrom = old }(session.PackFrom)
	for _, root := range roots {
		for _, args := range [][]string{
			{"stats", "--all", "--json"},
			{"stats", "--all", "--by", "agent"},
			{"stats", "--all", "--agent", "codex", "--json"},
			{"stats", "--all", "--since", "2026-02-01", "--json"},
		} {
			args := append(args, "--root", root)
			outputs := func(packFrom int) (out []string) {
				session.PackFrom = packFrom
				t.Setenv("XDG_CACHE_HOME", t.TempDir())
				for _, extra := range [][]string{{"--no-index"}, nil, nil} { // without the index, first, warm
					o, errOut, code := runCLI(t, append(args, extra...)...)
					if code != 0 {
						t.Fatalf("%q %q: exit %d: %s", args, extra, code, errOut)
					}
					out = append(out, o)
				}
				return out
			}
			values, packed := outputs(1<<30), outputs(0)
			for k := range values {
				if packed[k] != values[k] {
					t.Errorf("%q, run %d: packed\n%s\nas values\n%s", args, k, packed[k], values[k])
				}
			}
		}
	}
}

// codexTwins makes a Codex store whose one rollout is in sessions/ and,
// a copy, in archived_sessions/: its usage is counted once.
func codexTwins(t *testing.T) string {
	const name = "rollout-2026-11-01T11-00-00-01a20000-0000-7000-8000-00000000c0de.jsonl"
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sessions", "codex", "sessions", "2026", "11", "01", name))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "codex")
	for _, dir := range []string{filepath.Join(root, "sessions", "2026", "11", "01"), filepath.Join(root, "archived_sessions")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
