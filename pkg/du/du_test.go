package du

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/index"
	"github.com/sessctl/sessctl/pkg/session"
)

// claudeLine is a Claude Code user or assistant record with id uuid.
func claudeLine(sess, uuid, parent, text string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":"2026-11-01T10:00:00.000Z","cwd":"/home/alice/web","sessionId":%q,"version":"2.1.197"}`,
		p, text, uuid, sess)
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// regularBytes sums the regular files under dir, as find -type f does.
func regularBytes(t *testing.T, dir string) (n int64, files int) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			n += fi.Size()
			files++
		}
		return nil
	})
	return n, files
}

// A store with a fork: B copies A's three records (ids kept, the session id
// re-stamped) and adds two; C is another conversation.
func forkStore(t *testing.T) (root, a, b, c string, aCopied int64) {
	root = filepath.Join(t.TempDir(), ".claude")
	proj := filepath.Join(root, "projects", "-home-alice-web")
	ida, idb, idc := "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002", "cccccccc-0000-4000-8000-000000000003"
	var la, lb []string
	parent := ""
	for i := range 3 {
		u := fmt.Sprintf("10000000-0000-4000-8000-00000000000%d", i)
		la = append(la, claudeLine(ida, u, parent, fmt.Sprint("step ", i)))
		lb = append(lb, claudeLine(idb, u, parent, fmt.Sprint("step ", i)))
		parent = u
	}
	for _, l := range la {
		aCopied += int64(len(l)) + 1
	}
	// A went on after the fork: its own record is no copy, nor is a line
	// without an id
	la = append(la, claudeLine(ida, "30000000-0000-4000-8000-000000000000", parent, "only in A"))
	la = append(la, `{"type":"summary","summary":"web work","leafUuid":"10000000-0000-4000-8000-000000000002"}`)
	for i := 3; i < 5; i++ {
		u := fmt.Sprintf("10000000-0000-4000-8000-00000000000%d", i)
		lb = append(lb, claudeLine(idb, u, parent, fmt.Sprint("step ", i)))
		parent = u
	}
	a, b, c = filepath.Join(proj, ida+".jsonl"), filepath.Join(proj, idb+".jsonl"), filepath.Join(proj, idc+".jsonl")
	write(t, a, strings.Join(la, "\n")+"\n")
	write(t, b, strings.Join(lb, "\n")+"\n")
	write(t, c, claudeLine(idc, "20000000-0000-4000-8000-000000000000", "", "other")+"\n")
	return root, a, b, c, aCopied
}

func TestForkCopies(t *testing.T) {
	root, a, b, c, copied := forkStore(t)
	opt := Options{Roots: []session.Root{{Path: root}}, Now: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	rep, err := Measure(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	checkForkCopies(t, rep, a, b, c, copied)
	// through the index: the first ids read once, then kept
	dir := t.TempDir()
	for run, want := range []index.Stats{{Misses: 3, Written: 3}, {Hits: 3}} {
		ix := index.Open(dir)
		if ix == nil {
			t.Fatal("no index")
		}
		rep, err := MeasureWith(context.Background(), opt, ix.HeadOf)
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		if st := ix.Stats(); st != want {
			t.Errorf("run %d through the index: %+v, want %+v", run, st, want)
		}
		checkForkCopies(t, rep, a, b, c, copied)
	}
}

func checkForkCopies(t *testing.T, rep *Report, a, b, c string, copied int64) {
	t.Helper()
	got := map[string]*Session{}
	for _, s := range rep.Sessions {
		got[s.Main] = s
	}
	if s := got[a]; s == nil || s.ForkCopy != copied || s.ForkOf != b {
		t.Errorf("A: %+v, want %d bytes copied from %s", s, copied, b)
	}
	if got[b] == nil || got[b].ForkCopy != 0 || got[c] == nil || got[c].ForkCopy != 0 {
		t.Errorf("B %+v, C %+v: want no copies", got[b], got[c])
	}
	if r := rep.Reclaimable.ForkCopies; r.Files != 1 || r.Bytes != copied {
		t.Errorf("reclaimable fork copies %+v, want 1 transcript, %d bytes", r, copied)
	}
}

// The total is the regular files under the roots, each once, whatever
// discovery makes of them: a symbolic link is neither followed nor
// counted, a root inside another is not counted twice, and the sessions
// and "other" add up to the total.
func TestTotalIsFileSizes(t *testing.T) {
	root, _, _, _, _ := forkStore(t)
	outside := t.TempDir()
	write(t, filepath.Join(outside, "big"), strings.Repeat("x", 1<<16))
	if err := os.Symlink(outside, filepath.Join(root, "projects", "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "history.jsonl"), "{}\n")
	write(t, filepath.Join(root, "file-history", "aaaaaaaa-0000-4000-8000-000000000001", "f@v1"), "old text")
	write(t, filepath.Join(root, "projects", "-home-alice-web", "aaaaaaaa-0000-4000-8000-000000000001.jsonl.1"), "{}\n")
	testdata, err := filepath.Abs("../../testdata/sessions")
	if err != nil {
		t.Fatal(err)
	}
	roots := []session.Root{{Path: root}, {Path: filepath.Join(root, "projects")}, {Path: testdata}}
	rep, err := Measure(context.Background(), Options{Roots: roots, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	n1, f1 := regularBytes(t, root)
	n2, f2 := regularBytes(t, testdata)
	if rep.Total.Bytes != n1+n2 || rep.Total.Files != f1+f2 {
		t.Errorf("total %+v, want %d files, %d bytes", rep.Total, f1+f2, n1+n2)
	}
	sum := rep.Other
	var rot int64
	for _, s := range rep.Sessions {
		sum.Files += s.Total.Files
		sum.Bytes += s.Total.Bytes
		if s.MainFile.Bytes+s.Rotations.Bytes+s.Side.Bytes != s.Total.Bytes {
			t.Errorf("%s: main, rotations and side %d+%d+%d != total %d", s.Main, s.MainFile.Bytes, s.Rotations.Bytes, s.Side.Bytes, s.Total.Bytes)
		}
		rot += s.Rotations.Bytes
	}
	if sum != rep.Total {
		t.Errorf("sessions and other %+v, total %+v", sum, rep.Total)
	}
	if rot < 3 || rep.Reclaimable.Rotations.Bytes != rot {
		t.Errorf("rotations %d bytes, reclaimable %+v", rot, rep.Reclaimable.Rotations)
	}
	if rep.Other.Bytes < 3 {
		t.Errorf("other %+v: history.jsonl is not a session's", rep.Other)
	}
	// Claude Code's file-history/<id>/ is the session's
	for _, s := range rep.Sessions {
		if s.ID == "aaaaaaaa-0000-4000-8000-000000000001" && s.Side.Bytes != int64(len("old text")) {
			t.Errorf("side of A %+v, want its file history", s.Side)
		}
	}
	// the files of a Claude session's sidecar directory are its side files
	side, _ := regularBytes(t, filepath.Join(testdata, "claude/projects/-home-alice-src-web/5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"))
	for _, s := range rep.Sessions {
		if s.ID == "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f" && (side == 0 || s.Side.Bytes != side) {
			t.Errorf("side %+v, want %d bytes", s.Side, side)
		}
	}
}

// A session older than the expiry is reclaimable whole, and its rotations
// and copies are not counted again.
func TestExpired(t *testing.T) {
	root, _, _, _, _ := forkStore(t)
	old := time.Now().Add(-90 * 24 * time.Hour)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	rep, err := Measure(context.Background(), Options{Roots: []session.Root{{Path: root}}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := regularBytes(t, root)
	rc := rep.Reclaimable
	if rc.Sessions != 3 || rc.Expired.Bytes != all || rc.ForkCopies.Bytes != 0 || rc.Bytes != all {
		t.Errorf("reclaimable %+v, want 3 expired sessions of %d bytes and nothing else", rc, all)
	}
}
