package diff

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

func write(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func compare(t *testing.T, agent session.Agent, a, b string) (*Result, *Report, []RecordChange) {
	t.Helper()
	dir := t.TempDir()
	res, err := Compare(write(t, dir, "a.jsonl", a), agent, write(t, dir, "b.jsonl", b), agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.LineNumbers(); err != nil {
		t.Fatal(err)
	}
	var rep Report
	var recs []RecordChange
	if err := res.Walk(&rep, Options{}, func(rc RecordChange) error { recs = append(recs, rc); return nil }); err != nil {
		t.Fatal(err)
	}
	return res, &rep, recs
}

func ops(recs []RecordChange) string {
	var b []string
	for _, r := range recs {
		b = append(b, fmt.Sprintf("%s %d/%d", r.Op, r.ALine, r.BLine))
	}
	return strings.Join(b, ", ")
}

const (
	k1 = `{"role": "_system_prompt", "content": "p"}` + "\n"
	k2 = `{"role": "_checkpoint", "id": 0}` + "\n"
	k3 = `{"role":"user","content":"hello world"}` + "\n"
	k4 = `{"role":"assistant","content":"hi there"}` + "\n"
)

func TestAppendAndCut(t *testing.T) {
	_, rep, recs := compare(t, session.Kimi, k1+k2+k3, k1+k2+k3+k4)
	if got := ops(recs); got != "added 0/4" || rep.Unchanged != 3 {
		t.Errorf("append: %s (unchanged %d)", got, rep.Unchanged)
	}
	_, rep, recs = compare(t, session.Kimi, k1+k2+k3+k4, k1+k2)
	if got := ops(recs); got != "removed 3/0, removed 4/0" || rep.TokensRem == 0 {
		t.Errorf("cut: %s, tokens %d", got, rep.TokensRem)
	}
}

// An edited line in a format without uuids is a changed record, and the
// text diff shows exactly the edit.
func TestEditInPlace(t *testing.T) {
	_, rep, recs := compare(t, session.Kimi, k1+k3+k4, k1+`{"role":"user","content":"hello brave world"}`+"\n"+k4)
	if got := ops(recs); got != "changed 2/2" || rep.Changed != 1 {
		t.Fatalf("got %s", got)
	}
	var ins []string
	for _, s := range recs[0].TextDiff {
		if s.Op == "insert" {
			ins = append(ins, s.Text)
		}
		if s.Op == "delete" {
			t.Errorf("unexpected deletion %q", s.Text)
		}
	}
	if strings.Join(ins, "") != "brave " {
		t.Errorf("inserted %q", ins)
	}
}

// Claude records are aligned by uuid: an edit of a message is one changed
// record even when other records move around it.
func TestUUIDIdentity(t *testing.T) {
	u := func(id, text string) string {
		return `{"type":"user","uuid":"` + id + `","message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	q := `{"type":"queue-operation","operation":"enqueue"}` + "\n"
	a := u("11111111-1111-4111-8111-111111111111", "one") + q + u("22222222-2222-4222-8222-222222222222", "two")
	b := u("11111111-1111-4111-8111-111111111111", "one") + u("22222222-2222-4222-8222-222222222222", "TWO") + u("33333333-3333-4333-8333-333333333333", "three")
	_, _, recs := compare(t, session.Claude, a, b)
	if got := ops(recs); got != "removed 2/0, changed 3/2, added 0/3" {
		t.Errorf("got %s", got)
	}
	if recs[1].UUID != "22222222-2222-4222-8222-222222222222" {
		t.Errorf("uuid %q", recs[1].UUID)
	}
}

// Repeated identical lines are matched one for one.
func TestDuplicateLines(t *testing.T) {
	_, rep, recs := compare(t, session.Kimi, k2+k2+k3, k2+k3)
	if got := ops(recs); got != "removed 2/0" || rep.Unchanged != 2 {
		t.Errorf("got %s, unchanged %d", got, rep.Unchanged)
	}
	// a revert followed by new turns: the old tail removed, the new one added
	_, _, recs = compare(t, session.Kimi, k1+k2+k3+k4, k1+k2+`{"role":"user","content":"other"}`+"\n"+`{"role": "_usage", "token_count": 5}`+"\n")
	if got := ops(recs); got != "changed 3/3, removed 4/0, added 0/4" {
		t.Errorf("revert+new: %s", got)
	}
}

// genSession writes a Claude-like file of about size bytes; in the variant
// every 1000th record is edited and the last 5% are missing.
func genSession(tb testing.TB, path string, size int64, variant bool) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 30)
	var n int64
	limit := size
	if variant {
		limit = size * 95 / 100
	}
	for i := 0; n < limit; i++ {
		text := pad
		if variant && i%1000 == 7 {
			text = "edited " + pad
		}
		k, _ := fmt.Fprintf(w, `{"parentUuid":"%08x-0000-4000-8000-000000000000","type":"user","message":{"role":"user","content":"%d %s"},"uuid":"%08x-0000-4000-8000-000000000000","sessionId":"s"}`+"\n", i-1, i, text, i)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// TestDiffLarge compares two 100 MB files and reports time and peak heap.
// It runs only with SESSCTL_DIFF_BIG=1 (it writes 200 MB to a temp dir).
func TestDiffLarge(t *testing.T) {
	if os.Getenv("SESSCTL_DIFF_BIG") != "1" {
		t.Skip("set SESSCTL_DIFF_BIG=1 to compare two 100 MB files")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	genSession(t, a, 100<<20, false)
	genSession(t, b, 100<<20, true)
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res, err := Compare(a, session.Claude, b, session.Claude)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.LineNumbers(); err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := res.Walk(&rep, Options{Stat: true}, nil); err != nil {
		t.Fatal(err)
	}
	close(stop)
	t.Logf("two 100 MiB files (%d and %d records): %v, peak heap %.1f MiB; unchanged %d removed %d added %d changed %d",
		rep.A.Records, rep.B.Records, time.Since(start), float64(peak.Load())/(1<<20), rep.Unchanged, rep.Removed, rep.Added, rep.Changed)
	if rep.Changed == 0 || rep.Removed == 0 || rep.Added != 0 {
		t.Errorf("unexpected counts %+v", rep)
	}
	if peak.Load() > 64<<20 {
		t.Errorf("peak heap %d bytes: more than 64 MiB", peak.Load())
	}
}
