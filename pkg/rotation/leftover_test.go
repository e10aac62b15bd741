package rotation

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// deadPID is above any pid_max, so no process ever has it.
const deadPID = 2147483647

func ages(t *testing.T, p string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// leftoverDir makes a Claude session s.jsonl with one of each kind of
// leftover, plus files that are not leftovers, and returns the directory.
func leftoverDir(t *testing.T) string {
	dir := t.TempDir()
	w := func(name, content string) string {
		p := filepath.Join(dir, name)
		write(t, p, content, 0o600)
		ages(t, p, time.Hour)
		return p
	}
	live := w("s.jsonl", "{}\n")
	w("s.jsonl.1", "{\"old\":1}\n") // a real rotation
	w("s.jsonl.2", "")              // a placeholder
	if err := os.Link(live, filepath.Join(dir, "s.jsonl.3")); err != nil {
		t.Fatal(err) // an alias
	}
	w(".sessctl-tmp-s.jsonl-"+fmt.Sprint(deadPID)+"-0123456789ab", "{}")     // its process is gone
	w(".sessctl-tmp-s.jsonl-"+fmt.Sprint(os.Getpid())+"-0123456789ab", "{}") // ours
	w(".sessctl-tmp-s.jsonl-1234567890", "{}")                               // old name, no pid
	w(".sessctl-tmp-gone.jsonl-1234567890", "{}")                            // its file is gone
	w(".sessctl-tmp-kimi.json-1", "{}")                                      // not a session, no pid
	if err := os.Link(filepath.Join(dir, "s.jsonl.1"), filepath.Join(dir, ".sessctl-tmp-link-"+fmt.Sprint(deadPID)+"-1")); err != nil {
		t.Fatal(err) // an old link temp, second name of rotation 1
	}
	p := w("s.jsonl.4", "") // empty but fresh: Kimi may be reserving it right now
	os.Chtimes(p, time.Now(), time.Now())
	w("other.jsonl", "{}\n")
	w("kimi.json", "{}\n")
	return dir
}

func scan(t *testing.T, dir string, unlocked bool) map[string]Leftover {
	t.Helper()
	d, err := fsroot.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ls, err := ScanDir(d, Bases{"s.jsonl": session.Claude, "other.jsonl": session.Claude},
		func(string) bool { return unlocked }, time.Now(), safety.DefaultQuiet)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Leftover{}
	for _, l := range ls {
		out[l.Name()] = l
	}
	return out
}

func stale(m map[string]Leftover) []string {
	var out []string
	for name, l := range m {
		if l.Stale {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func TestScanDirTellsStaleLeftovers(t *testing.T) {
	dir := leftoverDir(t)
	// while another sessctl may hold the session's lock, only temp files of
	// processes that are gone are stale
	locked := scan(t, dir, false)
	want := []string{".sessctl-tmp-gone.jsonl-1234567890", ".sessctl-tmp-link-2147483647-1", ".sessctl-tmp-s.jsonl-2147483647-0123456789ab"}
	if got := stale(locked); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("locked: stale %v, want %v", got, want)
	}
	unlocked := scan(t, dir, true)
	want = []string{".sessctl-tmp-gone.jsonl-1234567890", ".sessctl-tmp-link-2147483647-1",
		".sessctl-tmp-s.jsonl-1234567890", ".sessctl-tmp-s.jsonl-" + fmt.Sprint(os.Getpid()) + "-0123456789ab",
		".sessctl-tmp-s.jsonl-2147483647-0123456789ab", "s.jsonl.2", "s.jsonl.3"}
	sort.Strings(want)
	if got := stale(unlocked); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("unlocked: stale %v, want %v", got, want)
	}
	for name, kind := range map[string]string{"s.jsonl.2": KindPlaceholder, "s.jsonl.3": KindAlias, ".sessctl-tmp-link-2147483647-1": KindTemp} {
		if unlocked[name].Kind != kind || unlocked[name].Base() != "s.jsonl" {
			t.Errorf("%s: kind %q of %q", name, unlocked[name].Kind, unlocked[name].Base())
		}
	}
	// never leftovers: the live file, a rotation with bytes, a fresh empty
	// rotation; a temp of kimi.json without a pid is listed but stays
	for _, name := range []string{"s.jsonl", "s.jsonl.1", "s.jsonl.4", "other.jsonl"} {
		if _, ok := unlocked[name]; ok {
			t.Errorf("%s listed as a leftover", name)
		}
	}
	if l, ok := unlocked[".sessctl-tmp-kimi.json-1"]; !ok || l.Stale || l.Base() != "" {
		t.Errorf("kimi.json temp: %+v %v", l, ok)
	}
}

// RemoveStale (the caller holds the lock) removes exactly the stale ones,
// each only if unchanged, and no byte of the session is lost.
func TestRemoveStaleUnderTheLock(t *testing.T) {
	dir := leftoverDir(t)
	d, err := fsroot.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	done, err := RemoveStale(d, "s.jsonl", session.Claude, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range done {
		names = append(names, l.Name())
		if !strings.Contains(l.Removed(), l.Path) {
			t.Errorf("message %q", l.Removed())
		}
	}
	sort.Strings(names)
	wantNames := []string{".sessctl-tmp-link-2147483647-1", ".sessctl-tmp-s.jsonl-1234567890",
		".sessctl-tmp-s.jsonl-" + fmt.Sprint(os.Getpid()) + "-0123456789ab", ".sessctl-tmp-s.jsonl-2147483647-0123456789ab", "s.jsonl.2", "s.jsonl.3"}
	sort.Strings(wantNames)
	if want := strings.Join(wantNames, " "); strings.Join(names, " ") != want {
		t.Fatalf("removed %v\nwant %s", names, want)
	}
	for name, content := range map[string]string{"s.jsonl": "{}\n", "s.jsonl.1": "{\"old\":1}\n", "s.jsonl.4": ""} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != content {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	// temps of other files are not the session's: left for cleanup
	for _, name := range []string{".sessctl-tmp-gone.jsonl-1234567890", ".sessctl-tmp-kimi.json-1"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s removed with the session's leftovers", name)
		}
	}
}

func TestParseTempName(t *testing.T) {
	for name, want := range map[string]string{
		jsonl.TempFileName("a-b.jsonl", 42) + "0123456789ab":      "a-b.jsonl 42",
		".sessctl-tmp-rollout-2026-11-22T02-59-33-x.jsonl-123456": "rollout-2026-11-22T02-59-33-x.jsonl 0",
		".sessctl-tmp-link-77-3":                                  " 77",
		".sessctl-tmp-kimi.json-":                                 "",
		"context.jsonl":                                           "",
	} {
		target, pid, ok := jsonl.ParseTempName(name)
		got := ""
		if ok {
			got = fmt.Sprintf("%s %d", target, pid)
		}
		if got != want {
			t.Errorf("ParseTempName(%q) = %q, want %q", name, got, want)
		}
	}
}
