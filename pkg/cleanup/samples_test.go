package cleanup

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// samples is the shared samples folder, or the test is skipped.
func samples(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "samples"))
	if _, err := os.Stat(dir); err != nil {
		t.Skip("shared samples not available:", dir)
	}
	return dir
}

// copyTree copies src to dst with writable modes (the samples are read-only).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSamplesClaudeAndCodex(t *testing.T) {
	s := samples(t)
	base := t.TempDir()
	claude := filepath.Join(base, ".claude")
	codex := filepath.Join(base, ".codex")
	copyTree(t, filepath.Join(s, "real-clients", "claude-home", "claude"), claude)
	copyTree(t, filepath.Join(s, "real-clients", "codex-home", "codex"), codex)
	ageTree(t, base, now.Add(-60*day))
	// one Claude session was used yesterday; the Codex rollouts are spread
	// over 60..53 days ago, the cleanup-project one oldest
	demo := filepath.Join(claude, "projects", "-home-dev-work-demo")
	age(t, filepath.Join(demo, "7bd0bccd-9f75-4483-b19b-c7e227cb8be6.jsonl"), now.Add(-1*day))
	rollouts, _ := filepath.Glob(filepath.Join(codex, "sessions", "2026", "11", "22", "rollout-*.jsonl"))
	sort.Strings(rollouts)
	if len(rollouts) != 8 {
		t.Fatalf("expected 8 sample rollouts, found %d", len(rollouts))
	}
	for i, r := range rollouts {
		age(t, r, now.Add(-time.Duration(53+i)*day))
	}

	p := plan(t, Options{Roots: []session.Root{{Path: claude}, {Path: codex}}, Keep: 1})
	// Claude: all but 7bd0bccd (the newest of -home-dev-work-demo anyway) and
	// 871671e3 (the only one of -home-dev-work-cleanup: --keep 1)
	// Codex: --keep 1 per cwd keeps the newest /home/dev/work/demo rollout
	// (the first by name) and the only /home/dev/work/cleanup one (the last)
	res := apply(p)
	if res.Refused != 0 || res.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	left := files(t, base)
	want := []string{
		".claude/projects/-home-dev-work-cleanup/871671e3-e1ae-4b1f-9ebe-dcbc064c2c9a.jsonl",
		".claude/projects/-home-dev-work-demo/7bd0bccd-9f75-4483-b19b-c7e227cb8be6.jsonl",
		".codex/sessions/2026/11/22/" + filepath.Base(rollouts[0]),
		".codex/sessions/2026/11/22/" + filepath.Base(rollouts[7]),
	}
	if strings.Join(left, "\n") != strings.Join(want, "\n") {
		t.Fatalf("left:\n%s\nwant:\n%s", strings.Join(left, "\n"), strings.Join(want, "\n"))
	}
	if res.RemovedSessions != 8+6 {
		t.Errorf("removed %d sessions, want 14", res.RemovedSessions)
	}
	// the subagent sidecar directory went with its session
	if exists(filepath.Join(demo, "118c3285-b747-4ce4-b8c8-77ffe4c0664b")) {
		t.Error("118c3285's sidecar directory is still there")
	}
}

func TestSamplesKimiRotations(t *testing.T) {
	s := samples(t)
	root := filepath.Join(t.TempDir(), ".kimi")
	dir := filepath.Join(root, "sessions", session.KimiWorkDirHash("/home/alice/src/parse"), idA)
	copyTree(t, filepath.Join(s, "kimi", "ex2_compacted_session"), dir)
	age(t, filepath.Join(dir, "context_1.jsonl"), now.Add(-45*day))
	age(t, filepath.Join(dir, "context.jsonl"), now.Add(-3*day))
	before, _ := os.ReadFile(filepath.Join(dir, "context.jsonl"))

	// the session is 3 days old: it stays, its 45-day-old rotation goes
	p := plan(t, Options{Roots: []session.Root{{Path: root}}, Rotations: true})
	if len(p.Sessions) != 0 || len(p.Rotations) != 1 {
		t.Fatalf("sessions %v rotations %+v", ids(p.Sessions), p.Rotations)
	}
	res := apply(p)
	if res.RemovedRotations != 1 || exists(filepath.Join(dir, "context_1.jsonl")) {
		t.Fatalf("result %+v", res)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "context.jsonl"))
	if string(before) != string(after) {
		t.Error("context.jsonl changed")
	}
	if got := files(t, root); len(got) != 1 {
		t.Errorf("left %v", got)
	}
}
