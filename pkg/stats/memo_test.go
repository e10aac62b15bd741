package stats

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// mapMemo is a Memo in memory that counts what it is asked.
type mapMemo struct {
	m            map[string][]byte
	loads, hits  int
	stores       int
	corruptAfter bool // every stored value is cut short (a damaged entry)
}

func (mm *mapMemo) LoadRun(key []byte) []byte {
	mm.loads++
	v, ok := mm.m[string(key)]
	if ok {
		mm.hits++
	}
	return v
}

func (mm *mapMemo) StoreRun(key, value []byte) {
	mm.stores++
	if mm.corruptAfter {
		value = value[:len(value)/2]
	}
	mm.m[string(key)] = value
}

// memoView is all a caller of Consumption sees of a session's result,
// unexported fields included (the requests aside).
func memoView(t *testing.T, sus []*SessionUsage) []string {
	t.Helper()
	var out []string
	for _, su := range sus {
		b, err := json.Marshal(su)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %q %d %v", b, su.Context, su.ContextSource, su.Window, su.ccusageView))
	}
	return out
}

// A run answered from the memo gives what a run that reads everything
// gives: every session, every field, on the test sessions of every agent
// (rotations, subagents, gauges, rejected lines) and the samples.
func TestMemoSameConsumption(t *testing.T) {
	roots := testRoots(session.Root{Path: claudeStore(t, 40, 20<<10)})
	ss := usage.Distinct(session.Discover(roots, false).Sessions)
	ctx := context.Background()
	want, err := Consumption(ctx, ss, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(want)
	mm := &mapMemo{m: map[string][]byte{}}
	first, err := ConsumptionMemo(ctx, ss, nil, nil, mm)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(first)
	if mm.stores == 0 || mm.hits != 0 {
		t.Fatalf("first run: %d stores, %d hits; want some, 0", mm.stores, mm.hits)
	}
	got, err := ConsumptionMemo(ctx, ss, nil, nil, mm)
	if err != nil {
		t.Fatal(err)
	}
	if mm.hits != 1 {
		t.Fatalf("second run: %d hits, want 1", mm.hits)
	}
	w, g := memoView(t, want), memoView(t, got)
	if len(w) != len(g) || len(w) < 40 {
		t.Fatalf("%d sessions from the memo, %d read", len(g), len(w))
	}
	for i := range w {
		if g[i] != w[i] {
			t.Errorf("session %d from the memo:\n got %s\nwant %s", i, g[i], w[i])
		}
	}
	// the same sessions in another order (discovery's is newest first,
	// which any append changes): the same stored result, in their order
	rev := slices.Clone(ss)
	slices.Reverse(rev)
	hits := mm.hits
	back, err := ConsumptionMemo(ctx, rev, nil, nil, mm)
	if err != nil {
		t.Fatal(err)
	}
	if mm.hits != hits+1 {
		t.Errorf("the sessions in another order were not found in the memo")
	}
	slices.Reverse(back)
	if b := memoView(t, back); !reflect.DeepEqual(b, w) {
		t.Errorf("the sessions in another order:\n got %v\nwant %v", b, w)
	}
	// the requests themselves are not kept: a caller that needs them
	// passes no memo
	n := 0
	EachRequest(got, func(*SessionUsage, *usage.Request) error { n++; return nil })
	if n != 0 {
		t.Errorf("a result from the memo gave %d requests", n)
	}
}

// ConsumptionMemo works on a copy of the caller's sessions (it lets its
// copy go once the files are read): the caller's list is as it was, in
// every path (no memo, a first run, a run from the memo). And a result
// holds no session of discovery's: once the caller lets them go, they go,
// while the results stay (over 100,000 sessions, 25 MB of them were held
// to the end of the run).
func TestConsumptionLetsSessionsGo(t *testing.T) {
	ctx := context.Background()
	discover := func() []*session.Session {
		return usage.Distinct(session.Discover([]session.Root{{Path: "../../testdata/sessions"}}, false).Sessions)
	}
	mm := &mapMemo{m: map[string][]byte{}}
	for _, memo := range []Memo{nil, mm, mm} {
		ss := discover()
		before := slices.Clone(ss)
		sus, err := ConsumptionMemo(ctx, ss, nil, nil, memo)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ss, before) {
			t.Fatalf("memo %v: the caller's sessions changed", memo != nil)
		}
		if len(sus) != len(ss) || len(ss) < 4 {
			t.Fatalf("%d results for %d sessions", len(sus), len(ss))
		}
		for i, su := range sus {
			if su.ID != ss[i].ID || su.Main != ss[i].Main {
				t.Fatalf("result %d is %s, its session %s", i, su.ID, ss[i].ID)
			}
		}
		ws := make([]weak.Pointer[session.Session], len(ss))
		for i, s := range ss {
			ws[i] = weak.Make(s)
		}
		ss, before = nil, nil
		runtime.GC()
		for i, w := range ws {
			if w.Value() != nil {
				t.Errorf("memo %v: session %d is still held by the results", memo != nil, i)
			}
		}
		Close(sus)
		runtime.KeepAlive(sus)
	}
	if mm.hits != 1 {
		t.Errorf("%d runs from the memo, want 1", mm.hits)
	}
}

// A stored value that does not decode is a miss, and the run reads.
func TestMemoDamagedValueIsAMiss(t *testing.T) {
	ss := session.Discover([]session.Root{{Path: "../../testdata/sessions"}}, false).Sessions
	ctx := context.Background()
	want, err := Consumption(ctx, ss, nil)
	if err != nil {
		t.Fatal(err)
	}
	mm := &mapMemo{m: map[string][]byte{}, corruptAfter: true}
	if _, err := ConsumptionMemo(ctx, ss, nil, nil, mm); err != nil {
		t.Fatal(err)
	}
	got, err := ConsumptionMemo(ctx, ss, nil, nil, mm)
	if err != nil {
		t.Fatal(err)
	}
	if mm.hits == 0 || mm.stores <= mm.hits {
		t.Fatalf("%d hits, %d stores; want the damaged values found, and replaced", mm.hits, mm.stores)
	}
	w, g := memoView(t, want), memoView(t, got)
	if !reflect.DeepEqual(w, g) {
		t.Errorf("after a damaged value:\n got %v\nwant %v", g, w)
	}
}

// The key names every file that records usage as discovery found it: a
// file that grows, is renamed or touched, and another order of the
// sessions, each make another key; a file without an identity, none.
func TestMemoKey(t *testing.T) {
	dir := filepath.Join(claudeStore(t, 3, 4<<10), "projects")
	discover := func() []*session.Session {
		return session.Discover([]session.Root{{Path: dir}}, false).Sessions
	}
	ss := discover()
	if len(ss) != 3 {
		t.Fatalf("%d sessions, want 3", len(ss))
	}
	k0 := memoKey(ss)
	if k0 == nil {
		t.Fatal("no key")
	}
	if k := memoKey(discover()); string(k) != string(k0) {
		t.Fatal("the same store gave another key")
	}
	keys := map[string]string{string(k0): "unchanged"}
	differs := func(what string, k []byte) {
		t.Helper()
		if k == nil {
			t.Fatalf("%s: no key", what)
		}
		if prev, ok := keys[string(k)]; ok {
			t.Errorf("%s: the key of %s", what, prev)
		}
		keys[string(k)] = what
	}
	differs("sessions in another order", memoKey([]*session.Session{ss[1], ss[0], ss[2]}))
	differs("a session fewer", memoKey(ss[:2]))
	// Kimi's project is named outside its files (kimi.json)
	other := *ss[0]
	other.Project = "/elsewhere"
	differs("another project", memoKey([]*session.Session{&other, ss[1], ss[2]}))

	main := ss[0].Main
	fi, err := os.Stat(main)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","message":{"role":"user","content":"x"}}` + "\n")
	f.Close()
	// its time as before: only the size says it grew
	if err := os.Chtimes(main, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if unchanged(ss) {
		t.Error("unchanged: a file grown since discovery was not seen")
	}
	differs("a file grown", memoKey(discover()))
	if !unchanged(discover()) {
		t.Error("unchanged: a store as discovery found it was not")
	}

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(main, later, later); err != nil {
		t.Fatal(err)
	}
	differs("a file touched", memoKey(discover()))

	if err := os.Rename(main, filepath.Join(filepath.Dir(main), "0000000a-0000-4000-8000-000000000000.jsonl")); err != nil {
		t.Fatal(err)
	}
	differs("a file renamed", memoKey(discover()))

	// a file as the caller names it, without discovery's lstat
	s := *ss[1]
	s.Files = []session.File{{Path: s.Main, Role: session.FileMain, Size: 1}}
	if k := memoKey([]*session.Session{&s}); k != nil {
		t.Error("a file without an identity gave a key")
	}
}

// Every field of SessionUsage is either stored in the memo or one the
// sessions give: a field added to one and not the other fails here.
func TestMemoCarriesEveryField(t *testing.T) {
	given := map[string]bool{"Session": true, "Agent": true, "ID": true, "Main": true, "Files": true,
		"Errors": true, "src": true, "ledger": true, "ccusageView": true}
	stored := map[string]bool{}
	mt := reflect.TypeOf(memoSession{})
	for i := range mt.NumField() {
		stored[mt.Field(i).Name] = true
	}
	st := reflect.TypeOf(SessionUsage{})
	for i := range st.NumField() {
		name := st.Field(i).Name
		if !given[name] && !stored[name] {
			t.Errorf("SessionUsage.%s is neither stored in the memo nor given by the sessions", name)
		}
	}
}

// A stored session decodes to what was stored, down to a time's zone and
// a cost's last bit.
func TestMemoRoundTrip(t *testing.T) {
	at := time.UnixMilli(1_790_000_000_123)
	tot := func(v usage.View, n int64) usage.Totals {
		return usage.Totals{View: v, Usage: session.Usage{Input: n, Output: 2 * n, CacheRead: 3, CacheCreation: 4, Reasoning: 5, CacheCreation1h: 1},
			Requests: 7, ByModel: usage.ByModel{{Model: "a", Usage: session.Usage{Input: n}}, {Model: "b"}},
			LastActivity: at, CostUSD: 0.1 + 0.2, Unpriced: map[string]int64{"x": 9}}
	}
	rot := tot(usage.ViewSessctl, 0)
	rot.Requests = 0
	ccu := tot(usage.ViewCCUsage, 11)
	s := &session.Session{Agent: "claude", ID: "id", Main: "/m.jsonl"}
	su := &SessionUsage{Agent: "claude", ID: "id", Project: "p", CWD: "/w", Main: "/m.jsonl", Files: []string{},
		Totals: tot(usage.ViewSessctl, 10), InRotations: &rot, AsCCUsage: &ccu, PerResponse: 1, PerResponseView: 2,
		CumulativeView: 3, ViewsDiffer: "why", UsageLines: 4, Rejected: 5,
		RejectedLines: []FileDrop{{"/m.jsonl", usage.Drop{Line: 3, Reason: "r"}}}, SessctlOnly: 6,
		SessctlLines: []FileDrop{{"/m.jsonl", usage.Drop{Line: 4, Reason: "s"}}}, CCUsageOnly: 7, Corrupt: 8,
		Context: 9, ContextSource: "src", Window: 10, ccusageView: true}
	// a second session of zero values after it: each is decoded as its
	// own, not over the one before; and its ccusage view is its totals
	// (stored as CCUsageSame)
	s2 := &session.Session{Agent: "codex", ID: "id2", Main: "/n.jsonl"}
	same := tot(usage.ViewCCUsage, 20)
	su2 := &SessionUsage{Agent: "codex", ID: "id2", Main: "/n.jsonl", Files: []string{},
		Totals: tot(usage.ViewSessctl, 20), AsCCUsage: &same}
	enc := newMemoEncoder(2)
	enc.add(su)
	enc.add(su2)
	v := enc.value()
	if v == nil {
		t.Fatal("not stored")
	}
	if decodeMemo(v, 1, nil) == nil {
		t.Error("a result of two sessions decoded as one of one")
	}
	ms := make([]memoSession, 2)
	if err := decodeMemo(v, 2, func(i int, m *memoSession) error { ms[i] = *m; return nil }); err != nil {
		t.Fatal("does not decode")
	}
	got := []*SessionUsage{fromMemoOne(s, &ms[0]), fromMemoOne(s2, &ms[1])}
	if !reflect.DeepEqual(got[0], su) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got[0], su)
	}
	if !reflect.DeepEqual(got[1], su2) {
		t.Errorf("round trip of the second:\n got %+v\nwant %+v", got[1], su2)
	}
	if !ms[1].CCUsageSame || ms[1].AsCCUsage != nil || ms[0].CCUsageSame {
		t.Error("a ccusage view equal to the totals was stored as a copy, or another as the same")
	}
	if got[0].Totals.LastActivity.Location() != at.Location() {
		t.Errorf("time zone %v, want %v", got[0].Totals.LastActivity.Location(), at.Location())
	}
	su.Errors = []string{"unreadable"}
	enc = newMemoEncoder(1)
	if enc.add(su); enc.value() != nil {
		t.Error("a result with errors was stored")
	}
}

// claudeLine is an assistant line of Claude Code with usage: message id,
// request id, input tokens.
func claudeLine(msg, req string, in int) string {
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"message":{"id":%q,"model":"claude-opus-4-8","role":"assistant","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":%d,"output_tokens":3,"cache_read_input_tokens":7}},"requestId":%q,"type":"assistant","uuid":"u-%s","timestamp":"2026-11-01T10:00:00.000Z","sessionId":"s","version":"2.1.197"}`,
		msg, in, req, msg)
}

// A run that finds some files changed since the run its shape was stored
// for works out only their sessions, when they share no message with
// another session, and then gives what a run that reads everything gives;
// otherwise it reads everything. Each case's output is compared with a
// run without the memo.
func TestMemoChangedSessionsOnly(t *testing.T) {
	store := map[string][]string{}
	for i := range 6 {
		var lines []string
		for n := range 5 {
			lines = append(lines, claudeLine(fmt.Sprintf("msg_%d_%d", i, n), fmt.Sprintf("req_%d_%d", i, n), 100*i+n+1))
		}
		store[fmt.Sprintf("projects/-w/%08d-1111-4111-8111-111111111111.jsonl", i)] = lines
	}
	// session 6 is a fork of session 5: the same first two messages
	fork := append([]string{}, store["projects/-w/00000005-1111-4111-8111-111111111111.jsonl"][:2]...)
	fork = append(fork, claudeLine("msg_6_0", "req_6_0", 9000))
	store["projects/-w/00000006-1111-4111-8111-111111111111.jsonl"] = fork
	root := writeStore(t, store)
	file := func(i int) string {
		return filepath.Join(root, fmt.Sprintf("projects/-w/%08d-1111-4111-8111-111111111111.jsonl", i))
	}
	mm := &mapMemo{m: map[string][]byte{}}
	run := memoRunner(t, root, mm)
	discover := func() []*session.Session {
		return session.Discover([]session.Root{{Path: root}}, false).Sessions
	}
	// expect runs, and checks how many files the run read: n, or all
	const all = -1
	expect := func(what string, n int) {
		t.Helper()
		switch got := run(what); {
		case n == all && got < 7:
			t.Errorf("%s: %d files read, want all 7", what, got)
		case n != all && got != n:
			t.Errorf("%s: %d files read, want %d", what, got, n)
		}
	}
	if n := run("first run"); n != 7 {
		t.Fatalf("first run read %d files, want 7", n)
	}
	appendTo := func(i int, line string) {
		t.Helper()
		f, err := os.OpenFile(file(i), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(2, claudeLine("msg_2_new", "req_2_new", 5000))
	expect("a new message in a session of its own", 1)
	appendTo(2, claudeLine("msg_2_newer", "req_2_newer", 6000))
	appendTo(3, claudeLine("msg_3_new", "req_3_new", 7000))
	expect("new messages in two sessions", 2)
	expect("nothing changed", 0)
	// a message another session holds: the de-duplication across files
	// decides which session counts it, so every file is read
	appendTo(1, claudeLine("msg_4_0", "req_4_0", 1))
	expect("a message another session holds", all)
	// a session that shares messages with a fork
	appendTo(6, claudeLine("msg_6_1", "req_6_1", 42))
	expect("a new message in a forked session", all)
	appendTo(0, claudeLine("msg_0_new", "req_0_new", 11))
	expect("after all that, a new message in a session of its own", 1)
	// the session that won the messages it shares with its fork loses
	// them (rewritten in place): the fork counts them now, although none
	// of the changed session's keys is another's any more
	if err := os.WriteFile(file(5), []byte(strings.Join(store["projects/-w/00000005-1111-4111-8111-111111111111.jsonl"][2:], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect("a forked session's shared messages gone", all)
	// the result the delta names is gone (the memo keeps a few runs, and
	// the delta holds no copy of it): a miss, and the run is worked out
	// whole, which stores both again
	_, cs := canonical(session.Slice(discover()))
	key, _ := memoKeys(cs.(session.Slice))
	if _, ok := mm.m[string(key)]; !ok {
		t.Fatal("no result stored under the last run's key")
	}
	delete(mm.m, string(key))
	appendTo(3, claudeLine("msg_3_gone", "req_3_gone", 77))
	expect("a new message, the delta's result gone", all)
	appendTo(3, claudeLine("msg_3_back", "req_3_back", 78))
	expect("then a new message in a session of its own", 1)
	// a file whose requests went to the ledger as it was read, unseen:
	// nothing is known of its keys
	defer func(old int64) { StreamFile = old }(StreamFile)
	StreamFile = 1
	run("every file streamed")
	appendTo(2, claudeLine("msg_2_streamed", "req_2_streamed", 3))
	before := changedOnlyRuns.Load()
	run("a new message, every file streamed")
	if changedOnlyRuns.Load() != before {
		t.Error("a new message, every file streamed: worked out from what the memo knows of the files' keys, which is nothing")
	}
}

// memoRunner returns what runs ConsumptionMemo through mm over the
// sessions under root, fails the test unless it gives what a run without
// the memo gives (what says which run), and returns how many files it
// read.
func memoRunner(t *testing.T, root string, mm *mapMemo) func(what string) int {
	ctx := context.Background()
	var reads atomic.Int64 // the scan's workers read side by side
	read := func(ctx context.Context, rd *usage.Reader, path string, _ session.Agent, sc usage.Scanner, class usage.FileClass) (*usage.FileUsage, error) {
		reads.Add(1)
		return rd.ReadFile(ctx, path, sc, class)
	}
	return func(what string) int {
		t.Helper()
		ss := session.Discover([]session.Root{{Path: root}}, false).Sessions
		want, err := Consumption(ctx, ss, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer Close(want)
		reads.Store(0)
		got, err := ConsumptionMemo(ctx, ss, nil, read, mm)
		if err != nil {
			t.Fatal(err)
		}
		if w, g := memoView(t, want), memoView(t, got); !reflect.DeepEqual(w, g) {
			t.Fatalf("%s:\n got %v\nwant %v", what, g, w)
		}
		return int(reads.Load())
	}
}

// A run with more message keys than a delta holds stores no delta: a run
// after a change is worked out whole, and gives what a run without the
// memo gives.
func TestMemoDeltaKeysBounded(t *testing.T) {
	defer func(old int) { maxDeltaKeys = old }(maxDeltaKeys)
	maxDeltaKeys = 8
	store := map[string][]string{}
	for i := range 3 {
		var lines []string
		for n := range 3 {
			lines = append(lines, claudeLine(fmt.Sprintf("msg_%d_%d", i, n), fmt.Sprintf("req_%d_%d", i, n), 10*i+n+1))
		}
		store[fmt.Sprintf("projects/-w/%08d-2222-4222-8222-222222222222.jsonl", i)] = lines
	}
	root := writeStore(t, store)
	mm := &mapMemo{m: map[string][]byte{}}
	run := memoRunner(t, root, mm)
	run("first run")
	if len(mm.m) != 1 {
		t.Fatalf("%d values stored, want the result alone (9 keys, no delta)", len(mm.m))
	}
	appendTo := func(msg string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(root, "projects/-w/00000001-2222-4222-8222-222222222222.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(claudeLine(msg, "req_"+msg, 500) + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	appendTo("msg_1_new")
	if n := run("a new message"); n != 3 {
		t.Errorf("a new message: %d files read, want all 3", n)
	}
	// with room for the keys, the same store gets its delta, and a run
	// after a change reads the changed file alone
	maxDeltaKeys = 1 << 19
	appendTo("msg_1_newer")
	run("a run with room for the keys")
	appendTo("msg_1_newest")
	if n := run("a new message, with a delta"); n != 1 {
		t.Errorf("a new message, with a delta: %d files read, want 1", n)
	}
}

// A damaged delta is a miss, not a crash: a head whose times are fewer
// than its sizes (changedOnly reads both by one index), and keys that name
// a session past the run's (it indexes by them).
func TestMemoDamagedDelta(t *testing.T) {
	root := claudeStore(t, 3, 2<<10)
	ss := session.Discover([]session.Root{{Path: root}}, false).Sessions
	head := memoDeltaHead{Isolated: make([]bool, len(ss))}
	for _, s := range ss {
		eachUsageFile(s, func(_ int, f UsageFile) { head.Sizes = append(head.Sizes, f.Size) })
	}
	if len(head.Sizes) == 0 {
		t.Fatal("no usage files")
	}
	var hb bytes.Buffer
	if err := gob.NewEncoder(&hb).Encode(&head); err != nil {
		t.Fatal(err)
	}
	v := binary.AppendUvarint(nil, uint64(hb.Len()))
	v = append(append(v, hb.Bytes()...), 0, 'k')
	mm := &mapMemo{m: map[string][]byte{"shape": v}}
	ok, err := changedOnly(context.Background(), ss, nil, mm, []byte("key"), []byte("shape"), func(int, *SessionUsage) error { return nil })
	if ok || err != nil {
		t.Errorf("a head without times: ok %v, err %v; want a miss", ok, err)
	}

	for _, keys := range [][]uint64{{1 << sessBits, 2<<sessBits | uint64(len(ss))}, {1<<sessBits | sessMask - 1}} {
		body := binary.AppendUvarint(nil, uint64(len(keys)))
		for _, k := range keys {
			body = binary.LittleEndian.AppendUint64(body, k)
		}
		body = append(body, 'k')
		var d memoDelta
		if decodeDeltaBody(body, &d, len(ss)) {
			t.Errorf("keys %x of sessions past %d: taken", keys, len(ss))
		}
	}
	// and the keys of the run's sessions, or of several, are
	body := binary.AppendUvarint(nil, 2)
	body = binary.LittleEndian.AppendUint64(body, 1<<sessBits|uint64(len(ss)-1))
	body = binary.LittleEndian.AppendUint64(body, 2<<sessBits|sessMask)
	var d memoDelta
	if !decodeDeltaBody(append(body, 'k'), &d, len(ss)) {
		t.Error("keys of the run's sessions: refused")
	}
}
