package main

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/cleanup"
)

// cleanupStore copies the real Claude and Codex sample stores into a temp
// HOME (as ~/.claude and ~/.codex), every file aged 60 days, and returns it.
func cleanupStore(t *testing.T) string {
	t.Helper()
	repo, _ := filepath.Abs("../..")
	samples := filepath.Join(repo, "..", "shared", "samples", "real-clients")
	if _, err := os.Stat(samples); err != nil {
		t.Skip("shared samples not available")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	old := time.Now().Add(-60 * 24 * time.Hour)
	for src, dst := range map[string]string{"claude-home/claude": ".claude", "codex-home/codex": ".codex"} {
		from := filepath.Join(samples, src)
		err := filepath.WalkDir(from, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			to := filepath.Join(home, dst, rel)
			if e.IsDir() {
				return os.MkdirAll(to, 0o755)
			}
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.Create(to)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				return err
			}
			out.Close()
			return os.Chtimes(to, old, old)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func tree(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		// cleanup's own lock lives under ~/.local/state
		if err == nil && e.Type().IsRegular() && !strings.HasPrefix(rel, ".local/") {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

const (
	keptClaude = ".claude/projects/-home-dev-work-demo/7bd0bccd-9f75-4483-b19b-c7e227cb8be6.jsonl"
	keptCodex  = ".codex/sessions/2026/11/22/rollout-2026-11-22T02-59-33-01a20131-d660-7d01-9c2a-095cf6a93b50.jsonl"
)

func TestCleanupCLIDryRunThenApply(t *testing.T) {
	home := cleanupStore(t)
	now := time.Now()
	for _, p := range []string{keptClaude, keptCodex} {
		os.Chtimes(filepath.Join(home, p), now.Add(-time.Hour), now.Add(-time.Hour))
	}
	before := tree(t, home)

	// default roots (HOME), dry run: the plan names the files, nothing goes
	out, errOut, code := runCLI(t, "cleanup")
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "would remove 16 of 18 sessions") || !strings.Contains(out, "dry run: nothing was removed") ||
		!strings.Contains(out, "118c3285-b747-4ce4-b8c8-77ffe4c0664b/subagents/agent-a639aa1c2b798f10c.jsonl") {
		t.Fatalf("dry run output:\n%s", out)
	}
	if got := tree(t, home); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("dry run changed files: %v", got)
	}

	// --apply --json
	out, errOut, code = runCLI(t, "cleanup", "--apply", "--json")
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	var rep struct {
		DryRun   bool `json:"dry_run"`
		Sessions []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Files  []struct {
				Path string `json:"path"`
			} `json:"files"`
		} `json:"sessions"`
		Summary struct {
			Sessions int            `json:"sessions"`
			Result   cleanup.Result `json:"result"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if rep.DryRun || rep.Summary.Sessions != 16 || rep.Summary.Result.RemovedSessions != 16 {
		t.Fatalf("report: %+v", rep)
	}
	want := []string{keptClaude, keptCodex}
	if got := tree(t, home); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("left %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude/projects/-home-dev-work-cleanup")); err == nil {
		t.Error("the emptied project directory is still there")
	}
}

func TestCleanupCLIQuietAndLock(t *testing.T) {
	home := cleanupStore(t)
	root := filepath.Join(home, ".claude")
	lock, err := cleanup.Lock(cleanup.LockPath(os.Getenv, home))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "cleanup", "--root", root, "--apply")
	if code != exitRefused || !strings.Contains(errOut, "another sessctl cleanup is running") || out != "" {
		t.Fatalf("with the lock held: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if len(tree(t, root)) != 12 {
		t.Fatalf("files removed while the lock was held: %v", tree(t, root))
	}
	lock.Unlock()

	out, errOut, code = runCLI(t, "cleanup", "--root", root, "--apply", "--quiet", "--older-than", "2w")
	if code != 0 || errOut != "" || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "removed 10 of 10 sessions") {
		t.Fatalf("--quiet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got := tree(t, root); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
}

func TestCleanupCLIBadInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	_, errOut, code := runCLI(t, "cleanup", "--root", filepath.Join(home, "nope"))
	if code != exitError || !strings.Contains(errOut, "sessctl: error: root") || !strings.Contains(errOut, "nope") {
		t.Fatalf("missing root: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{{"--older-than", "30x"}, {"--max-size", "big"}, {"--keep", "-1"}, {"extra-arg"}} {
		_, errOut, code := runCLI(t, append([]string{"cleanup", "--root", home}, args...)...)
		if code != exitError || !strings.Contains(errOut, "sessctl: error:") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// TestCleanupJSONStreamsTheSameBytes: the streamed report is what
// writeJSON wrote, with lists empty, nil and full.
func TestCleanupJSONStreamsTheSameBytes(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	full := &cleanup.Plan{Now: now,
		Sessions:  []*cleanup.Item{{Agent: "claude", ID: "a", Reason: "older than 30d <&>", Files: []cleanup.Entry{{Path: "/x"}}}, {ID: "b"}},
		Rotations: []*cleanup.Item{{ID: "r"}},
		Skipped:   []cleanup.Skip{{ID: "s", Reason: "live"}},
		Side:      []*cleanup.SideRef{{}},
		Warnings:  []string{"w"}}
	for _, p := range []*cleanup.Plan{full, {Now: now}, {Now: now, Sessions: []*cleanup.Item{}, Skipped: []cleanup.Skip{}}} {
		rep := cleanupReport{DryRun: true, Plan: p, Summary: cleanupSummary{Sessions: len(p.Sessions)}}
		var want, got strings.Builder
		if err := writeJSON(&want, rep); err != nil {
			t.Fatal(err)
		}
		if err := writeCleanupJSON(&got, rep); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("streamed\n%s\nwant\n%s", got.String(), want.String())
		}
	}
}
