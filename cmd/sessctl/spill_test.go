//go:build heavy

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/stats"
	"github.com/sessctl/sessctl/pkg/usage"
)

// spillRoots are the stores the spilling ledger is held to the one in
// memory on: the repo's test data, two generated corpora (Claude Code with
// the lines ccusage drops, so that the two views differ; Codex, whose
// requests have no keys) and the shared samples when present.
func spillRoots(t *testing.T) map[string]string {
	t.Helper()
	roots := map[string]string{"testdata": filepath.Join("..", "..", "testdata")}
	if s := filepath.Join("..", "..", "..", "shared", "samples"); dirExists(s) {
		roots["samples"] = s
	} else {
		t.Log("no /work/shared/samples: held on the test data and generated corpora only")
	}
	if testing.Short() {
		return roots
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Logf("no go command to run internal/gen (%v): no generated corpora", err)
		return roots
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"claude", "-size", "10MB", "-files", "20", "-quirks"},
		{"codex", "-size", "10MB", "-files", "20"},
	} {
		out := filepath.Join(dir, args[0])
		cmd := exec.Command(gobin, append([]string{"run", "../../internal/gen", args[0], "-out", out}, args[1:]...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("internal/gen %s: %v\n%s", args[0], err, b)
		}
		roots["generated "+args[0]] = out
	}
	return roots
}

// TestSpillSameOutput: with a memory budget of a few requests, so that the
// usage ledger and the sorter behind export and --by day/model spill to
// disk, stats --all --json and export --usage write byte for byte what
// they write with everything in memory, and leave nothing in $TMPDIR; and
// so they do when every file is read streaming into the spilling ledger, a
// few requests at a time (stats.StreamFile).
func TestSpillSameOutput(t *testing.T) {
	// the corpora first: go run wants the real $HOME (its build cache)
	roots := spillRoots(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TZ", "UTC")
	defer usage.SetMemoryBudget(usage.SetMemoryBudget(0))
	for name, root := range roots {
		cases := [][]string{
			{"stats", "--all", "--json", "--no-index", "--no-progress", "--by", "session"},
			{"stats", "--all", "--json", "--no-index", "--no-progress", "--by", "day", "--tz", "UTC"},
			{"stats", "--all", "--json", "--no-index", "--no-progress", "--by", "model"},
			{"stats", "--all", "--json", "--no-index", "--no-progress", "--by", "project"},
			{"export", "--usage", "--machine", "m", "-o", "-"},
			{"export", "--usage", "--machine", "m", "--format", "parquet", "-o", filepath.Join(tmp, "out.parquet")},
		}
		for _, args := range cases {
			args = append(args, "--root", root)
			run := func(budget int) []byte {
				usage.SetMemoryBudget(budget)
				out, errOut, code := runCLI(t, args...)
				if code != 0 {
					t.Fatalf("%s: %v: exit %d: %s", name, args, code, errOut)
				}
				b := []byte(out)
				if args[0] == "export" && args[len(args)-3] != "-" {
					var err error
					if b, err = os.ReadFile(filepath.Join(tmp, "out.parquet")); err != nil {
						t.Fatal(err)
					}
					os.Remove(filepath.Join(tmp, "out.parquet"))
				}
				if left, _ := os.ReadDir(tmp); len(left) != 0 {
					t.Errorf("%s: %v: left in $TMPDIR: %v", name, args, left)
				}
				return b
			}
			want := run(1 << 30)
			// a few requests; on the generated corpora a few hundred (a
			// tiny budget splits every partition to its last level, which
			// the unit tests cover, and takes long on 20 MB)
			budget := 3
			switch {
			case strings.HasPrefix(name, "generated"):
				budget = 300
			case name == "samples":
				budget = 20
			}
			before := usage.Spills()
			got := run(budget)
			// a rollout's requests have no keys and a Codex session is
			// one file: stats by session or project counts them as each
			// file is merged (usage.Ledger.TallyFile), and the ledger
			// holds none to spill; by day and model, and export, keep
			// the requests, which spill
			direct := name == "generated codex" && args[0] == "stats" && (args[6] == "session" || args[6] == "project")
			if spilled := usage.Spills() != before; spilled == direct {
				if direct {
					t.Errorf("%s: %v: the ledger spilled: it held requests a one-file session without keys counts as it is merged", name, args)
				} else {
					t.Errorf("%s: %v: a budget of %d requests did not spill", name, args, budget)
				}
			}
			if len(want) < 100 {
				t.Errorf("%s: %v: only %d bytes of output", name, args, len(want))
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %v: output differs when the ledger spills (%d bytes, in memory %d)", name, args, len(got), len(want))
			}
			// every file read streaming into the ledger, a few requests
			// at a time, spilling or not
			stream, part := stats.StreamFile, usage.StreamPart
			stats.StreamFile, usage.StreamPart = 0, 5
			// (spilling too: the parts go into partitions; streaming
			// without spilling is the same code up to the ledger's add)
			if got := run(budget); !bytes.Equal(got, want) {
				t.Errorf("%s: %v: output differs when the files are streamed (budget %d: %d bytes, else %d)", name, args, budget, len(got), len(want))
			}
			stats.StreamFile, usage.StreamPart = stream, part
		}
	}
}
