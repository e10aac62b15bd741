package cleanup

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot/fsroottest"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestApplyRacingASymlinkSwapRemovesNothingOutside runs Apply over 300
// expired sessions, 20 times, while another goroutine keeps swapping their
// project directory for a symlink to a directory of decoys with the same
// names. A check by path followed by a removal by path deletes decoys (26
// of them in 20 rounds against the code before directory handles); removal
// through directory handles never does.
func TestApplyRacingASymlinkSwapRemovesNothingOutside(t *testing.T) {
	const rounds, sessions = 20, 300
	base := t.TempDir()
	store := fsroottest.NewStore(t, filepath.Join(base, "template"), fsroottest.StoreOptions{Sessions: sessions, SidecarEvery: 10})
	outside := filepath.Join(base, "outside")
	store.Make(t, outside) // the decoys: the same names, other files
	decoys := fsroottest.Tree(t, outside)
	var swaps int64
	removed, lost := 0, 0
	for round := range rounds {
		root := filepath.Join(base, "claude", "r"+string(rune('a'+round)))
		proj := filepath.Join(root, "projects", "-p")
		store.Make(t, proj)
		p := plan(t, Options{Roots: []session.Root{{Path: root}}, Now: time.Now(), Writers: func() map[FileKey]string { return map[FileKey]string{} }})
		if len(p.Sessions) != sessions {
			t.Fatalf("planned %d sessions, want %d", len(p.Sessions), sessions)
		}
		s := fsroottest.Swap(t, proj, outside)
		res := Apply(context.Background(), p, ApplyOptions{Writers: func() map[FileKey]string { return nil }})
		s.Stop()
		swaps += s.Swaps.Load()
		removed += res.RemovedSessions
		if gone := fsroottest.Missing(decoys, fsroottest.Tree(t, outside)); len(gone) > 0 {
			lost += len(gone)
			t.Errorf("round %d: %d entries outside the root were removed (%+v), e.g. %v", round, len(gone), res, gone[:min(len(gone), 5)])
			store.Make(t, outside)
		}
	}
	t.Logf("%d rounds: %d swaps, %d of %d sessions removed, the rest refused; %d entries outside the root removed",
		rounds, swaps, removed, rounds*sessions, lost)
	if swaps == 0 {
		t.Fatal("the attacker never got its symlink in place: the race was not run")
	}
}
