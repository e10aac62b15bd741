package cleanup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

const deadTemp = "-2147483647-0123456789ab" // no process has pid 2147483647

func leftoverNames(ls []*Leftover, status string) []string {
	var out []string
	for _, l := range ls {
		if l.Status == status {
			out = append(out, filepath.Base(l.Path))
		}
	}
	sort.Strings(out)
	return out
}

// cleanup lists the leftovers of interrupted rewrites across the store in
// its plan, removes the stale ones with --apply (and nothing on a dry run),
// and leaves those it cannot prove stale.
func TestCleanupRemovesLeftoversStoreWide(t *testing.T) {
	root := t.TempDir()
	mainA := claudeSession(t, root, "-p", idA, now.Add(-day)) // stays
	claudeSession(t, root, "-p", idB, now.Add(-90*day))       // expires
	proj := filepath.Dir(mainA)
	old := now.Add(-2 * day)
	write(t, filepath.Join(proj, ".sessctl-tmp-"+idA+".jsonl"+deadTemp), "partial", old)
	write(t, filepath.Join(proj, idA+".jsonl.1"), "", old) // placeholder
	write(t, filepath.Join(proj, ".sessctl-tmp-"+idB+".jsonl"+deadTemp), "partial", old)
	write(t, filepath.Join(proj, ".sessctl-tmp-gone.jsonl-123456"), "partial", old) // its file is gone
	running := fmt.Sprintf(".sessctl-tmp-kimi.json-%d-0123456789ab", os.Getppid())
	write(t, filepath.Join(root, "kimi.json"), "{}", old)
	write(t, filepath.Join(root, running), "{", old)
	dirK := kimiSession(t, root, "h", idC, now.Add(-day)) // stays; Kimi sessions are whole directories
	write(t, filepath.Join(dirK, ".sessctl-tmp-context.jsonl-99"), "partial", old)

	p := plan(t, Options{Roots: []session.Root{{Path: root}}, Writers: func() map[FileKey]string { return map[FileKey]string{} }})
	if ids(p.Sessions)[0] != idB || len(p.Sessions) != 1 {
		t.Fatalf("planned %v", ids(p.Sessions))
	}
	want := strings.Join([]string{".sessctl-tmp-" + idA + ".jsonl" + deadTemp, ".sessctl-tmp-" + idB + ".jsonl" + deadTemp,
		".sessctl-tmp-context.jsonl-99", ".sessctl-tmp-gone.jsonl-123456", idA + ".jsonl.1"}, " ")
	if got := strings.Join(leftoverNames(p.Leftovers, StatusPlanned), " "); got != want {
		t.Fatalf("planned leftovers\n%s\nwant\n%s", got, want)
	}
	if got := leftoverNames(p.Leftovers, StatusSkipped); len(got) != 1 || got[0] != running {
		t.Fatalf("skipped leftovers %v", got)
	}
	if n, b := p.PlannedLeftovers(); n != 5 || b != 4*int64(len("partial")) {
		t.Errorf("PlannedLeftovers = %d, %d", n, b)
	}
	// a dry run (the plan) changed nothing and created no lock file
	for _, name := range strings.Fields(want) {
		if !exists(filepath.Join(proj, name)) && !exists(filepath.Join(dirK, name)) {
			t.Fatalf("%s removed by planning", name)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(proj, "*.sessctl.lock")); len(m) != 0 {
		t.Fatalf("planning created %v", m)
	}

	res := apply(p)
	if res.RemovedLeftovers != 5 || res.RemovedSessions != 1 || res.Refused != 0 || res.Failed != 0 {
		t.Fatalf("result %+v", res)
	}
	for _, name := range strings.Fields(want) {
		if exists(filepath.Join(proj, name)) || exists(filepath.Join(dirK, name)) {
			t.Errorf("%s is still there", name)
		}
	}
	if !exists(mainA) || !exists(filepath.Join(root, running)) || !exists(filepath.Join(dirK, "context.jsonl")) {
		t.Error("removed more than the stale leftovers")
	}
	if m, _ := filepath.Glob(filepath.Join(proj, ".*.sessctl.lock")); len(m) != 0 {
		t.Errorf("lock files left: %v", m)
	}
}

// While another sessctl holds a session's lock, its placeholder may be a
// name that sessctl is about to fill: not stale, left alone.
func TestLeftoversOfALockedSessionStay(t *testing.T) {
	root := t.TempDir()
	mainA := claudeSession(t, root, "-p", idA, now.Add(-day))
	proj := filepath.Dir(mainA)
	write(t, filepath.Join(proj, idA+".jsonl.1"), "", now.Add(-2*day))
	l, err := safety.LockFile(mainA)
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, Options{Roots: []session.Root{{Path: root}}, Writers: func() map[FileKey]string { return map[FileKey]string{} }})
	if got := leftoverNames(p.Leftovers, StatusSkipped); len(got) != 1 || got[0] != idA+".jsonl.1" {
		t.Fatalf("skipped %v (planned %v)", got, leftoverNames(p.Leftovers, StatusPlanned))
	}
	l.Unlock()
	// planned while free, locked by the time of --apply: refused, left
	p = plan(t, Options{Roots: []session.Root{{Path: root}}, Writers: func() map[FileKey]string { return map[FileKey]string{} }})
	if l, err = safety.LockFile(mainA); err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	res := Apply(context.Background(), p, ApplyOptions{Now: func() time.Time { return now }, Writers: func() map[FileKey]string { return nil }})
	if res.RemovedLeftovers != 0 || res.Refused != 1 || !exists(filepath.Join(proj, idA+".jsonl.1")) {
		t.Fatalf("result %+v", res)
	}
}
