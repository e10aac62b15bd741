package main

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sessctl/sessctl/pkg/fsroot/fsroottest"
)

// raceCLI runs a deleting command in-process, 20 rounds, each on a fresh
// store in root/projects/-p, while another goroutine keeps swapping that
// directory for a symlink to a directory of decoys with the same names. No
// decoy may ever be removed, and a swap that is seen refuses (exit 3).
func raceCLI(t *testing.T, opt fsroottest.StoreOptions, args func(root string) []string) {
	const rounds = 20
	base := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(base, "state"))
	store := fsroottest.NewStore(t, filepath.Join(base, "template"), opt)
	outside := filepath.Join(base, "outside")
	store.Make(t, outside)
	decoys := fsroottest.Tree(t, outside)
	codes := map[int]int{}
	var swaps int64
	lost := 0
	for round := range rounds {
		root := filepath.Join(base, "claude", "r"+strconv.Itoa(round))
		proj := filepath.Join(root, "projects", "-p")
		store.Make(t, proj)
		s := fsroottest.Swap(t, proj, outside)
		_, stderr, code := runCLI(t, args(root)...)
		s.Stop()
		swaps += s.Swaps.Load()
		codes[code]++
		// a swap seen is a refusal (3), never an I/O error
		if code != exitOK && code != exitRefused {
			t.Errorf("round %d: exit %d: %s", round, code, stderr)
		}
		if gone := fsroottest.Missing(decoys, fsroottest.Tree(t, outside)); len(gone) > 0 {
			lost += len(gone)
			t.Errorf("round %d (exit %d): %d entries outside the root were removed, e.g. %v", round, code, len(gone), gone[:min(len(gone), 5)])
			store.Make(t, outside)
		}
	}
	t.Logf("%d rounds: %d swaps; exit codes %v; %d entries outside the root removed", rounds, swaps, codes, lost)
	if swaps == 0 {
		t.Fatal("the attacker never got its symlink in place: the race was not run")
	}
}

// cleanup --apply over 300 expired sessions (every tenth with a sidecar
// directory) while their project directory is swapped for a symlink. Before
// directory handles, 11 decoys went in 20 rounds.
func TestCleanupCLIRacingASymlinkSwap(t *testing.T) {
	raceCLI(t, fsroottest.StoreOptions{Sessions: 300, SidecarEvery: 10}, func(root string) []string {
		return []string{"cleanup", "--root", root, "--apply", "--quiet"}
	})
}

// prune-rotations --keep 0 over 30 sessions with 10 rotations each (300
// unlinks a round). Before directory handles, 416 decoys went in 20 rounds,
// and every run exited 0.
func TestPruneCLIRacingASymlinkSwap(t *testing.T) {
	raceCLI(t, fsroottest.StoreOptions{Sessions: 30, Rotations: 10}, func(root string) []string {
		return []string{"prune-rotations", "--keep", "0", "--root", root}
	})
}
