package cleanup

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// write creates path (and its directories) with content, aged to mtime.
func write(t testing.TB, path, content string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	age(t, path, mtime)
}

func age(t testing.TB, path string, mtime time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// ageTree sets the mtime of every file and directory under dir.
func ageTree(t testing.TB, dir string, mtime time.Time) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && (e.Type().IsRegular() || e.IsDir()) {
			age(t, p, mtime)
		}
		return nil
	})
}

// files lists the regular files under dir, relative, sorted.
func files(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

const (
	kimiLine   = "{\"role\":\"user\",\"content\":\"hi\"}\n"
	claudeLine = `{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,"sessionId":"SID","isSidechain":false,"userType":"external","version":"2.1.197","message":{"role":"user","content":"hi"}}` + "\n"
)

func claudeSession(t testing.TB, root, project, id string, mtime time.Time) string {
	p := filepath.Join(root, "projects", project, id+".jsonl")
	write(t, p, strings.ReplaceAll(claudeLine, "SID", id), mtime)
	return p
}

func kimiSession(t testing.TB, root, hash, id string, mtime time.Time) string {
	dir := filepath.Join(root, "sessions", hash, id)
	write(t, filepath.Join(dir, "context.jsonl"), kimiLine, mtime)
	write(t, filepath.Join(dir, "wire.jsonl"), "{\"type\": \"metadata\", \"protocol_version\": \"1.10\"}\n", mtime)
	write(t, filepath.Join(dir, "state.json"), "{}", mtime)
	return dir
}

const (
	idA = "aaaaaaaa-0000-4000-8000-000000000001"
	idB = "bbbbbbbb-0000-4000-8000-000000000002"
	idC = "cccccccc-0000-4000-8000-000000000003"
)

func plan(t testing.TB, opt Options) *Plan {
	t.Helper()
	if opt.Now.IsZero() {
		opt.Now = now
	}
	p, err := MakePlan(opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ids(items []*Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.ID)
	}
	sort.Strings(out)
	return out
}

func apply(p *Plan) Result {
	return Apply(context.Background(), p, ApplyOptions{Now: func() time.Time { return now }, Writers: func() map[FileKey]string { return nil }})
}

func TestExpiryIsBySessionNotByFile(t *testing.T) {
	root := t.TempDir()
	// A: every file old; B: old transcript but a fresh wire.jsonl
	kimiSession(t, root, "h1", idA, now.Add(-40*day))
	kimiSession(t, root, "h1", idB, now.Add(-40*day))
	age(t, filepath.Join(root, "sessions", "h1", idB, "wire.jsonl"), now.Add(-2*day))
	write(t, filepath.Join(root, "sessions", "h1", idA, "subagents", "a1234abcd", "context.jsonl"), kimiLine, now.Add(-40*day))

	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if got := ids(p.Sessions); len(got) != 1 || got[0] != idA {
		t.Fatalf("planned %v, want only %s", got, idA)
	}
	if n, _ := Files(p.Sessions); n != 4 {
		t.Errorf("plan lists %d files, want 4: %+v", n, p.Sessions[0].Files)
	}
	res := apply(p)
	if res.RemovedSessions != 1 || res.Refused != 0 || res.Failed != 0 {
		t.Fatalf("result %+v, items %+v", res, p.Sessions[0])
	}
	if exists(filepath.Join(root, "sessions", "h1", idA)) {
		t.Error("the session directory of A is still there")
	}
	want := []string{"sessions/h1/" + idB + "/context.jsonl", "sessions/h1/" + idB + "/state.json", "sessions/h1/" + idB + "/wire.jsonl"}
	if got := files(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("left %v, want %v", got, want)
	}
	if !exists(filepath.Join(root, "sessions")) {
		t.Error("the sessions folder itself was removed")
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	root := t.TempDir()
	claudeSession(t, root, "-p", idA, now.Add(-90*day))
	before := files(t, root)
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if len(p.Sessions) != 1 {
		t.Fatalf("planned %d sessions", len(p.Sessions))
	}
	if got := files(t, root); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("planning changed the tree: %v", got)
	}
}

func TestClaudeSidecarsAndCleanupPeriodDays(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".claude")
	write(t, filepath.Join(root, "settings.json"), `{"cleanupPeriodDays": 10}`, now.Add(-400*day))
	old := now.Add(-20 * day)
	claudeSession(t, root, "-home-x", idA, old)
	write(t, filepath.Join(root, "projects", "-home-x", idA, "subagents", "agent-a1.jsonl"), claudeLine, old)
	write(t, filepath.Join(root, "file-history", idA, "0123456789abcdef@v1"), "backup", old)
	if err := os.MkdirAll(filepath.Join(root, "session-env", idA), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "projects", "-home-x", "."+idA+".jsonl"+safety.LockSuffix), "", old)
	ageTree(t, root, old)
	claudeSession(t, root, "-home-x", idB, now.Add(-5*day))

	// cleanupPeriodDays 10: A (20 days) expires, B (5 days) stays
	p := plan(t, Options{Roots: []session.Root{{Path: root}}, OlderThan: DefaultOlderThan})
	if got := ids(p.Sessions); len(got) != 1 || got[0] != idA {
		t.Fatalf("planned %v, want %s", got, idA)
	}
	if !strings.Contains(p.Sessions[0].Reason, "cleanupPeriodDays") {
		t.Errorf("reason %q does not name cleanupPeriodDays", p.Sessions[0].Reason)
	}
	// --older-than given: overrides the setting
	if p2 := plan(t, Options{Roots: []session.Root{{Path: root}}, OlderThan: 30 * day, OlderThanSet: true}); len(p2.Sessions) != 0 {
		t.Fatalf("--older-than 30d planned %v", ids(p2.Sessions))
	}
	res := apply(p)
	if res.RemovedSessions != 1 {
		t.Fatalf("result %+v: %s", res, p.Sessions[0].Error)
	}
	want := []string{"projects/-home-x/" + idB + ".jsonl", "settings.json"}
	if got := files(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("left %v, want %v", got, want)
	}
	for _, d := range []string{"projects/-home-x/" + idA, "file-history/" + idA, "session-env/" + idA} {
		if exists(filepath.Join(root, d)) {
			t.Errorf("%s left behind", d)
		}
	}
	for _, d := range []string{"file-history", "session-env", "projects/-home-x"} {
		if !exists(filepath.Join(root, d)) {
			t.Errorf("%s was removed", d)
		}
	}
}

func TestRotationsAloneAndKeep(t *testing.T) {
	root := t.TempDir()
	main := claudeSession(t, root, "-p", idA, now.Add(-1*day))
	write(t, main+".1", claudeLine, now.Add(-60*day))
	write(t, main+".2", claudeLine, now.Add(-3*day))
	// two old sessions in another project: --keep 1 keeps the newer
	claudeSession(t, root, "-q", idB, now.Add(-100*day))
	claudeSession(t, root, "-q", idC, now.Add(-50*day))

	p := plan(t, Options{Roots: []session.Root{{Path: root}}, Rotations: true, Keep: 1})
	if got := ids(p.Sessions); len(got) != 1 || got[0] != idB {
		t.Fatalf("planned sessions %v, want %s", got, idB)
	}
	if len(p.Rotations) != 1 || len(p.Rotations[0].Files) != 1 || p.Rotations[0].Files[0].Path != main+".1" {
		t.Fatalf("planned rotations %+v", p.Rotations)
	}
	if len(p.Skipped) != 1 || p.Skipped[0].ID != idC || !strings.Contains(p.Skipped[0].Reason, "--keep") {
		t.Errorf("skipped %+v", p.Skipped)
	}
	res := apply(p)
	if res.RemovedSessions != 1 || res.RemovedRotations != 1 {
		t.Fatalf("result %+v", res)
	}
	want := []string{"projects/-p/" + idA + ".jsonl", "projects/-p/" + idA + ".jsonl.2", "projects/-q/" + idC + ".jsonl"}
	if got := files(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("left %v, want %v", got, want)
	}
}

func TestMaxSizeRemovesOldestFirst(t *testing.T) {
	root := t.TempDir()
	for i, id := range []string{idA, idB, idC} {
		p := claudeSession(t, root, "-p", id, now.Add(-time.Duration(10-i)*day))
		write(t, p, strings.Repeat(claudeLine, 10), now.Add(-time.Duration(10-i)*day))
	}
	fi, _ := os.Stat(filepath.Join(root, "projects", "-p", idA+".jsonl"))
	size := fi.Size()
	p := plan(t, Options{Roots: []session.Root{{Path: root}}, MaxSize: 2 * size})
	if got := ids(p.Sessions); len(got) != 1 || got[0] != idA {
		t.Fatalf("planned %v, want the oldest %s", got, idA)
	}
	p = plan(t, Options{Roots: []session.Root{{Path: root}}, MaxSize: size / 2, Keep: 1})
	if got := ids(p.Sessions); len(got) != 2 || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "cannot get under") {
		t.Fatalf("planned %v, warnings %v", got, p.Warnings)
	}
}

func TestKimiLastSessionIDIsCleared(t *testing.T) {
	root := t.TempDir()
	kimiSession(t, root, session.KimiWorkDirHash("/w/a"), idA, now.Add(-40*day))
	kimiSession(t, root, session.KimiWorkDirHash("/w/b"), idB, now.Add(-40*day))
	kimiJSON := "{\n  \"work_dirs\": [\n    {\n      \"path\": \"/w/a\",\n      \"kaos\": \"local\",\n      \"last_session_id\": \"" + idA + "\"\n    },\n    {\n      \"path\": \"/w/ü\",\n      \"kaos\": \"local\",\n      \"last_session_id\": \"" + idC + "\"\n    }\n  ]\n}"
	write(t, filepath.Join(root, "kimi.json"), kimiJSON, now.Add(-40*day))
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if len(p.Side) != 1 || p.Side[0].SessionID != idA || p.Side[0].Action != ActionClear {
		t.Fatalf("side refs %+v", p.Side)
	}
	apply(p)
	if p.Side[0].Status != SideDone {
		t.Fatalf("side ref %+v", p.Side[0])
	}
	b, _ := os.ReadFile(filepath.Join(root, "kimi.json"))
	want := strings.Replace(kimiJSON, `"`+idA+`"`, "null", 1) + "\n"
	if string(b) != want {
		t.Errorf("kimi.json =\n%s\nwant\n%s", b, want)
	}
}

func TestCodexSideStateIsReported(t *testing.T) {
	root := t.TempDir()
	id := "01a20131-d660-7d01-9c2a-095cf6a93b50"
	write(t, filepath.Join(root, "sessions", "2026", "01", "02", "rollout-2026-01-02T10-00-00-"+id+".jsonl"),
		`{"timestamp":"2026-01-02T10:00:00.000Z","type":"session_meta","payload":{"id":"`+id+`","cwd":"/w"}}`+"\n", now.Add(-40*day))
	write(t, filepath.Join(root, "session_index.jsonl"), `{"id":"`+id+`","thread_name":"x","updated_at":"2026-01-02T10:00:00Z"}`+"\n", now)
	write(t, filepath.Join(root, "state_5.sqlite"), "SQLite format 3\x00", now)
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if len(p.Sessions) != 1 || len(p.Side) != 2 {
		t.Fatalf("sessions %v side %+v", ids(p.Sessions), p.Side)
	}
	apply(p)
	for _, r := range p.Side {
		if r.Status != SideStale || r.Action != ActionReport {
			t.Errorf("side ref %+v", r)
		}
	}
	// the date folders emptied by the removal go, sessions/ stays
	if exists(filepath.Join(root, "sessions", "2026")) || !exists(filepath.Join(root, "sessions")) {
		t.Errorf("left %v", files(t, root))
	}
	if !exists(filepath.Join(root, "session_index.jsonl")) || !exists(filepath.Join(root, "state_5.sqlite")) {
		t.Error("side files removed")
	}
}

// --- safety ---

func TestSymlinkOutOfRootIsNeverFollowed(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	// a file outside, linked from inside a session dir and as a whole project dir
	write(t, filepath.Join(outside, "precious.jsonl"), claudeLine, now.Add(-90*day))
	claudeSession(t, outside, "-o", idC, now.Add(-90*day))
	dir := kimiSession(t, root, "h", idA, now.Add(-90*day))
	if err := os.Symlink(filepath.Join(outside, "precious.jsonl"), filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "projects"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "projects", "-o"), filepath.Join(root, "projects", "-o")); err != nil {
		t.Fatal(err)
	}
	claudeSession(t, root, "-p", idB, now.Add(-90*day))

	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if got := ids(p.Sessions); strings.Join(got, ",") != idA+","+idB {
		t.Fatalf("planned %v", got)
	}
	for _, it := range p.Sessions {
		for _, f := range it.Files {
			if strings.Contains(f.Path, "link.jsonl") || strings.HasPrefix(f.Path, outside) {
				t.Fatalf("plan lists %s", f.Path)
			}
		}
	}
	// between plan and apply, B's project dir is swapped for a symlink to
	// a directory outside that holds a file of the same name
	proj := filepath.Join(root, "projects", "-p")
	evil := filepath.Join(outside, "evil")
	write(t, filepath.Join(evil, idB+".jsonl"), strings.ReplaceAll(claudeLine, "SID", idB), now.Add(-90*day))
	if err := os.Rename(proj, filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(evil, proj); err != nil {
		t.Fatal(err)
	}
	res := apply(p)
	if res.RemovedSessions != 1 || res.Refused != 1 {
		t.Fatalf("result %+v", res)
	}
	for _, it := range p.Sessions {
		if it.ID == idB && (it.Status != StatusRefused || !strings.Contains(it.Error, "outside the root")) {
			t.Errorf("B: %s %s", it.Status, it.Error)
		}
	}
	for _, f := range []string{filepath.Join(outside, "precious.jsonl"), filepath.Join(evil, idB+".jsonl"),
		filepath.Join(outside, "projects", "-o", idC+".jsonl")} {
		if !exists(f) {
			t.Errorf("%s outside the root was removed", f)
		}
	}
	// the symlink itself stays, and so does the directory holding it
	if !exists(filepath.Join(dir, "link.jsonl")) {
		t.Error("the symlink in the session dir was removed")
	}
}

func TestLiveSessionIsLeftAlone(t *testing.T) {
	root := t.TempDir()
	// recent writes: skipped at planning (with --max-size forcing the issue)
	claudeSession(t, root, "-p", idA, now.Add(-2*time.Second))
	p := plan(t, Options{Roots: []session.Root{{Path: root}}, OlderThan: time.Nanosecond, OlderThanSet: true, MaxSize: 1})
	if len(p.Sessions) != 0 || len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0].Reason, "live") {
		t.Fatalf("planned %v, skipped %+v", ids(p.Sessions), p.Skipped)
	}

	// an open writer (another process holds the file open for appending)
	mainB := claudeSession(t, root, "-p", idB, now.Add(-90*day))
	f, err := os.OpenFile(mainB, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start a writer process:", err)
	}
	f.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	age(t, mainB, now.Add(-90*day))
	writers := OpenWriters()
	if len(writers) == 0 {
		t.Skip("no /proc: open writers cannot be seen here")
	}
	// the plan already leaves it out
	p = plan(t, Options{Roots: []session.Root{{Path: root}}})
	if len(p.Sessions) != 0 || len(p.Skipped) != 1 || !strings.Contains(p.Skipped[0].Reason, "open for writing by process") {
		t.Fatalf("planned %v, skipped %+v", ids(p.Sessions), p.Skipped)
	}
	// and if the writer opens it after planning, apply refuses
	p = plan(t, Options{Roots: []session.Root{{Path: root}}, Writers: func() map[FileKey]string { return nil }})
	if len(p.Sessions) != 1 || p.Sessions[0].ID != idB {
		t.Fatalf("planned %v", ids(p.Sessions))
	}
	res := Apply(context.Background(), p, ApplyOptions{Now: func() time.Time { return now }, Writers: func() map[FileKey]string { return writers }})
	if res.Refused != 1 || !strings.Contains(p.Sessions[0].Error, "open for writing") || !exists(mainB) {
		t.Fatalf("result %+v, %s", res, p.Sessions[0].Error)
	}
	if !errors.Is(p.Sessions[0].Err(), safety.ErrLive) {
		t.Error("not an ErrLive refusal")
	}
}

func TestLockHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "sessctl", "cleanup.lock")
	l, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(path)
	if !errors.Is(err, safety.ErrLocked) || !strings.Contains(err.Error(), "another sessctl cleanup is running") {
		t.Fatalf("second lock: %v", err)
	}
	l.Unlock()
	l2, err := Lock(path)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

func TestSessionLockHeldRefuses(t *testing.T) {
	root := t.TempDir()
	main := claudeSession(t, root, "-p", idA, now.Add(-90*day))
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	l, err := safety.LockFile(main) // another sessctl is rewriting the session
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	res := apply(p)
	if res.Refused != 1 || !exists(main) {
		t.Fatalf("result %+v %s", res, p.Sessions[0].Error)
	}
}

func TestChangeBetweenPlanAndDelete(t *testing.T) {
	root := t.TempDir()
	mainA := claudeSession(t, root, "-p", idA, now.Add(-90*day))
	claudeSession(t, root, "-p", idB, now.Add(-90*day))
	dirC := kimiSession(t, root, "h", idC, now.Add(-90*day))
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if len(p.Sessions) != 3 {
		t.Fatalf("planned %v", ids(p.Sessions))
	}
	// A grows (and keeps its old mtime: only size and inode tell); C gets a new file
	f, _ := os.OpenFile(mainA, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(claudeLine)
	f.Close()
	age(t, mainA, now.Add(-90*day))
	write(t, filepath.Join(dirC, "subagents", "a1", "context.jsonl"), kimiLine, now.Add(-90*day))

	res := apply(p)
	if res.RemovedSessions != 1 || res.Refused != 2 {
		t.Fatalf("result %+v", res)
	}
	for _, it := range p.Sessions {
		switch it.ID {
		case idA, idC:
			if it.Status != StatusRefused || it.RemovedFiles != 0 {
				t.Errorf("%s: %s (%s), removed %d", it.ID, it.Status, it.Error, it.RemovedFiles)
			}
		case idB:
			if it.Status != StatusRemoved {
				t.Errorf("B: %s %s", it.Status, it.Error)
			}
		}
	}
	want := []string{"projects/-p/" + idA + ".jsonl", "sessions/h/" + idC + "/context.jsonl", "sessions/h/" + idC + "/state.json",
		"sessions/h/" + idC + "/subagents/a1/context.jsonl", "sessions/h/" + idC + "/wire.jsonl"}
	if got := files(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("left %v, want %v", got, want)
	}
}

// --- bad input ---

func TestMissingRoot(t *testing.T) {
	_, err := MakePlan(Options{Roots: []session.Root{{Path: filepath.Join(t.TempDir(), "nope")}}, Now: now})
	if !errors.Is(err, ErrNoRoot) {
		t.Fatalf("err %v", err)
	}
	p, err := MakePlan(Options{Roots: []session.Root{{Path: filepath.Join(t.TempDir(), "nope")}}, MissingOK: true, Now: now})
	if err != nil || len(p.Sessions) != 0 {
		t.Fatalf("missingOK: %v %v", p, err)
	}
}

func TestUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	root := t.TempDir()
	dir := kimiSession(t, root, "h", idA, now.Add(-90*day))
	write(t, filepath.Join(dir, "tasks", "t1", "output.log"), "x", now.Add(-90*day))
	os.Chmod(filepath.Join(dir, "tasks"), 0)
	defer os.Chmod(filepath.Join(dir, "tasks"), 0o755)
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if len(p.Sessions) != 0 || len(p.Warnings) == 0 {
		t.Fatalf("planned %v, warnings %v, skipped %v", ids(p.Sessions), p.Warnings, p.Skipped)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"20G": 20 << 30, "500M": 500 << 20, "1.5K": 1536, "7": 7, "2GiB": 2 << 30, "1t": 1 << 40} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "20X", "-1G", "1 G"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

// TestFileRemovedBetweenPlanAndApply: a file of the plan vanished (the
// agent, or the user, removed it): the session is refused whole, nothing
// else of it is removed, and nothing panics.
func TestFileRemovedBetweenPlanAndApply(t *testing.T) {
	root := t.TempDir()
	dir := kimiSession(t, root, "h", idA, now.Add(-90*day))
	p := plan(t, Options{Roots: []session.Root{{Path: root}}})
	if len(p.Sessions) != 1 {
		t.Fatalf("planned %v", ids(p.Sessions))
	}
	os.Remove(filepath.Join(dir, "wire.jsonl"))
	res := apply(p)
	if res.Refused != 1 || res.RemovedFiles != 0 || !strings.Contains(p.Sessions[0].Error, "wire.jsonl") {
		t.Fatalf("result %+v: %s", res, p.Sessions[0].Error)
	}
	want := []string{"sessions/h/" + idA + "/context.jsonl", "sessions/h/" + idA + "/state.json"}
	if got := files(t, root); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("left %v, want %v", got, want)
	}
}

// TestRootMayBeASymlink: ~/.claude -> /data/claude is a normal setup; the
// sessions under it are removed like any others.
func TestRootMayBeASymlink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "data", "claude")
	claudeSession(t, real, "-p", idA, now.Add(-90*day))
	link := filepath.Join(base, ".claude")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p := plan(t, Options{Roots: []session.Root{{Path: link}}})
	if res := apply(p); res.RemovedSessions != 1 {
		t.Fatalf("result %+v: %+v %+v", res, p.Sessions, p.Skipped)
	}
	if exists(filepath.Join(real, "projects", "-p")) || !exists(filepath.Join(real, "projects")) || !exists(link) {
		t.Errorf("left %v", files(t, real))
	}
}

// TestRotationsOfLiveSessionListedAsSkipped: --rotations leaves the old
// rotations of a live session alone, and says so (they were left out
// without a word).
func TestRotationsOfLiveSessionListedAsSkipped(t *testing.T) {
	root := t.TempDir()
	main := claudeSession(t, root, "-p", idA, now.Add(-time.Second))
	write(t, main+".1", claudeLine, now.Add(-60*day))
	write(t, main+".2", claudeLine, now.Add(-40*day))
	p := plan(t, Options{Roots: []session.Root{{Path: root}}, Rotations: true})
	if len(p.Rotations) != 0 {
		t.Fatalf("planned rotations of a live session: %+v", p.Rotations)
	}
	if len(p.Skipped) != 1 || p.Skipped[0].ID != idA || !strings.Contains(p.Skipped[0].Reason, "2 rotated files kept: the session is live") {
		t.Errorf("skipped %+v", p.Skipped)
	}
}
