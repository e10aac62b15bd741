package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/resident"
	"github.com/sessctl/sessctl/pkg/session"
	bolt "go.etcd.io/bbolt"
)

// reader is a Read that records how it was called and returns the file's
// bytes from the offset, with the offset of its last newline as the point
// to continue from (a summary that is the file itself).
type reader struct {
	path  string
	calls []int64
}

func (r *reader) read(state []byte, from int64) ([]byte, []byte, int64, error) {
	r.calls = append(r.calls, from)
	b, err := os.ReadFile(r.path)
	if err != nil {
		return nil, nil, 0, err
	}
	if int64(len(state)) != from {
		return nil, nil, 0, errors.New("state does not match the offset")
	}
	value := append(append([]byte{}, state...), b[from:]...)
	at := int64(strings.LastIndexByte(string(b), '\n') + 1)
	return value, value[:at], at, nil
}

func get(t *testing.T, ix *Index, r *reader) (string, int64) {
	t.Helper()
	r.calls = nil
	v, err := ix.Get(r.path, 'T', "tag", r.read)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(r.path)
	if string(v) != string(want) {
		t.Fatalf("value %q, the file holds %q", v, want)
	}
	switch len(r.calls) {
	case 0:
		return string(v), -1 // not read
	case 1:
		return string(v), r.calls[0]
	}
	t.Fatalf("read %d times", len(r.calls))
	return "", 0
}

func reopen(t *testing.T, ix *Index, dir string) *Index {
	t.Helper()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = Open(dir)
	if ix == nil {
		t.Fatal("index not opened")
	}
	return ix
}

func TestGetKnowsUnchangedGrownRenamedAndRewrittenFiles(t *testing.T) { spoolingOrNot(t, getKnows) }

// spoolingOrNot runs test as a run of a few files, and as one whose
// entries are all spooled.
func spoolingOrNot(t *testing.T, test func(t *testing.T)) {
	for _, spill := range []int{spillAt, 1} {
		t.Run(fmt.Sprint("spill at ", spill), func(t *testing.T) {
			defer func(n int) { spillAt = n }(spillAt)
			spillAt = spill
			test(t)
		})
	}
}

func getKnows(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	ix := Open(dir)
	if ix == nil {
		t.Fatal("no index")
	}
	p := filepath.Join(data, "a.jsonl")
	head := strings.Repeat("h", 5000) + "\n" // longer than the hashed head
	os.WriteFile(p, []byte(head+"one\ntw"), 0o600)
	r := &reader{path: p}
	if _, from := get(t, ix, r); from != 0 {
		t.Fatalf("cold: read from %d", from)
	}
	ix = reopen(t, ix, dir)
	if _, from := get(t, ix, r); from != -1 {
		t.Fatalf("unchanged: read from %d", from)
	}
	// grew: read from the end of the last complete line
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("o\nthree\n")
	f.Close()
	ix = reopen(t, ix, dir)
	if _, from := get(t, ix, r); from != int64(len(head)+4) {
		t.Fatalf("grown: read from %d, want %d", from, len(head)+4)
	}
	// renamed: still known
	q := filepath.Join(data, "b.jsonl")
	os.Rename(p, q)
	r.path = q
	ix = reopen(t, ix, dir)
	if _, from := get(t, ix, r); from != -1 {
		t.Fatalf("renamed: read from %d", from)
	}
	// rewritten in place, same size: read whole
	b, _ := os.ReadFile(q)
	os.WriteFile(q, []byte(strings.Replace(string(b), "one", "ONE", 1)), 0o600)
	os.Chtimes(q, time.Now(), time.Now().Add(time.Second))
	ix = reopen(t, ix, dir)
	if _, from := get(t, ix, r); from != 0 {
		t.Fatalf("rewritten: read from %d", from)
	}
	// grown, but a byte before the continuation point changed: whole
	b, _ = os.ReadFile(q)
	os.WriteFile(q, []byte(strings.Replace(string(b), "ONE", "one", 1)+"four\n"), 0o600)
	ix = reopen(t, ix, dir)
	if _, from := get(t, ix, r); from != 0 {
		t.Fatalf("rewritten and grown: read from %d", from)
	}
	// grown, the head changed: whole
	b, _ = os.ReadFile(q)
	os.WriteFile(q, []byte("H"+string(b[1:])+"five\n"), 0o600)
	ix = reopen(t, ix, dir)
	if _, from := get(t, ix, r); from != 0 {
		t.Fatalf("new head: read from %d", from)
	}
	// truncated: whole
	os.WriteFile(q, []byte("short\n"), 0o600)
	ix = reopen(t, ix, dir)
	if _, from := get(t, ix, r); from != 0 {
		t.Fatalf("truncated: read from %d", from)
	}
	// another tag: read
	ix = reopen(t, ix, dir)
	r.calls = nil
	ix.Get(q, 'T', "other", r.read)
	if len(r.calls) != 1 {
		t.Fatal("a value of another tag was used")
	}
	ix.Close()
}

func TestNilIndexReads(t *testing.T) {
	var ix *Index
	p := filepath.Join(t.TempDir(), "a")
	os.WriteFile(p, []byte("x\n"), 0o600)
	r := &reader{path: p}
	get(t, ix, r)
	get(t, ix, r)
	if len(r.calls) != 1 || ix.Close() != nil || Open("") != nil {
		t.Fatal("a nil index did not read")
	}
}

func TestCorruptOrForeignIndexIsRebuilt(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	p := filepath.Join(data, "a")
	os.WriteFile(p, []byte("x\n"), 0o600)
	r := &reader{path: p}
	db := filepath.Join(dir, FileName)
	for _, damage := range []func(){
		func() { os.WriteFile(db, []byte("garbage"), 0o600) },
		func() { os.WriteFile(db, nil, 0o600) },
		func() { // every page after the two meta pages overwritten
			b, _ := os.ReadFile(db)
			for i := 8192; i < len(b); i++ {
				b[i] = 0xff
			}
			os.WriteFile(db, b, 0o600)
		},
		func() { // another build
			d, _ := bolt.Open(db, 0o600, nil)
			d.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("other")) })
			d.Close()
		},
	} {
		ix := Open(dir)
		get(t, ix, r)
		ix.Close()
		damage()
		ix = Open(dir)
		if ix == nil {
			t.Fatal("a damaged index was not rebuilt")
		}
		get(t, ix, r) // read or not: the value is right
		ix.Close()
		ix = Open(dir)
		if _, from := get(t, ix, r); from != -1 {
			t.Fatalf("not known after the rebuild: read from %d", from)
		}
		ix.Close()
	}
}

func TestLockedIndexIsSkipped(t *testing.T) {
	dir := t.TempDir()
	Open(dir).Close()
	d, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	start := time.Now()
	if Open(dir) != nil {
		t.Fatal("opened an index another run writes")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("waited for the lock")
	}
}

func TestReadersShareAndWritesWait(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	p := filepath.Join(data, "a")
	os.WriteFile(p, []byte("x\n"), 0o600)
	a, b := Open(dir), Open(dir)
	if a == nil || b == nil {
		t.Fatal("two runs cannot read side by side")
	}
	ra, rb := &reader{path: p}, &reader{path: p}
	get(t, a, ra)
	get(t, b, rb)
	// a cannot write while b reads: its entries are dropped, not waited for
	if err := a.Close(); err == nil {
		t.Error("wrote while another run held the index")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	c := Open(dir)
	if _, from := get(t, c, &reader{path: p}); from != -1 {
		t.Fatal("b's entry was not written")
	}
	c.Close()
}

// Past spillAt a run's entries wait in its spool, not in memory, and are
// all written at its close, in key order; the spool leaves nothing in the
// index's directory.
func TestSpillKeepsMemorySmall(t *testing.T) {
	defer func(n int) { spillAt = n }(spillAt)
	spillAt = 1 // spill after every entry
	dir, data := t.TempDir(), t.TempDir()
	ix := Open(dir)
	var rs []*reader
	for i := 0; i < 20; i++ {
		p := filepath.Join(data, string(rune('a'+i)))
		os.WriteFile(p, []byte(strings.Repeat("y", i)+"\n"), 0o600)
		rs = append(rs, &reader{path: p})
		get(t, ix, rs[i])
	}
	get(t, ix, rs[3]) // spooled, not seen: read again, and spooled again
	if st := ix.Stats(); st.Written != 0 || len(ix.pending) != 0 || ix.spool == nil || len(ix.spool.recs) != 21 {
		t.Fatalf("%+v, %d pending, spool %+v", st, len(ix.pending), ix.spool)
	}
	if names := dirNames(t, dir); runtime.GOOS != "windows" && fmt.Sprint(names) != "[index.db]" {
		t.Errorf("the index's directory holds %v", names)
	}
	ix.Close()
	if st := ix.Stats(); st.Written != 20 {
		t.Fatalf("%+v: want 20 written, each once", st)
	}
	if names := dirNames(t, dir); fmt.Sprint(names) != "[index.db]" {
		t.Errorf("the index's directory holds %v after the close", names)
	}
	if n := keys(t, dir, bucketFiles); n != 20 {
		t.Errorf("%d entries, want 20", n)
	}
	ix = Open(dir)
	for _, r := range rs {
		if _, from := get(t, ix, r); from != -1 {
			t.Fatal("an entry written mid-run was lost")
		}
	}
	ix.Close()
}

// TestSummaryTitlesStoredCollapsed: titles are stored as OneLine shows
// them, and a blank one stays blank rather than becoming none.
func TestSummaryTitlesStoredCollapsed(t *testing.T) {
	in := session.FileSummary{Lines: 3, Records: 2, Corrupt: 1, CWD: "/a  b", Started: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 7200)),
		CustomTitle: " x\ty ", AITitle: "", SummaryTitle: "\u00a0", FirstPrompt: "p  q\n"}
	var out session.FileSummary
	if !decodeSummary(encodeSummary(&in), &out) {
		t.Fatal("not decoded")
	}
	want := in
	want.CustomTitle, want.SummaryTitle, want.FirstPrompt = "x y", " ", "p q"
	if !out.Started.Equal(want.Started) || out.Started.Format(time.RFC3339Nano) != want.Started.Format(time.RFC3339Nano) {
		t.Errorf("started %v, want %v", out.Started, want.Started)
	}
	out.Started, want.Started = time.Time{}, time.Time{}
	if out != want {
		t.Errorf("got %+v\nwant %+v", out, want)
	}
	if session.OneLine(out.SummaryTitle) != "" {
		t.Error("a blank title shows")
	}
}

// A new index counts as swept when it is made: its first run wrote every
// entry it holds, and looked each file up again at its close.
func TestNewIndexIsNotSwept(t *testing.T) {
	defer func(d time.Duration) { sweepEvery = d }(sweepEvery)
	sweepEvery = 24 * time.Hour
	dir, data := t.TempDir(), t.TempDir()
	p := filepath.Join(data, "gone.jsonl")
	if err := os.WriteFile(p, []byte("gone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := Open(dir)
	get(t, ix, &reader{path: p})
	// written now, so that the run's view holds the entry at its close
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	ix.Close()
	if st := ix.Stats(); st.Swept != 0 {
		t.Errorf("the first close swept %d entries", st.Swept)
	}
	if n := keys(t, dir, bucketFiles); n != 1 {
		t.Errorf("%d entries after the first close, want 1", n)
	}
}

// The entries of deleted files are dropped by the sweep, once it is due;
// a renamed file (a rotation) keeps its entry when a run has looked it up
// under its new name, even though its old name now holds another file.
func TestSweepDropsTheEntriesOfGoneFiles(t *testing.T) { spoolingOrNot(t, sweepRun) }

func sweepRun(t *testing.T) {
	defer func(d time.Duration) { sweepEvery = d }(sweepEvery)
	sweepEvery = 24 * time.Hour
	dir, data := t.TempDir(), t.TempDir()
	var rs []*reader
	for _, name := range []string{"gone.jsonl", "kept.jsonl", "rotated.jsonl"} {
		p := filepath.Join(data, name)
		os.WriteFile(p, []byte(name+"\n"), 0o600)
		rs = append(rs, &reader{path: p})
	}
	gone, kept, rotated := rs[0], rs[1], rs[2]
	ix := Open(dir)
	for _, r := range rs {
		get(t, ix, r)
	}
	ix = reopen(t, ix, dir) // a new index is not due for a sweep
	if n := keys(t, dir, bucketFiles); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}

	os.Remove(gone.path)
	newName := rotated.path + ".1"
	os.Rename(rotated.path, newName)
	os.WriteFile(rotated.path, []byte("a new file under the old name\n"), 0o600)
	rotated.path = newName
	if _, from := get(t, ix, rotated); from != -1 {
		t.Fatalf("rotation: read from %d", from)
	}
	// not due: nothing swept
	ix = reopen(t, ix, dir)
	if st := ix.Stats(); st.Swept != 0 {
		t.Fatalf("swept %d before it was due", st.Swept)
	}
	if n := keys(t, dir, bucketFiles); n != 3 {
		t.Fatalf("%d entries before the sweep was due, want 3", n)
	}

	sweepEvery = 0
	get(t, ix, kept)
	ix.Close()
	if st := ix.Stats(); st.Swept != 1 {
		t.Fatalf("swept %d entries, want 1 (the deleted file's)", st.Swept)
	}
	if n := keys(t, dir, bucketFiles); n != 2 {
		t.Fatalf("%d entries after the sweep, want 2", n)
	}
	ix = Open(dir)
	defer ix.Close()
	for _, r := range []*reader{kept, rotated} {
		if _, from := get(t, ix, r); from != -1 {
			t.Errorf("%s: read from %d after the sweep", filepath.Base(r.path), from)
		}
	}
}

// Shedding the read pages of the view after every look-up changes no
// value: the next look-up maps what it needs again.
func TestShedKeepsValues(t *testing.T) {
	old := shedEvery
	shedEvery = 1
	defer func() { shedEvery = old }()
	dir, data := t.TempDir(), t.TempDir()
	ix := Open(dir)
	if ix == nil {
		t.Fatal("no index")
	}
	var rs []*reader
	for i := range 300 {
		p := filepath.Join(data, fmt.Sprintf("f%d.jsonl", i))
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 100+i)), 0o600)
		rs = append(rs, &reader{path: p})
		if _, from := get(t, ix, rs[i]); from != 0 {
			t.Fatalf("%s: first read from %d", p, from)
		}
	}
	ix = reopen(t, ix, dir)
	defer ix.Close()
	for round := range 2 {
		for _, r := range rs {
			if _, from := get(t, ix, r); from != -1 {
				t.Fatalf("round %d, %s: read again from %d", round, r.path, from)
			}
		}
	}
	if n := ix.looked.Load(); n < 600 {
		t.Fatalf("%d look-ups in the view, want 600", n)
	}
}

// A run sheds the pages it read every shedBytes of them, counting a page
// for each look-up and a large entry's body apart: reading large entries
// (the requests of a file, for stats) it sheds more often than every
// shedEvery look-ups.
func TestShedByBytes(t *testing.T) {
	oldEvery, oldBytes := shedEvery, shedBytes
	shedEvery, shedBytes = 1<<40, 4*pageSize
	defer func() { shedEvery, shedBytes = oldEvery, oldBytes }()
	defer residentIs(func() int64 { return -1 })() // counted only
	dir, data := t.TempDir(), t.TempDir()
	ix := Open(dir)
	if ix == nil {
		t.Fatal("no index")
	}
	var small, large []*reader
	for i := range 40 {
		p := filepath.Join(data, fmt.Sprintf("s%d.jsonl", i))
		os.WriteFile(p, []byte(fmt.Sprintf("line %d\n", i)), 0o600)
		small = append(small, &reader{path: p})
		p = filepath.Join(data, fmt.Sprintf("l%d.jsonl", i))
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 2500)), 0o600)
		large = append(large, &reader{path: p})
		get(t, ix, small[i])
		get(t, ix, large[i])
	}
	ix = reopen(t, ix, dir)
	defer ix.Close()
	for _, r := range small {
		if _, from := get(t, ix, r); from != -1 {
			t.Fatalf("%s: read again from %d", r.path, from)
		}
	}
	// a page each: a shed every 4 look-ups
	if n := ix.sheds.Load(); n != 10 {
		t.Errorf("%d sheds after 40 small look-ups, want 10", n)
	}
	for _, r := range large {
		if _, from := get(t, ix, r); from != -1 {
			t.Fatalf("%s: read again from %d", r.path, from)
		}
	}
	// a value of 17 KB or more is more than four pages: a shed each
	if n := ix.sheds.Load(); n < 10+40 {
		t.Errorf("%d sheds after 40 large look-ups, want at least 50", n)
	}
}

// Look-ups from many goroutines share one index while entries are spilled
// to the spool in the middle of the run.
func TestConcurrentLookups(t *testing.T) {
	oldSpill, oldShed := spillAt, shedEvery
	spillAt, shedEvery = 2<<10, 7
	defer func() { spillAt, shedEvery = oldSpill, oldShed }()
	dir, data := t.TempDir(), t.TempDir()
	var paths []string
	for i := range 200 {
		p := filepath.Join(data, fmt.Sprintf("f%d.jsonl", i))
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), 20)), 0o600)
		paths = append(paths, p)
	}
	for run := range 2 {
		ix := Open(dir)
		if ix == nil {
			t.Fatal("no index")
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(paths))
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < len(paths); i += 8 {
					r := &reader{path: paths[i]}
					v, err := ix.Get(paths[i], 'T', "tag", r.read)
					want, _ := os.ReadFile(paths[i])
					if err != nil || string(v) != string(want) {
						errs <- fmt.Errorf("run %d, %s: %q, %v", run, paths[i], v, err)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		st := ix.Stats()
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		if run == 1 && st.Hits != len(paths) {
			t.Errorf("second run: %+v, want every file a hit", st)
		}
	}
}

// A hit copies only the value; anything else (another path: a rename,
// whose entry is written again with its state) decodes the entry whole.
func TestDecodeEntryFor(t *testing.T) {
	e := entry{size: 10, mtime: 20, headLen: 4, headHash: 5, resumeAt: 8, tailHash: 6, tag: "claude/0", path: "/a/b.jsonl",
		state: []byte("state"), value: []byte("value")}
	b := e.encode()
	whole, ok := decodeEntry(b)
	if !ok || string(whole.state) != "state" || string(whole.value) != "value" || whole.path != e.path || whole.tag != e.tag {
		t.Fatalf("decodeEntry: %+v %v", whole, ok)
	}
	hit, ok := decodeEntryFor(b, &hitOf{tag: "claude/0", size: 10, mtime: 20, path: "/a/b.jsonl"}, nil)
	if !ok || string(hit.value) != "value" || hit.state != nil || hit.path != e.path || hit.tag != e.tag || hit.size != 10 || hit.mtime != 20 {
		t.Fatalf("hit: %+v %v", hit, ok)
	}
	for _, want := range []hitOf{{"claude/0", 10, 20, "/a/c.jsonl"}, {"claude/1", 10, 20, "/a/b.jsonl"}, {"claude/0", 11, 20, "/a/b.jsonl"}, {"claude/0", 10, 21, "/a/b.jsonl"}} {
		got, ok := decodeEntryFor(b, &want, nil)
		if !ok || string(got.state) != "state" || string(got.value) != "value" || got.path != e.path || got.tag != e.tag {
			t.Errorf("%+v: %+v %v, want the entry whole", want, got, ok)
		}
	}
	if _, ok := decodeEntryFor(b[:len(b)-1], &hitOf{tag: "claude/0", size: 10, mtime: 20, path: "/a/b.jsonl"}, nil); ok {
		t.Error("a cut entry decoded")
	}
}

// keys counts the keys of a bucket of the index file.
func keys(t *testing.T, dir string, bucket []byte) int {
	t.Helper()
	n := 0
	readIndex(t, dir, func(tx *bolt.Tx) { n = tx.Bucket(bucket).Stats().KeyN })
	return n
}

// readIndex calls fn in a read transaction of the index file in dir.
func readIndex(t *testing.T, dir string, fn func(tx *bolt.Tx)) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		fn(tx)
		return nil
	})
}

// Large entries keep their bodies in the blobs bucket: read back whole
// (value and the state a grown file continues from), and their blob
// deleted with them when the file is read again or is gone.
func TestLargeEntriesKeptApart(t *testing.T) {
	defer func(d time.Duration) { sweepEvery = d }(sweepEvery)
	sweepEvery = 24 * time.Hour
	dir, data := t.TempDir(), t.TempDir()
	big := strings.Repeat("a long line of a session\n", 200) // 5,000 bytes: value and state
	var rs []*reader
	for _, f := range []struct{ name, text string }{{"big1.jsonl", big}, {"big2.jsonl", big}, {"small.jsonl", "short\n"}} {
		p := filepath.Join(data, f.name)
		os.WriteFile(p, []byte(f.text), 0o600)
		rs = append(rs, &reader{path: p})
	}
	big1, big2 := rs[0], rs[1]
	ix := Open(dir)
	// every file read from want (-1: not read), and what the file holds after
	readAll := func(run string, want int64) {
		t.Helper()
		for _, r := range rs {
			if _, from := get(t, ix, r); from != want {
				t.Fatalf("%s: %s read from %d, want %d", run, r.path, from, want)
			}
		}
	}
	stored := func(when string, entries, blobs int) {
		t.Helper()
		if n, b := keys(t, dir, bucketFiles), keys(t, dir, bucketBlobs); n != entries || b != blobs {
			t.Fatalf("%s: %d entries and %d blobs, want %d and %d", when, n, b, entries, blobs)
		}
	}
	readAll("first run", 0)
	ix = reopen(t, ix, dir)
	stored("after the first run", 3, 2)
	readAll("second run", -1)
	// big1 written again in place, big2 grown
	os.WriteFile(big1.path, []byte(strings.Repeat("another line\n", 200)), 0o600)
	f, _ := os.OpenFile(big2.path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("one more line\n")
	f.Close()
	if _, from := get(t, ix, big1); from != 0 {
		t.Fatalf("rewritten: read from %d", from)
	}
	if _, from := get(t, ix, big2); from != int64(len(big)) {
		t.Fatalf("grown: read from %d, want %d", from, len(big))
	}
	ix = reopen(t, ix, dir)
	stored("after reading two files again", 3, 2)
	readAll("third run", -1)
	os.Remove(big1.path)
	sweepEvery = 0
	ix = reopen(t, ix, dir)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	stored("after the sweep", 2, 1)
	// an entry whose blob is missing is a miss: the file is read again
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketBlobs)
		k, _ := b.Cursor().First()
		return b.Delete(k)
	})
	db.Close()
	ix = Open(dir)
	defer ix.Close()
	if _, from := get(t, ix, big2); from != 0 {
		t.Fatalf("blob missing: read from %d, want 0", from)
	}
}

// HeadOf keeps each name's string apart (one value per kind and file):
// du --by project asks both of the same transcript in one run.
func TestHeadOfKeepsEachName(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	p := filepath.Join(data, "s.jsonl")
	os.WriteFile(p, []byte("{}\n"), 0o600)
	s := &session.Session{Agent: session.Claude, Main: p}
	reads := map[string]int{}
	reader := func(v string) func(*session.Session) string {
		return func(*session.Session) string { reads[v]++; return v }
	}
	for run := range 2 {
		ix := Open(dir)
		if ix == nil {
			t.Fatal("no index")
		}
		for _, name := range []string{"first-id", "cwd", "other"} {
			if got := ix.HeadOf(s, name, reader(name+"-value")); got != name+"-value" {
				t.Errorf("run %d: %s is %q", run, name, got)
			}
		}
		ix.Close()
	}
	want := map[string]int{"first-id-value": 1, "cwd-value": 1, "other-value": 2}
	if fmt.Sprint(reads) != fmt.Sprint(want) {
		t.Errorf("reads %v, want %v (a kept name read once, another every time)", reads, want)
	}
}

// A write of many entries commits them a part at a time (writeChunk), so
// that the tree it reads and the pages it rewrites stay few: every entry,
// the sweep's deletions and the results of runs are in the index after
// it, and it took a transaction a part.
func TestWriteInParts(t *testing.T) {
	defer func(n int) { writeChunk = n }(writeChunk)
	writeChunk = 2
	defer func(d time.Duration) { sweepEvery = d }(sweepEvery)
	sweepEvery = 24 * time.Hour
	dir, data := t.TempDir(), t.TempDir()
	var rs []*reader
	for i := range 6 {
		p := filepath.Join(data, fmt.Sprintf("f%d.jsonl", i))
		os.WriteFile(p, []byte(strings.Repeat("z", 300*i)+"\n"), 0o600) // some kept apart (blobMin)
		rs = append(rs, &reader{path: p})
	}
	ix := Open(dir)
	get(t, ix, rs[0])
	ix = reopen(t, ix, dir)
	before := lastTx(t, dir)

	os.Remove(rs[0].path) // swept at the next close
	sweepEvery = 0
	for _, r := range rs[1:] {
		get(t, ix, r)
	}
	ix.StoreRun([]byte("run"), []byte("result"))
	ix.Close()
	if st := ix.Stats(); st.Written != 5 || st.Swept != 1 {
		t.Fatalf("written %d, swept %d; want 5 and 1", st.Written, st.Swept)
	}
	// 5 entries, 2 a part: 3 transactions
	if n := lastTx(t, dir) - before; n != 3 {
		t.Errorf("%d transactions, want 3", n)
	}
	if n := keys(t, dir, bucketFiles); n != 5 {
		t.Errorf("%d entries, want 5", n)
	}
	sweepEvery = 24 * time.Hour
	ix = Open(dir)
	if v := ix.LoadRun([]byte("run")); string(v) != "result" {
		t.Errorf("run %q, want %q", v, "result")
	}
	for _, r := range rs[1:] {
		if _, from := get(t, ix, r); from != -1 {
			t.Errorf("%s: read again from %d", filepath.Base(r.path), from)
		}
	}
	ix.Close() // nothing to write: no transaction
	if n := lastTx(t, dir) - before; n != 3 {
		t.Errorf("%d transactions after a run that wrote nothing, want 3", n)
	}

	// as many entries as two parts hold: two transactions, not a third
	// empty one; then a result alone: one
	ix = Open(dir)
	for _, r := range rs[2:] {
		os.WriteFile(r.path, []byte("rewritten\n"), 0o600)
		get(t, ix, r)
	}
	before = lastTx(t, dir)
	ix.Close()
	if n := lastTx(t, dir) - before; n != 2 {
		t.Errorf("%d transactions for 4 entries, want 2", n)
	}
	ix = Open(dir)
	ix.StoreRun([]byte("run2"), []byte("result2"))
	before = lastTx(t, dir)
	ix.Close()
	if n := lastTx(t, dir) - before; n != 1 {
		t.Errorf("%d transactions for a result alone, want 1", n)
	}
	ix = Open(dir)
	defer ix.Close()
	if v := ix.LoadRun([]byte("run2")); string(v) != "result2" {
		t.Errorf("run %q, want %q", v, "result2")
	}
}

// lastTx is the id of the index's last committed transaction.
func lastTx(t *testing.T, dir string) int {
	t.Helper()
	id := 0
	readIndex(t, dir, func(tx *bolt.Tx) { id = tx.ID() })
	return id
}

// Flush writes the pending entries before the close, and gives back the
// view's pages when none are pending; neither changes a value. A nil index
// flushes nothing.
func TestFlushNow(t *testing.T) {
	if err := (*Index)(nil).Flush(); err != nil {
		t.Fatal(err)
	}
	dir, data := t.TempDir(), t.TempDir()
	a, b := filepath.Join(data, "a.jsonl"), filepath.Join(data, "b.jsonl")
	os.WriteFile(a, []byte(strings.Repeat("x", 5000)+"\n"), 0o600)
	os.WriteFile(b, []byte("b\n"), 0o600)
	ra, rb := &reader{path: a}, &reader{path: b}
	ix := Open(dir)
	get(t, ix, ra)
	ix = reopen(t, ix, dir)
	defer ix.Close()
	get(t, ix, rb) // pending
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(ix.pending) != 0 || ix.Stats().Written != 1 {
		t.Fatalf("%d pending, %d written after the flush", len(ix.pending), ix.Stats().Written)
	}
	if n := keys(t, dir, bucketFiles); n != 2 {
		t.Fatalf("%d entries in the file after the flush, want 2", n)
	}
	get(t, ix, ra) // maps a page or more of the view
	if runtime.GOOS == "linux" && mappedRSS(t, filepath.Join(dir, FileName)) == 0 {
		t.Fatal("no page of the index resident after a look-up")
	}
	before := ix.sheds.Load()
	ix.Flush() // nothing pending: a shed
	if ix.sheds.Load() != before+1 {
		t.Fatal("not shed")
	}
	if runtime.GOOS == "linux" {
		if kb := mappedRSS(t, filepath.Join(dir, FileName)); kb != 0 {
			t.Fatalf("%d kB of the index resident after the shed", kb)
		}
	}
	for _, r := range []*reader{ra, rb} {
		if _, from := get(t, ix, r); from != -1 {
			t.Fatalf("%s: read again from %d after the flush", filepath.Base(r.path), from)
		}
	}
}

// A look-up that finds nothing counts missTouched towards shedBytes, not a
// page: the look-ups of a first run miss, each in a leaf of its own.
func TestShedOnMisses(t *testing.T) {
	oldEvery, oldBytes := shedEvery, shedBytes
	shedEvery, shedBytes = 1<<40, missTouched
	defer func() { shedEvery, shedBytes = oldEvery, oldBytes }()
	dir := t.TempDir()
	rs := lineFiles(t.TempDir(), "m", 10, 1)
	ix := Open(dir)
	get(t, ix, rs[0])
	ix = reopen(t, ix, dir)
	defer ix.Close()
	for _, r := range rs[1:] {
		if _, from := get(t, ix, r); from != 0 {
			t.Fatalf("%s: found in the index", r.path)
		}
	}
	if n := ix.sheds.Load(); n != 9 {
		t.Errorf("%d sheds after 9 misses, want 9", n)
	}
}

// lineFiles writes n files in dir, prefix0.jsonl and on, each its line
// "line i" times times, and returns their readers.
func lineFiles(dir, prefix string, n, times int) []*reader {
	var rs []*reader
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("%s%d.jsonl", prefix, i))
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("line %d\n", i), times)), 0o600)
		rs = append(rs, &reader{path: p})
	}
	return rs
}

// residentIs makes fn the index's fileResident, and returns the restore.
func residentIs(fn func() int64) func() {
	old := fileResident
	fileResident = fn
	return func() { fileResident = old }
}

// A run looks at how much of the files it maps is resident every
// probeBytes of pages counted, and sheds when that is residentBytes more
// than after the last shed; where it cannot tell, it does not.
func TestShedByResident(t *testing.T) {
	oldEvery, oldBytes, oldRes, oldProbe := shedEvery, shedBytes, residentBytes, probeBytes
	shedEvery, shedBytes, residentBytes, probeBytes = 1<<40, 1<<40, 100, 2*pageSize
	defer func() { shedEvery, shedBytes, residentBytes, probeBytes = oldEvery, oldBytes, oldRes, oldProbe }()
	var res, looks int64
	defer residentIs(func() int64 { looks++; return res })()
	dir := t.TempDir()
	rs := lineFiles(t.TempDir(), "r", 12, 1)
	ix := Open(dir)
	for _, r := range rs {
		get(t, ix, r)
	}
	ix = reopen(t, ix, dir)
	defer ix.Close()
	step := func(r *reader, sheds int64) {
		t.Helper()
		if _, from := get(t, ix, r); from != -1 {
			t.Fatalf("%s: read again from %d", r.path, from)
		}
		if n := ix.sheds.Load(); n != sheds {
			t.Fatalf("%d sheds after %s, want %d", n, filepath.Base(r.path), sheds)
		}
	}
	looks = 0
	for _, r := range rs[:4] { // a look every two look-ups, and nothing more resident
		step(r, 0)
	}
	if looks != 2 {
		t.Fatalf("%d looks at what is resident after 4 look-ups, want 2", looks)
	}
	res = 99 // not enough
	step(rs[4], 0)
	step(rs[5], 0)
	res = 100
	step(rs[6], 0) // not looked at
	step(rs[7], 1)
	step(rs[8], 1)
	step(rs[9], 1) // the same as after the shed
	res = 40       // pages gone of their own accord: counted from here
	step(rs[10], 1)
	step(rs[11], 1)
	res = 139
	step(rs[0], 1)
	step(rs[1], 1)
	res = 140
	step(rs[2], 1)
	step(rs[3], 2)
	res = -1 // cannot tell
	step(rs[4], 2)
	step(rs[5], 2)
	// a run that holds less sheds at half as much more
	res = 0
	step(rs[6], 2)
	step(rs[7], 2)
	ix.HoldLess()
	res = 49
	step(rs[8], 2)
	step(rs[9], 2)
	res = 50
	step(rs[10], 2)
	step(rs[11], 3)
}

// On Linux, the pages of the index a warm run holds between two sheds
// stay near residentBytes, although each hit maps more than the page it
// counts (a page read maps its neighbours too); counted alone, they do
// not. The look-ups go in no order, as a run's do.
func TestShedHoldsResidentPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("shed and fileResident work on Linux only")
	}
	dir := t.TempDir()
	rs := lineFiles(t.TempDir(), "h", 4000, 12)
	ix := Open(dir)
	for _, r := range rs {
		get(t, ix, r)
	}
	ix.Close()
	oldEvery, oldBytes, oldRes, oldProbe := shedEvery, shedBytes, residentBytes, probeBytes
	shedEvery, shedBytes, residentBytes, probeBytes = 1<<40, 1<<40, 256<<10, 8*pageSize
	defer func() { shedEvery, shedBytes, residentBytes, probeBytes = oldEvery, oldBytes, oldRes, oldProbe }()
	most := func() (kb int) {
		ix := Open(dir)
		defer ix.Close()
		for i, k := range rand.New(rand.NewPCG(1, 2)).Perm(len(rs)) {
			if _, from := get(t, ix, rs[k]); from != -1 {
				t.Fatalf("%s: read again from %d", rs[k].path, from)
			}
			if i%16 == 0 {
				kb = max(kb, mappedRSS(t, filepath.Join(dir, FileName)))
			}
		}
		return kb
	}
	counted := func() int64 { return -1 }
	restore := residentIs(counted)
	without := most()
	restore()
	with := most()
	// a probe every 8 pages counted: up to 8 look-ups past the bound,
	// each mapping up to 64 KiB of leaves and bodies
	if bound := int(residentBytes+8*(64<<10)) >> 10; with > bound {
		t.Errorf("up to %d kB of the index resident, want at most %d", with, bound)
	}
	if without <= 2*with {
		t.Errorf("counted only, up to %d kB resident; looking, %d: looking held no fewer pages, or the file is too small to tell", without, with)
	}
	t.Logf("up to %d kB resident, %d kB counted only", with, without)
}

// mappedRSS is how many kB of the file at path this process has resident
// through its mappings (/proc/self/smaps).
func mappedRSS(t *testing.T, path string) int {
	t.Helper()
	kb := resident.FileKB(path)
	if kb < 0 {
		t.Fatal("cannot read /proc/self/smaps")
	}
	return kb
}

// dirNames lists dir's names, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}
