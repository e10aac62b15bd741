package codex

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/livemaptest"
	"github.com/sessctl/sessctl/pkg/session"
)

// mapRollouts are the Codex rollouts of the repository (the oracle's cases of
// the real Codex, the hand-written store), the shared samples when present,
// and a few internal/gen makes.
func mapRollouts(t *testing.T) []string {
	dirs := []string{"testdata", "../../../testdata/sessions/codex"}
	for _, d := range []string{"../../../../shared/samples/codex", "../../../../shared/samples/real-clients/codex-home"} {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		} else {
			t.Logf("%s not available: skipped", d)
		}
	}
	if gobin, err := exec.LookPath("go"); err == nil && !testing.Short() {
		out := filepath.Join(t.TempDir(), "gen")
		cmd := exec.Command(gobin, "run", "../../../internal/gen", "codex", "-out", out, "-size", "3MB", "-files", "4")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("internal/gen: %v\n%s", err, b)
		}
		dirs = append(dirs, out)
	}
	// a call without an output, and an output without its call
	own := filepath.Join(t.TempDir(), "rollout-2026-11-22T03-05-20-01a20137-32a6-77c1-b56b-38215cfaf5be.jsonl")
	if err := os.WriteFile(own, []byte(strings.Join(abortedRollout, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{own}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestLiveMapAsHistory holds History through a rollout's live map to
// History reading the whole file (livemaptest.Check), with every output
// Codex adds for a call left unanswered among what a search gives. The map
// must be used: a file that gets none fails.
func TestLiveMapAsHistory(t *testing.T) {
	files := mapRollouts(t)
	compared, synthetic := 0, 0
	for k, path := range files {
		b, _, err := buildLiveMap(context.Background(), path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		full, n := livemaptest.Check(t, Home{}, path, liveMapTag, b, livemaptest.Wants,
			func(m *session.Message) bool { return m.Synthetic }, k)
		compared += n
		for _, m := range full {
			if m.Synthetic {
				synthetic++
			}
		}
	}
	// without the shared samples: the repository's 12 rollouts (the
	// oracle's cases, the store, generated ones, the aborted one)
	if len(files) < 8 || compared < 200 || synthetic == 0 {
		t.Fatalf("only %d files, %d messages compared, %d outputs Codex adds", len(files), compared, synthetic)
	}
	t.Logf("%d files, %d messages compared, %d outputs Codex adds", len(files), compared, synthetic)
}

// TestReplayLiteAsFull: the replay's own decoder (replayHome, which leaves
// out the texts it does not read) gives the replay Home's decoder gives,
// on every rollout of mapRollouts.
func TestReplayLiteAsFull(t *testing.T) {
	files := mapRollouts(t)
	for _, path := range files {
		full, err := replayWith(context.Background(), path, Home{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		lite, err := replayWith(context.Background(), path, replayHome{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lite, full) {
			t.Errorf("%s: the replay's decoder gave\n%+v\nHome's\n%+v", path, lite, full)
		}
	}
	if len(files) < 8 {
		t.Fatalf("only %d rollouts", len(files))
	}
}
