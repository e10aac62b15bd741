package rotation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// pruneDirFixture copies leftoverDir's mix (rotations, a placeholder, an
// alias, temp files of every kind, a link temp, other files) and adds more
// sessions in the same directory, each with rotations, so that PruneDir
// has to tell whose entry is whose.
func pruneDirFixture(t *testing.T) (string, []PruneTarget) {
	dir := leftoverDir(t)
	ts := []PruneTarget{{Main: filepath.Join(dir, "s.jsonl"), Agent: session.Claude}}
	for i := range 30 {
		base := fmt.Sprintf("%08x-0000-4000-8000-000000000000.jsonl", i)
		write(t, filepath.Join(dir, base), "{}\n", 0o600)
		for k := 1; k <= i%5; k++ {
			write(t, filepath.Join(dir, fmt.Sprintf("%s.%d", base, k*3)), fmt.Sprintf("{\"r\":%d}\n", k), 0o600)
		}
		if i%7 == 0 {
			write(t, filepath.Join(dir, ".sessctl-tmp-"+base+"-"+fmt.Sprint(deadPID)+"-00000000000"+fmt.Sprint(i%10)), "{}", 0o600)
		}
		for _, e := range []string{base, base + ".3", base + ".6"} {
			if _, err := os.Stat(filepath.Join(dir, e)); err == nil {
				ages(t, filepath.Join(dir, e), time.Hour)
			}
		}
		ts = append(ts, PruneTarget{Main: filepath.Join(dir, base), Agent: session.Claude})
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		ages(t, filepath.Join(dir, e.Name()), time.Hour)
	}
	os.Chtimes(filepath.Join(dir, "s.jsonl.4"), time.Now(), time.Now()) // fresh, as in leftoverDir
	return dir, ts
}

func names(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// PruneDir, from one listing of the directory, does for each session what
// Prune does for it alone: the same rotations deleted and kept, the same
// leftovers removed, the same files left.
func TestPruneDirDoesWhatPruneDoes(t *testing.T) {
	for _, dryRun := range []bool{true, false} {
		for _, keep := range []int{0, 1, 2} {
			a, ts := pruneDirFixture(t)
			b, _ := pruneDirFixture(t)
			if !slices.Equal(names(t, a), names(t, b)) {
				t.Fatal("the fixtures differ")
			}
			now := time.Now()
			rel := func(ts []PruneTarget, dir string) []PruneTarget {
				out := make([]PruneTarget, len(ts))
				for i, x := range ts {
					out[i] = PruneTarget{Main: filepath.Join(dir, filepath.Base(x.Main)), Agent: x.Agent}
				}
				return out
			}
			results, errs := PruneDir(context.Background(), b, rel(ts, b), keep, dryRun, now)
			for i, x := range rel(ts, a) {
				want, werr := Prune(a, x.Main, x.Agent, keep, dryRun, now)
				got, gerr := results[i], errs[i]
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("dry %v keep %d %s: error %v, Prune %v", dryRun, keep, filepath.Base(x.Main), gerr, werr)
				}
				short := func(r *PruneResult) string {
					var del, left []string
					for _, d := range r.Deleted {
						del = append(del, filepath.Base(d.Path))
					}
					for _, l := range r.Leftovers {
						left = append(left, filepath.Base(l.Path))
					}
					return fmt.Sprintf("deleted %v kept %d leftovers %v", del, r.Kept, left)
				}
				if short(got) != short(want) {
					t.Errorf("dry %v keep %d %s:\nPruneDir %s\nPrune    %s", dryRun, keep, filepath.Base(x.Main), short(got), short(want))
				}
			}
			if !slices.Equal(names(t, a), names(t, b)) {
				t.Errorf("dry %v keep %d: left\nPruneDir %v\nPrune    %v", dryRun, keep, names(t, b), names(t, a))
			}
		}
	}
}

// A done context stops PruneDir before the next session; the ones not
// pruned get its error.
func TestPruneDirStopsWhenCanceled(t *testing.T) {
	dir, ts := pruneDirFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, errs := PruneDir(ctx, dir, ts, 0, false, time.Now())
	for i, err := range errs {
		if err != context.Canceled {
			t.Fatalf("target %d: %v", i, err)
		}
	}
}

// Kimi's rotations are named the client's way (context_N.jsonl): PruneDir
// finds them as Prune does.
func TestPruneDirKimiNames(t *testing.T) {
	mk := func() string {
		dir := t.TempDir()
		for _, n := range []string{"context.jsonl", "context_1.jsonl", "context_2.jsonl", "context_5.jsonl", "wire.jsonl", "context.jsonl.1"} {
			write(t, filepath.Join(dir, n), "{}\n", 0o600)
			ages(t, filepath.Join(dir, n), time.Hour)
		}
		return dir
	}
	a, b := mk(), mk()
	now := time.Now()
	want, werr := Prune(a, filepath.Join(a, "context.jsonl"), session.Kimi, 1, false, now)
	got, gerrs := PruneDir(context.Background(), b, []PruneTarget{{Main: filepath.Join(b, "context.jsonl"), Agent: session.Kimi}}, 1, false, now)
	if werr != nil || gerrs[0] != nil {
		t.Fatal(werr, gerrs[0])
	}
	if len(want.Deleted) != 2 || len(got[0].Deleted) != len(want.Deleted) || !slices.Equal(names(t, a), names(t, b)) {
		t.Errorf("PruneDir deleted %d, left %v; Prune deleted %d, left %v", len(got[0].Deleted), names(t, b), len(want.Deleted), names(t, a))
	}
}
