package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/sessctl/sessctl/pkg/usage"
	"github.com/sessctl/sessctl/pkg/usageexport"
)

// usageSums is what the rows of an export add up to, in the terms of
// stats --json's "recorded" totals.
type usageSums struct {
	Input, Output, CacheRead, CacheCreation, Reasoning, CacheCreation1h int64
	Requests                                                            int
	CostUSD                                                             float64
	Unpriced                                                            int64 // tokens of rows without a cost
}

func (s *usageSums) add(r *usageexport.Row) {
	s.Input += r.InputTokens
	s.Output += r.OutputTokens
	s.CacheRead += r.CacheReadTokens
	s.CacheCreation += r.CacheCreationTokens
	s.Reasoning += r.ReasoningTokens
	s.CacheCreation1h += r.CacheCreation1hTokens
	s.Requests++
	if r.CostUSD != nil {
		s.CostUSD += *r.CostUSD
	} else {
		s.Unpriced += r.InputTokens + r.OutputTokens + r.CacheReadTokens + r.CacheCreationTokens
	}
}

// statsSums runs stats --all --json over roots and returns its totals.
func statsSums(t *testing.T, roots []string) usageSums {
	t.Helper()
	args := []string{"stats", "--all", "--json", "--no-progress"}
	for _, r := range roots {
		args = append(args, "--root", r)
	}
	out, errOut, code := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("stats: code %d: %s", code, errOut)
	}
	var d struct {
		Recorded struct {
			Input           int64            `json:"input_tokens"`
			Output          int64            `json:"output_tokens"`
			CacheRead       int64            `json:"cache_read_tokens"`
			CacheCreation   int64            `json:"cache_creation_tokens"`
			Reasoning       int64            `json:"reasoning_tokens"`
			CacheCreation1h int64            `json:"cache_creation_1h_tokens"`
			Requests        int              `json:"requests"`
			CostUSD         float64          `json:"cost_usd"`
			Unpriced        map[string]int64 `json:"unpriced"`
		} `json:"recorded"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("stats --json: %v", err)
	}
	r := d.Recorded
	s := usageSums{r.Input, r.Output, r.CacheRead, r.CacheCreation, r.Reasoning, r.CacheCreation1h, r.Requests, r.CostUSD, 0}
	for _, n := range r.Unpriced {
		s.Unpriced += n
	}
	return s
}

// exportNDJSON runs export --usage --format ndjson and decodes its rows.
func exportNDJSON(t *testing.T, roots []string, extra ...string) []usageexport.Row {
	t.Helper()
	args := []string{"export", "--usage", "--format", "ndjson"}
	for _, r := range roots {
		args = append(args, "--root", r)
	}
	out, errOut, code := runCLI(t, append(args, extra...)...)
	if code != 0 {
		t.Fatalf("export --usage: code %d: %s", code, errOut)
	}
	var rows []usageexport.Row
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r usageexport.Row
		var ts struct {
			Timestamp *string `json:"timestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("row %q: %v", sc.Text(), err)
		}
		if err := json.Unmarshal(sc.Bytes(), &ts); err != nil {
			t.Fatal(err)
		}
		if ts.Timestamp != nil {
			tm, err := time.Parse(usageexport.TimeLayout, *ts.Timestamp)
			if err != nil {
				t.Fatalf("timestamp of %s: %v", sc.Text(), err)
			}
			ms := tm.UnixMilli()
			r.Timestamp = &ms
		}
		if r.SchemaVersion != usageexport.SchemaVersion || len(r.Key) != 32 || r.Agent == "" || r.Session == "" || r.Machine == "" {
			t.Fatalf("row misses a column: %s", sc.Text())
		}
		if r.CacheCreation5mTokens+r.CacheCreation1hTokens != r.CacheCreationTokens {
			t.Fatalf("5m + 1h != cache creation: %s", sc.Text())
		}
		rows = append(rows, r)
	}
	return rows
}

func sumRows(rows []usageexport.Row) usageSums {
	var s usageSums
	for i := range rows {
		s.add(&rows[i])
	}
	return s
}

// sameSums compares everything exactly but the cost, which is a sum of
// floating-point numbers in another order: equal to the micro-dollar.
func sameSums(t *testing.T, what string, got, want usageSums) {
	t.Helper()
	gc, wc := got.CostUSD, want.CostUSD
	got.CostUSD, want.CostUSD = 0, 0
	if got != want {
		t.Errorf("%s: sums %+v, stats --all %+v", what, got, want)
	}
	if math.Abs(gc-wc) > 1e-6 {
		t.Errorf("%s: cost %.9f, stats --all %.9f", what, gc, wc)
	}
}

func keySet(t *testing.T, rows []usageexport.Row) map[string]usageexport.Row {
	t.Helper()
	m := make(map[string]usageexport.Row, len(rows))
	for _, r := range rows {
		if o, dup := m[r.Key]; dup {
			t.Fatalf("key %s twice: %+v and %+v", r.Key, o, r)
		}
		m[r.Key] = r
	}
	return m
}

func usageStores(t *testing.T) map[string][]string {
	sets := map[string][]string{
		"testdata": {"../../testdata/sessions", "../../testdata/claude-2.1.330"},
	}
	samples := "../../../shared/samples"
	if _, err := os.Stat(samples); err == nil {
		sets["samples"] = []string{samples + "/real-clients", samples + "/claude", samples + "/codex", samples + "/kimi"}
	}
	return sets
}

// TestExportUsageSumsEqualStats: the rows of export --usage add up to
// what stats --all counts over the same store, field by field, and each
// counted request is one row with its own key.
func TestExportUsageSumsEqualStats(t *testing.T) {
	for name, roots := range usageStores(t) {
		t.Run(name, func(t *testing.T) {
			want := statsSums(t, roots)
			if want.Requests == 0 {
				t.Fatal("the store counts no request: the test would prove nothing")
			}
			rows := exportNDJSON(t, roots)
			sameSums(t, "ndjson", sumRows(rows), want)
			keySet(t, rows)
			agents := map[string]bool{}
			for _, r := range rows {
				agents[r.Agent] = true
			}
			if name == "testdata" && len(agents) != 4 {
				t.Errorf("agents %v: the store has sessions of all four", agents)
			}
		})
	}
}

// TestExportUsageKeysStable: a second export of the same data, from a copy
// of the store at another path, on another machine, with the roots in the
// other order, has exactly the same keys and the same rows but the machine.
func TestExportUsageKeysStable(t *testing.T) {
	roots := usageStores(t)["testdata"]
	first := keySet(t, exportNDJSON(t, roots, "--machine", "a"))
	var moved []string
	for i := len(roots) - 1; i >= 0; i-- {
		dst := filepath.Join(t.TempDir(), "elsewhere", filepath.Base(roots[i]))
		copyTree(t, roots[i], dst)
		moved = append(moved, dst)
	}
	second := keySet(t, exportNDJSON(t, moved, "--machine", "b"))
	if len(first) != len(second) {
		t.Fatalf("%d rows, then %d", len(first), len(second))
	}
	for k, r := range first {
		o, ok := second[k]
		if !ok {
			t.Fatalf("key %s (%+v) is not in the second export", k, r)
		}
		if o.Machine != "b" || r.Machine != "a" {
			t.Fatalf("machine %q, %q", r.Machine, o.Machine)
		}
		o.Machine, r.Machine = "", ""
		o.Project, r.Project = nil, nil // a project named by the store's path moves with it
		if !sameRow(r, o) {
			t.Fatalf("key %s: %+v, then %+v", k, r, o)
		}
	}
}

func sameRow(a, b usageexport.Row) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestExportUsageParquet: the Parquet file holds the same rows as the
// NDJSON, in row groups, read back by the library's reader.
func TestExportUsageParquet(t *testing.T) {
	roots := usageStores(t)["testdata"]
	want := keySet(t, exportNDJSON(t, roots, "--machine", "m"))
	out := filepath.Join(t.TempDir(), "usage.parquet")
	args := []string{"export", "--usage", "--machine", "m", "-o", out}
	for _, r := range roots {
		args = append(args, "--root", r)
	}
	if _, errOut, code := runCLI(t, args...); code != 0 {
		t.Fatalf("export --usage -o %s: code %d: %s", out, code, errOut)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := parquet.NewGenericReader[usageexport.Row](f)
	defer rd.Close()
	if v, ok := rd.File().Lookup("sessctl.usage.schema_version"); !ok || v != "1" {
		t.Errorf("schema version metadata %q, %v", v, ok)
	}
	got := make([]usageexport.Row, rd.NumRows())
	n, err := rd.Read(got)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	got = got[:n]
	if len(got) != len(want) {
		t.Fatalf("%d rows in the Parquet file, %d in the NDJSON", len(got), len(want))
	}
	for _, r := range got {
		w, ok := want[r.Key]
		if !ok || !sameRow(r, w) {
			t.Fatalf("parquet row %+v, ndjson %+v", r, w)
		}
		if (w.Timestamp == nil) != (r.Timestamp == nil) || w.Timestamp != nil && *r.Timestamp != *w.Timestamp {
			t.Fatalf("key %s: timestamp %v, ndjson %v", r.Key, r.Timestamp, w.Timestamp)
		}
	}
}

// TestExportUsageOutputPaths: -o writes a regular file atomically, writes a
// device (/dev/null) as it is, and refuses a directory or a symbolic link
// before it reads anything, saying why.
func TestExportUsageOutputPaths(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "sessions")
	dir := t.TempDir()
	file := filepath.Join(dir, "u.ndjson")
	if _, errOut, code := runCLI(t, "export", "--usage", "-o", file, "--root", root); code != 0 {
		t.Fatalf("-o FILE: exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) < 3 {
		t.Fatalf("-o FILE wrote %q (%v)", b, err)
	}
	if _, err := os.Stat("/dev/null"); err == nil {
		if _, errOut, code := runCLI(t, "export", "--usage", "-o", "/dev/null", "--root", root); code != 0 {
			t.Errorf("-o /dev/null: exit %d: %s", code, errOut)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{dir: "is a directory", link: "is a symbolic link"} {
		// a root that does not exist: the output is refused before the scan
		_, errOut, code := runCLI(t, "export", "--usage", "-o", path, "--root", filepath.Join(dir, "none"))
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("-o %s: exit %d: %s", path, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// stats --by day and --by model with --project count the requests of the
// sessions the project keeps, and no others: the rows sum to the recorded
// total of the sessions listed. (They did not before the thirteenth
// session, when the project filter rewrote the list the requests named
// their sessions by.)
func TestStatsByRequestsProjectRows(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "sessions")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, project := range []string{"alice/src", "web", "api", "app"} {
		for _, by := range []string{"day", "model"} {
			out, errOut, code := runCLI(t, "stats", "--all", "--by", by, "--project", project, "--json", "--no-progress", "--root", root)
			if code != 0 {
				t.Fatalf("--by %s --project %s: exit %d: %s", by, project, code, errOut)
			}
			var got struct {
				Recorded usage.Totals `json:"recorded"`
				Groups   []struct {
					Recorded usage.Totals `json:"recorded"`
				} `json:"groups"`
				Sessions []struct {
					Recorded usage.Totals `json:"recorded"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			var rows, sessions int64
			for _, g := range got.Groups {
				rows += g.Recorded.Total()
			}
			for _, s := range got.Sessions {
				sessions += s.Recorded.Total()
			}
			if rows != sessions || sessions != got.Recorded.Total() || len(got.Sessions) == 0 {
				t.Errorf("--by %s --project %s: rows sum to %d, the %d sessions to %d, recorded %d",
					by, project, rows, len(got.Sessions), sessions, got.Recorded.Total())
			}
		}
	}
}
