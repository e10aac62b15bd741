package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestLexer(t *testing.T) {
	l := NewLexer([]byte(`{"a":"x\"y\\","b":[1,{"c":"}"}],"n":-0,"m":12,"f":1e3,"s":"7","z":null}`))
	got := map[string]string{}
	ok := l.Object(func(k []byte) {
		switch string(k) {
		case "a":
			got["a"] = l.Text()
		case "n", "m", "f", "s", "z":
			v, kind := l.Number()
			got[string(k)] = itoa(int(v)) + "/" + kind.String()
		}
	})
	if !ok || l.bad {
		t.Fatal("lexer failed on valid JSON")
	}
	want := map[string]string{"a": `x"y\`, "n": "0/ok", "m": "12/ok", "f": "0/not an integer", "s": "0/a string", "z": "0/null"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	for _, bad := range []string{`{"a":`, `{"a":"x}`, `{"a" 1}`, `{"a":[1,2}`} {
		l := NewLexer([]byte(bad))
		l.Object(func([]byte) { l.Skip() })
		if !l.bad {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestLineReaderLongLinesAndTornEnd(t *testing.T) {
	long := strings.Repeat("x", 700<<10) // longer than the buffer
	lr := NewLineReader(context.Background(), strings.NewReader("a\n"+long+"\n\nlast"), make([]byte, 64<<10), 0)
	var got []string
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		got = append(got, string(l))
	}
	if len(got) != 4 || got[0] != "a" || got[1] != long || got[2] != "" || got[3] != "last" || !lr.Torn() {
		t.Fatalf("lines %d, torn %v", len(got), lr.Torn())
	}
}

func TestNextMatchCountsSkippedLines(t *testing.T) {
	in := "a\nb\n" + strings.Repeat("x", 100) + "\nusage here\nc\nusage again\ntorn"
	lr := NewLineReader(context.Background(), strings.NewReader(in), make([]byte, 16), 0) // tiny buffer: refills mid-line
	var got []string
	var nums []int
	for {
		l, err := lr.NextMatch([]byte("usage"))
		if err != nil {
			break
		}
		got = append(got, string(l))
		nums = append(nums, lr.Num())
	}
	if len(got) != 2 || got[0] != "usage here" || nums[0] != 4 || got[1] != "usage again" || nums[1] != 6 {
		t.Fatalf("got %q at %v", got, nums)
	}
	if string(lr.Tail()) != "torn" || lr.Num() != 7 || !lr.Torn() {
		t.Fatalf("tail %q, num %d, torn %v", lr.Tail(), lr.Num(), lr.Torn())
	}
}

func TestParseMillis(t *testing.T) {
	for _, s := range []string{"2026-11-22T02:58:38.406Z", "2024-02-29T23:59:59.999Z", "2026-11-22T02:58:38Z", "2026-11-22T03:58:38.406+01:00"} {
		got, err := ParseMillis([]byte(s))
		want, err2 := ParseRFC3339(s)
		if err != nil || err2 != nil || got != want {
			t.Errorf("%s: %d %v, want %d %v", s, got, err, want, err2)
		}
	}
	for _, s := range []string{"2026-02-31T02:58:38.406Z", "2026-13-22T02:58:38.406Z", "not a time", ""} {
		if _, err := ParseMillis([]byte(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestUnescapeJSON(t *testing.T) {
	cases := map[string]string{
		`plain`:                    "plain",
		`a\ud83d\ude00b`:           "a\U0001F600b", // a surrogate pair is one character
		`\u00e9\n\t\"\\\/`:         "é\n\t\"\\/",
		`claude-opus-4-8\u005b1m]`: "claude-opus-4-8[1m]",
		`bad \x escape`:            `bad \x escape`, // not JSON: kept as it is
	}
	for in, want := range cases {
		if got := UnescapeJSON([]byte(in)); got != want {
			t.Errorf("UnescapeJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// Request keys are 64-bit hashes: ids that differ in a single byte or in
// their length, as sequential ids do, must not collide.
func TestHashKeyNoCollisions(t *testing.T) {
	seen := map[uint64]string{}
	add := func(id, req string, hasReq bool) {
		k := HashKey([]byte(id), []byte(req), hasReq)
		name := id + "|" + req
		if !hasReq {
			name = id + "|(none)"
		}
		if prev, ok := seen[k]; ok && prev != name {
			t.Fatalf("%q and %q hash alike", prev, name)
		}
		seen[k] = name
	}
	for i := range 200000 {
		id := "msg_01" + strconv.Itoa(i)
		add(id, "", false)
		add(id, "", true) // an empty requestId is not a missing one
		add(id, "req_011"+strconv.Itoa(i%977), true)
	}
	for n := range 40 {
		add(strings.Repeat("a", n), "", false) // lengths alone
	}
}

// Ledger.Totals is Totals.Add over the same requests.
func TestLedgerTotalsIsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	models := []string{"", "claude-opus-4-8", "(unknown)", "gpt-5", "claude-opus-4-8-fast"}
	fu := &FileUsage{}
	for range 500 {
		r := Request{Line: 1, Counted: true, CCUsage: true, Time: rng.Int64N(3) * 1_700_000_000_000}
		if rng.IntN(4) > 0 {
			r.Usage = session.Usage{Input: rng.Int64N(100), Output: rng.Int64N(3), CacheRead: rng.Int64N(2), Reasoning: rng.Int64N(2)}
		}
		r.Model = fu.models.ID(models[rng.IntN(len(models))])
		fu.Requests = append(fu.Requests, r)
	}
	var lg Ledger
	lg.Add(fu)
	var reqs []*Request
	var want Totals
	for i := range lg.Requests {
		reqs = append(reqs, &lg.Requests[i])
		want.Add(&lg.Requests[i], lg.Model(&lg.Requests[i]))
	}
	got := lg.Totals(reqs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Totals\n%+v\nwant\n%+v", got, want)
	}
	if empty := lg.Totals(nil); !reflect.DeepEqual(empty, Totals{}) {
		t.Errorf("no requests: %+v", empty)
	}
}

// refDedupe is the two-map dedupe that dedupe replaced, kept to hold the
// one-map version to the same results.
type refDedupe struct{ exact, byMsg map[uint64]int32 }

func (d *refDedupe) push(list []Request, r *Request) []Request {
	if r.Key == 0 {
		return append(list, *r)
	}
	at, ok := d.exact[r.Key]
	if !ok {
		if j, found := d.byMsg[r.MsgKey]; found && (r.Sidechain || list[j].Sidechain) {
			at, ok = j, true
		}
	}
	if ok {
		if better(r, &list[at]) {
			list[at] = *r
			d.exact[r.Key] = at
			d.byMsg[r.MsgKey] = at
		}
		return list
	}
	d.exact[r.Key] = int32(len(list))
	d.byMsg[r.MsgKey] = int32(len(list))
	return append(list, *r)
}

func TestDedupeIsTwoMapDedupe(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		// few messages and requestIds, so that keys repeat in every way
		msgs, reqs := 1+rng.IntN(8), 1+rng.IntN(4)
		var d dedupe
		ref := refDedupe{map[uint64]int32{}, map[uint64]int32{}}
		var got, want []Request
		for i := range 200 {
			r := Request{Line: int32(i), Usage: session.Usage{Input: rng.Int64N(5)}, Sidechain: rng.IntN(3) == 0, Speed: rng.IntN(4) == 0}
			if rng.IntN(10) > 0 {
				m := strconv.Itoa(rng.IntN(msgs))
				r.MsgKey = HashKey([]byte(m), nil, false)
				if rng.IntN(5) == 0 {
					r.Key = r.MsgKey // no requestId
				} else {
					r.Key = HashKey([]byte(m), []byte(strconv.Itoa(rng.IntN(reqs))), true)
				}
			}
			got = d.push(got, &r)
			want = ref.push(want, &r)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: lists differ\n%v\n%v", round, got, want)
		}
	}
}

// longLine yields n bytes of one line without holding them, then "\n" and
// the rest.
type longLine struct {
	n    int
	rest string
}

func (l *longLine) Read(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		for i := range p[:k] {
			p[i] = 'x'
		}
		if k > 8 {
			copy(p, `{"usage"`) // it may hold usage: still skipped
		}
		l.n -= k
		return k, nil
	}
	if l.rest == "" {
		return 0, io.EOF
	}
	k := copy(p, l.rest)
	l.rest = l.rest[k:]
	return k, nil
}

// A line longer than the reader's bound is skipped by streaming to its
// newline (issue 11: stats' reader grew to the longest line): memory does
// not grow with it, and the lines after it are read as usual.
func TestLineReaderSkipsTooLongWithoutHoldingIt(t *testing.T) {
	for _, match := range []bool{false, true} {
		src := &longLine{n: 16 << 20, rest: "\n{\"a\":1}\nlast"}
		lr := NewLineReader(context.Background(), src, make([]byte, 64<<10), 1<<20)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var got []string
		for {
			var l []byte
			var err error
			if match {
				l, err = lr.NextMatch([]byte(`"a"`))
			} else {
				l, err = lr.Next()
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(l))
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
			t.Errorf("match %v: %d MiB allocated to skip a 16 MiB line with a 1 MiB bound", match, alloc>>20)
		}
		want := []string{`{"a":1}`, "last"}
		if match {
			want = want[:1]
		}
		if strings.Join(got, "|") != strings.Join(want, "|") || lr.TooLong() != 1 || lr.TooLongLines()[0] != 1 {
			var lens []int
			for _, l := range got {
				lens = append(lens, len(l))
			}
			t.Errorf("match %v: lines of %v bytes, too long %d at %v", match, lens, lr.TooLong(), lr.TooLongLines())
		}
		if n := 3; lr.Num() != n {
			t.Errorf("match %v: %d lines, want %d", match, lr.Num(), n)
		}
	}
}

// A Reader reports a skipped line as corrupt and as a line that may have
// held usage, with its number.
func TestReaderReportsTooLongLine(t *testing.T) {
	rd := Reader{MaxLine: 1 << 20}
	sc := lineScanner{}
	fu, err := rd.Read(context.Background(), &longLine{n: 4 << 20, rest: "\n{}\n"}, "x.jsonl", sc, Carries)
	if err != nil {
		t.Fatal(err)
	}
	if fu.Corrupt != 1 || fu.RejectedCount != 1 || fu.Rejected[0].Line != 1 || fu.Lines != 2 {
		t.Errorf("corrupt %d, rejected %+v, lines %d", fu.Corrupt, fu.Rejected, fu.Lines)
	}
}

// lineScanner reads every line and records nothing.
type lineScanner struct{}

func (lineScanner) Classify(*session.Session, session.File) FileClass { return Carries }
func (lineScanner) ScanUsage(lr *LineReader, fu *FileUsage) error {
	for {
		if _, err := lr.Next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// A context that is done stops a read at its next refill.
func TestLineReaderStopsWhenContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lr := NewLineReader(ctx, &longLine{n: 1 << 20}, make([]byte, 4<<10), 0)
	if _, err := lr.Next(); err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// In a file, a line is measured by reading ahead before the buffer grows:
// one over the bound is skipped without gathering any of it, and one that
// fits gets one buffer of its size (issue 11: stats on a file with one
// 300 MB line peaked at 716 MB, the buffer grown to the 256 MiB bound and
// copied on the way). The lines read are those of the same bytes read as a
// stream.
func TestLineReaderMeasuresLongLinesInAFile(t *testing.T) {
	const bound = 24 << 20
	var content bytes.Buffer
	content.WriteString("{\"a\":1}\n")
	content.WriteString(strings.Repeat("x", 16<<20) + "\n") // fits
	content.WriteString("{\"b\":2}\n")
	content.WriteString(strings.Repeat("y", 40<<20) + "\n") // too long
	content.WriteString("{\"c\":3}\n")
	content.WriteString(strings.Repeat("z", bound) + "\n") // exactly the bound: fits
	content.WriteString(strings.Repeat("w", bound+1))      // one more, and no newline
	p := filepath.Join(t.TempDir(), "long.jsonl")
	if err := os.WriteFile(p, content.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(r io.Reader) (lens []int, lr *LineReader, alloc uint64) {
		lr = NewLineReader(context.Background(), r, make([]byte, 64<<10), bound)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for {
			l, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			lens = append(lens, len(l))
		}
		runtime.ReadMemStats(&after)
		return lens, lr, after.TotalAlloc - before.TotalAlloc
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, lr, alloc := read(f)
	want, slr, salloc := read(struct{ io.Reader }{bytes.NewReader(content.Bytes())}) // no ReadAt: gathered up to the bound
	t.Logf("file: %d MiB allocated; stream: %d MiB", alloc>>20, salloc>>20)
	if fmt.Sprint(got) != fmt.Sprint(want) || lr.TooLong() != 2 || fmt.Sprint(lr.TooLongLines()) != fmt.Sprint(slr.TooLongLines()) || lr.Num() != slr.Num() {
		t.Fatalf("file: lines %v, too long %v; stream: lines %v, too long %v", got, lr.TooLongLines(), want, slr.TooLongLines())
	}
	// the two lines that fit, once each, and a little
	if limit := uint64(16<<20 + bound + 2<<20); alloc > limit {
		t.Errorf("reading the file allocated %d MiB (> %d MiB)", alloc>>20, limit>>20)
	}
}

// ByModel is written as encoding/json writes the map it replaced, and
// read back.
func TestByModelJSONAsMap(t *testing.T) {
	var b ByModel
	m := map[string]session.Usage{}
	for i, name := range []string{"zeta", "a<b>&c", "gpt-5", "", "claude-opus-4-8", "Zeta", "é"} {
		u := session.Usage{Input: int64(i + 1), Output: int64(10 * i), CacheCreation1h: int64(i % 2)}
		b.add(name, u)
		b.add(name, u)
		m[name] = u.Add(u)
	}
	for _, escape := range []bool{false, true} {
		var got, want bytes.Buffer
		for w, v := range map[*bytes.Buffer]any{&got: struct {
			B ByModel `json:"b,omitempty"`
		}{b}, &want: struct {
			B map[string]session.Usage `json:"b,omitempty"`
		}{m}} {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(escape)
			enc.SetIndent("", "  ")
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
		}
		if got.String() != want.String() {
			t.Errorf("escape %v:\n got %s\nwant %s", escape, got.String(), want.String())
		}
	}
	var back ByModel
	if err := json.Unmarshal([]byte(`{"x":{"input_tokens":3},"a":{"output_tokens":2}}`), &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Model != "a" || back.Get("x").Input != 3 || back.Get("a").Output != 2 || back.Get("none") != (session.Usage{}) {
		t.Errorf("read back %+v", back)
	}
	empty, _ := json.Marshal(struct {
		B ByModel `json:"b,omitempty"`
	}{})
	if string(empty) != "{}" {
		t.Errorf("empty: %s", empty)
	}
}

// Add keys a request by its line once hashed: the same keys as hashing it
// again with the line's count in the file (HashKey with a second id), as
// the keys were made before; the k-th copy of a line gets the k-th key.
func TestAddLineKeys(t *testing.T) {
	var fu FileUsage
	lines := []string{"", "a", `{"x":1}`, "0123456789abcdef0123", `{"x":1}`, "a", `{"x":1}`}
	for _, l := range lines {
		fu.Add(Request{Counted: true}, []byte(l))
	}
	seen := map[string]uint32{}
	for i, l := range lines {
		var n [4]byte
		n[0] = byte(seen[l])
		seen[l]++
		if want := HashKey([]byte(l), n[:], true); fu.Requests[i].line != want {
			t.Errorf("line %d %q: key %x, want %x", i, l, fu.Requests[i].line, want)
		}
	}
	if h := HashKey([]byte(`{"x":1}`), nil, false); fu.lines[h] != 3 {
		t.Errorf("lines[%x] = %d, want 3", h, fu.lines[h])
	}
}
