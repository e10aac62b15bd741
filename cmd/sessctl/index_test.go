package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/index"
	bolt "go.etcd.io/bbolt"
)

// indexCommands are the commands that read through the index, with the
// outputs a test compares byte for byte.
var indexCommands = [][]string{
	{"ls"},
	{"ls", "--json"},
	{"ls", "--project", "web"},
	{"stats", "--all"},
	{"stats", "--all", "--json"},
	{"stats", "--all", "--by", "day", "--tz", "UTC"},
	{"stats", "--all", "--by", "model"},
	// grep keeps the live maps of the Claude transcripts it searches
	{"grep", "e", "--json"},
	{"grep", "-i", "E"},
	// du reads the transcripts' first record ids through it, and with
	// --by project (as stats) their working directories
	{"du", "--json"},
	{"du", "--by", "project"},
	{"stats", "--all", "--by", "project"},
	// export --usage reads the same entries as stats (its rows, their
	// sessions' working directories)
	{"export", "--usage", "-o", "-", "--machine", "m"},
}

// indexStore copies the repository's test sessions (one of each agent,
// with a subagent and a rotation) to a temporary store, and points the
// index at a cache of its own.
func indexStore(t *testing.T) (root, cache string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "store")
	if err := os.CopyFS(root, os.DirFS("../../testdata/sessions")); err != nil {
		t.Fatal(err)
	}
	cache = t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("SESSCTL_NO_INDEX", "")
	t.Setenv("NO_COLOR", "1")
	return root, cache
}

// outputs runs every index command over root, with extra arguments, and
// returns what each printed (stdout, stderr and exit code), and what the
// runs did with the index.
func outputs(t *testing.T, root string, extra ...string) ([]string, index.Stats) {
	t.Helper()
	var total index.Stats
	indexClosed = func(s index.Stats) {
		total.Hits += s.Hits
		total.Grown += s.Grown
		total.Misses += s.Misses
		total.Written += s.Written
		total.RunHits += s.RunHits
	}
	defer func() { indexClosed = nil }()
	var outs []string
	for _, c := range indexCommands {
		args := append(append(append([]string{}, extra...), c...), "--root", root)
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		outs = append(outs, out+"\n--stderr--\n"+errOut)
	}
	return outs, total
}

func sameOutputs(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: sessctl %s differs from --no-index:\n got %q\nwant %q", what, strings.Join(indexCommands[i], " "), got[i], want[i])
		}
	}
}

// TestIndexChangesNoOutput runs ls and stats with and without the index
// over a store that changes between runs: cold, warm, after a line is
// appended, after a file is renamed, with a corrupt index, and compares
// every output byte for byte with --no-index.
func TestIndexChangesNoOutput(t *testing.T) {
	root, cache := indexStore(t)
	dbPath := filepath.Join(cache, "sessctl", index.FileName)
	// ls keeps a snapshot of its discovery only of a store that has not
	// changed for 2 s (session.DiscoverCached): the runs below are to go
	// through one
	time.Sleep(2100 * time.Millisecond)

	want, st := outputs(t, root, "--no-index")
	if _, err := os.Stat(dbPath); err == nil || st != (index.Stats{}) {
		t.Fatalf("--no-index made or used an index: %+v", st)
	}
	t.Setenv("SESSCTL_NO_INDEX", "1")
	got, st := outputs(t, root)
	sameOutputs(t, "SESSCTL_NO_INDEX=1", got, want)
	if _, err := os.Stat(dbPath); err == nil || st != (index.Stats{}) {
		t.Fatalf("SESSCTL_NO_INDEX=1 made or used an index: %+v", st)
	}
	t.Setenv("SESSCTL_NO_INDEX", "")

	got, st = outputs(t, root)
	sameOutputs(t, "cold", got, want)
	if st.Misses == 0 || st.Written == 0 {
		t.Fatalf("cold run wrote nothing to the index: %+v", st)
	}
	if snaps, _ := filepath.Glob(filepath.Join(cache, "sessctl", "discovery-*.snap")); len(snaps) != 2 {
		t.Fatalf("the cold ls kept %d snapshots, want 2: its discovery's and its rows' (session.Memo)", len(snaps))
	}
	got, st = outputs(t, root)
	sameOutputs(t, "warm", got, want)
	if st.Misses != 0 || st.Grown != 0 || st.Hits == 0 {
		t.Fatalf("warm run read files again: %+v", st)
	}
	// stats --all, stats --all --json and --by project: the result of the
	// whole run (by day and by model count requests, which it does not keep)
	if st.RunHits != 3 {
		t.Fatalf("warm stats runs answered from the index's results of whole runs: %d, want 3: %+v", st.RunHits, st)
	}

	// one more request at the end of the Claude transcript: every command
	// must see it
	main := filepath.Join(root, "claude/projects/-home-alice-src-web/5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl")
	appendLine(t, main, `{"type":"assistant","sessionId":"5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f","uuid":"ix-1","timestamp":"2026-11-02T09:00:00.000Z","requestId":"req_ix1","message":{"id":"msg_ix1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"appended"}],"usage":{"input_tokens":1000,"output_tokens":2000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`)
	before := want
	want, _ = outputs(t, root, "--no-index")
	for i := range want {
		if i != 0 && want[i] == before[i] { // ls's table may show the same rounded numbers
			t.Fatalf("the appended line changed nothing in sessctl %s: the test proves nothing", strings.Join(indexCommands[i], " "))
		}
	}
	got, st = outputs(t, root)
	sameOutputs(t, "after an append", got, want)
	if st.Grown == 0 {
		t.Errorf("the grown file was not continued from where it was read: %+v", st)
	}
	got, _ = outputs(t, root)
	sameOutputs(t, "warm after an append", got, want)

	// a line half written, then completed
	appendText(t, main, `{"type":"user","sessionId":"5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f","uuid":"ix-2",`)
	want, _ = outputs(t, root, "--no-index")
	got, _ = outputs(t, root)
	sameOutputs(t, "after a torn line", got, want)
	appendText(t, main, `"timestamp":"2026-11-02T09:01:00.000Z","message":{"role":"user","content":"more"}}`+"\n")
	want, _ = outputs(t, root, "--no-index")
	got, _ = outputs(t, root)
	sameOutputs(t, "after the torn line was completed", got, want)

	// a renamed session file is still known
	codex := filepath.Join(root, "codex/sessions/2026/11/01/rollout-2026-11-01T11-00-00-01a20000-0000-7000-8000-00000000c0de.jsonl")
	renamed := strings.Replace(codex, "11-00-00", "11-00-01", 1)
	if err := os.Rename(codex, renamed); err != nil {
		t.Fatal(err)
	}
	want, _ = outputs(t, root, "--no-index")
	got, st = outputs(t, root)
	sameOutputs(t, "after a rename", got, want)
	if st.Misses != 0 {
		t.Errorf("a renamed file was read again: %+v", st)
	}

	// a file rewritten with other content of the same size is read again
	rewriteSameSize(t, main)
	want, _ = outputs(t, root, "--no-index")
	got, _ = outputs(t, root)
	sameOutputs(t, "after a rewrite", got, want)

	// a corrupt index is rebuilt without a word
	if err := os.WriteFile(dbPath, []byte(strings.Repeat("not a bbolt file\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	got, st = outputs(t, root)
	sameOutputs(t, "corrupt index", got, want)
	if st.Written == 0 {
		t.Errorf("the corrupt index was not rebuilt: %+v", st)
	}
	got, st = outputs(t, root)
	sameOutputs(t, "rebuilt index", got, want)
	if st.Misses != 0 {
		t.Errorf("the rebuilt index was not used: %+v", st)
	}

	// deleted: the same again
	if err := os.Remove(dbPath); err != nil {
		t.Fatal(err)
	}
	got, _ = outputs(t, root)
	sameOutputs(t, "deleted index", got, want)
}

// TestIndexLockedByAnotherRun holds the index as a writing run would: the
// commands go on without it, promptly, with the same output.
func TestIndexLockedByAnotherRun(t *testing.T) {
	root, cache := indexStore(t)
	want, _ := outputs(t, root, "--no-index")
	outputs(t, root) // make the index
	db, err := bolt.Open(filepath.Join(cache, "sessctl", index.FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	got, st := outputs(t, root)
	sameOutputs(t, "locked index", got, want)
	if st != (index.Stats{}) {
		t.Errorf("a locked index was used: %+v", st)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("waited %v for a locked index", d)
	}
}

func appendText(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendLine(t *testing.T, path, line string) { appendText(t, path, line+"\n") }

// rewriteSameSize changes a number in the file in place, keeping its
// size.
func rewriteSameSize(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nb := strings.Replace(string(b), `"output_tokens":2000`, `"output_tokens":3000`, 1)
	if nb == string(b) {
		t.Fatal("nothing to rewrite")
	}
	if err := os.WriteFile(path, []byte(nb), 0o600); err != nil {
		t.Fatal(err)
	}
}

// export --usage reads each file's requests through the index, the same
// entries stats reads (and the working directories --by project reads): a
// run after stats reads no file, and neither does a second export; the
// rows are --no-index's byte for byte.
func TestExportUsageThroughIndex(t *testing.T) {
	root, _ := indexStore(t)
	export := []string{"export", "--usage", "-o", "-", "--machine", "m", "--root", root}
	run := func(args ...string) (string, index.Stats) {
		t.Helper()
		var st index.Stats
		indexClosed = func(s index.Stats) { st.Hits += s.Hits; st.Misses += s.Misses; st.Grown += s.Grown }
		defer func() { indexClosed = nil }()
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out, st
	}
	want, _ := run(append([]string{"--no-index"}, export...)...)
	if strings.Count(want, "\n") < 5 {
		t.Fatalf("export --usage --no-index gave %q", want)
	}
	if _, st := run("stats", "--all", "--by", "project", "--root", root); st.Misses == 0 {
		t.Fatalf("stats filled nothing: %+v", st)
	}
	for _, what := range []string{"after stats", "again"} {
		got, st := run(export...)
		if got != want {
			t.Errorf("%s: export --usage differs from --no-index:\n got %q\nwant %q", what, got, want)
		}
		if st.Hits == 0 || st.Misses != 0 || st.Grown != 0 {
			t.Errorf("%s: export --usage read files again: %+v", what, st)
		}
	}
}
