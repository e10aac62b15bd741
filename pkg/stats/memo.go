package stats

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Memo keeps the results of whole runs of Consumption (pkg/index does, in
// its file), so that a run over files none of which changed since the last
// such run neither reads nor de-duplicates anything: the de-duplication of
// Claude Code requests is across every file (a request's winner depends on
// all of them), so a cache of each file's scan still leaves the ledger to
// rebuild on every run, most of a warm run's time.
type Memo interface {
	// LoadRun returns the value stored under key, nil when none.
	LoadRun(key []byte) []byte
	// StoreRun stores value under key (or not: it is only a cache).
	StoreRun(key, value []byte)
}

// memoVersion names the layout of a stored result and of its key. Change
// it whenever either changes.
const memoVersion = "sessctl-consumption-memo-5"

// memoSession is what Consumption works out for a session, stored: every
// field of SessionUsage but those the caller's sessions give (Session,
// Agent, ID, Main, Files) and those a stored result has not (Errors: a run
// with errors is not stored; the requests themselves). TestMemoCarriesEveryField
// fails when a field is added to SessionUsage and not here or there.
type memoSession struct {
	Project, CWD                    string
	Totals                          usage.Totals
	InRotations, AsCCUsage          *usage.Totals
	PerResponse                     int
	PerResponseView, CumulativeView int64
	ViewsDiffer                     string
	UsageLines, Rejected            int
	RejectedLines                   []FileDrop
	SessctlOnly                     int
	SessctlLines                    []FileDrop
	CCUsageOnly, Corrupt            int
	Context                         int64
	ContextSource                   string
	Window                          int64
	CCUsageView                     bool
	// CCUsageSame stands for an AsCCUsage that is Totals in the other
	// view (the views agree, as in most runs): it is made again from
	// Totals, sharing its by-model list as Consumption's does, instead
	// of being stored and decoded as a second copy
	CCUsageSame bool
}

// ConsumptionMemo is ConsumptionWith through memo (nil: none). The result
// of a run is stored under a key made of everything it depends on: this
// build's layout, the sessions in order (agent, id, project, main file),
// and each file that records usage (its path, class, device, inode, size
// and modification time, as discovery's lstat found them). A run whose key
// is stored is answered from the memo: the same sessions and totals,
// without the counted requests themselves, so EachRequest gives nothing
// (a caller that groups by day or model, or exports requests, passes no
// memo). A result is stored only when the run had no error, no file
// changed while it ran, and the price table is the embedded one.
//
// A run whose key is not stored but whose shape is (the same sessions and
// files, some of them changed: a live session appending) works out again
// only the sessions whose files changed, when that gives what the whole
// run would: see memoDelta.
func ConsumptionMemo(ctx context.Context, ss []*session.Session, progress Progress, read ReadFile, memo Memo) ([]*SessionUsage, error) {
	if memo == nil || usage.PricesSet() {
		return consumption(ctx, slices.Clone(ss), progress, read, nil, true)
	}
	out := make([]*SessionUsage, len(ss))
	err := ConsumptionEach(ctx, session.Slice(ss), progress, read, memo, func(i int, su *SessionUsage) error {
		out[i] = su
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ConsumptionEach is ConsumptionMemo calling each with every session's
// result (i: its place in ss), from one goroutine, instead of returning
// them all: a caller that keeps only what it shows of each holds neither
// the results nor, while the files are read, more than a small part of
// each (see consume). The results come in no set order, and none has its
// requests (EachRequest gives nothing). An error from each stops the run
// and is returned.
//
// A list of packed sessions (session.Packed) is the caller's to give: it
// is let go once the scan's plan is made.
func ConsumptionEach(ctx context.Context, ss session.List, progress Progress, read ReadFile, memo Memo, each func(i int, su *SessionUsage) error) error {
	if sl, ok := ss.(session.Slice); ok {
		ss = session.Slice(slices.Clone(sl))
	}
	if memo == nil || usage.PricesSet() {
		return consumeAll(ctx, ss, progress, read, nil, true, each)
	}
	// the sessions by main file: what a session counts does not depend on
	// the order they come in (discovery's, newest first, which an append
	// changes), and so neither do the key, the shape and what is stored
	order, cs := canonical(ss)
	return consumptionMemo(ctx, cs, progress, read, memo, func(k int, su *SessionUsage) error {
		return each(int(order[k]), su)
	})
}

// consumeAll is consume, closing its source. Every result has been given
// by then, so a temporary file of the ledger's that cannot be removed does
// not fail the run (as Close's error, which callers ignored, did not).
func consumeAll(ctx context.Context, ss session.List, progress Progress, read ReadFile, seen func(sess int, fu *usage.FileUsage), release bool,
	emit func(i int, su *SessionUsage) error) error {
	sc, err := consume(ctx, ss, progress, read, seen, release, true, emit)
	if err != nil {
		return err
	}
	sc.close()
	return nil
}

// canonical returns ss in their canonical order (by main file, agent and
// id), and where each is in ss: order[k] is the place of cs[k]. It is a
// function of its own so that the sort's closure, which holds ss, ends
// with it: written in ConsumptionMemo, it kept discovery's sessions alive
// to the end of the run (TestConsumptionLetsSessionsGo cannot see that;
// docs/architecture.md says how it was measured).
func canonical(ss session.List) (order []int32, cs session.List) {
	order = make([]int32, ss.Len())
	for i := range order {
		order[i] = int32(i)
	}
	if p, ok := ss.(*session.Packed); ok {
		slices.SortStableFunc(order, func(i, j int32) int {
			if c := p.CompareMain(int(i), int(j)); c != 0 {
				return c
			}
			a, b := p.At(int(i)), p.At(int(j))
			return cmp.Or(strings.Compare(string(a.Agent), string(b.Agent)), strings.Compare(a.ID, b.ID))
		})
		p.Reorder(order)
		return order, p
	}
	sl := ss.(session.Slice)
	slices.SortStableFunc(order, func(i, j int32) int {
		a, b := sl[i], sl[j]
		return cmp.Or(strings.Compare(a.Main, b.Main), strings.Compare(string(a.Agent), string(b.Agent)), strings.Compare(a.ID, b.ID))
	})
	out := make(session.Slice, len(sl))
	for k, i := range order {
		out[k] = sl[i]
	}
	return order, out
}

// consumptionMemo is ConsumptionEach of sessions in their canonical order.
func consumptionMemo(ctx context.Context, list session.List, progress Progress, read ReadFile, memo Memo, emit func(i int, su *SessionUsage) error) error {
	// list is ConsumptionEach's own copy: a run that does not use the memo
	// lets it go once the files are read
	if list.Len() > maxMemoSessions {
		return consumeAll(ctx, list, progress, read, nil, true, emit)
	}
	ss := session.Sessions(list)
	key, shape := memoKeys(ss)
	if key == nil {
		return consumeAll(ctx, session.Slice(ss), progress, read, nil, true, emit)
	}
	// a stored result is decoded twice: once whole, to know it is sound
	// before the first session is given (a caller may show each as it
	// comes), then session by session as each is given
	if v := memo.LoadRun(key); v != nil && decodeMemo(v, len(ss), nil) == nil {
		return decodeMemo(v, len(ss), func(i int, m *memoSession) error { return emit(i, fromMemoOne(ss[i], m)) })
	}
	if ok, err := changedOnly(ctx, ss, read, memo, key, shape, emit); ok || err != nil {
		return err
	}
	// the result is encoded as it is given, so that it is not held whole
	kc := newKeyCollector(len(ss))
	enc := newMemoEncoder(len(ss))
	err := consumeAll(ctx, session.Slice(ss), progress, read, kc.seen, false, func(i int, su *SessionUsage) error {
		enc.add(su)
		return emit(i, su)
	})
	if err != nil {
		return err
	}
	v := enc.value()
	if v == nil || !unchanged(ss) {
		return nil
	}
	memo.StoreRun(key, v)
	if kc.complete {
		if d, err := kc.delta(ss, key); err == nil {
			memo.StoreRun(shape, d)
		}
	}
	return nil
}

// maxMemoSessions is the most sessions whose runs the memo keeps: a stored
// session takes about a kilobyte (its totals by model, its rejected
// lines), and the index keeps no value over 16 MiB, so a larger store's
// result would be encoded only to be dropped.
const maxMemoSessions = 20000

// memoDelta is what the memo keeps, under a run's shape (its key without
// the files' sizes and times), so that a later run over the same sessions
// and files, some of them changed, works out again only the sessions whose
// files changed and takes the others from the result stored under
// ResultKey.
//
// That is the whole run's result only when the changed sessions share no
// request with any other: Claude Code's de-duplication is across every
// file, by message (usage.Request.MsgKey), and a session whose messages
// appear in another's files (a fork, a resumed copy) may win or lose
// requests to it. So the delta keeps every message key of the run with the
// session that holds it (or several), and which sessions are Isolated
// (none of their keys in another session's files). A changed session that
// was not isolated, or whose new keys are another session's, and any run
// in which a rotated copy holds keyless requests (those are matched by
// their line against every file's), is worked out whole.
//
// A key is kept as its top 44 bits with the session in the low 20 (one
// uint64: 8 bytes a key): two messages whose keys share their top bits are
// taken for one, which can only make a session look shared when it is not
// (the run is then worked out whole), never the other way. The head (a gob
// value) comes first, then the keys as raw bytes, so that a run that finds
// a changed session not isolated decodes only the head, and so that the
// keys are written and read without a copy of their own; then the key of
// the result. The result itself is not in the delta: it is stored under
// its own key by the same run, and a copy of it here took as much memory
// again when it was written (a result of 10,000 sessions is about 3 MB). A
// delta whose result is gone (the memo keeps a few runs) is a miss.
type memoDelta struct {
	memoDeltaHead
	Keys      []uint64 // packed, sorted: keyPart(k) | session (sessMask: several)
	ResultKey []byte   // where the result is stored (decodeMemo)
}

type memoDeltaHead struct {
	Sizes, MTimes []int64 // each usage file's, session by session, in eachUsageFile's order
	Isolated      []bool  // by session
}

const (
	sessBits = 20
	sessMask = 1<<sessBits - 1 // the session of a packed key; all ones: several
)

func keyPart(p uint64) uint64 { return p &^ sessMask }
func sessOf(p uint64) int     { return int(p & sessMask) }

// keyCollector gathers the message keys of a run's requests by session
// (scanUsage's seen), packed, in a list sorted once at the end.
type keyCollector struct {
	packed   []uint64
	sessions int
	// complete is false once the run holds what a delta cannot follow: a
	// file streamed into the ledger unseen, keyless requests in a rotated
	// copy, a request with one key and not the other, too many sessions
	complete bool
	// after index: packed holds the distinct keys in order, each with its
	// session or sessMask; isolated, the sessions that share none
	isolated []bool
}

// maxDeltaKeys is the most message keys a delta holds: 4 MiB of them,
// about 4 GB of Claude Code transcripts. The keys are gathered while the
// run reads its files and held to its end, and a run after a change loads
// them all: a store of 8.9 GB (a million requests) held 8 MB of them on
// its first run, more than the rest of what it kept. A variable for
// tests.
var maxDeltaKeys = 1 << 19

func newKeyCollector(sessions int) *keyCollector {
	return &keyCollector{sessions: sessions, complete: sessions < sessMask}
}

func (kc *keyCollector) seen(sess int, fu *usage.FileUsage) {
	if fu == nil || !kc.complete {
		kc.complete, kc.packed = false, nil
		return
	}
	if len(kc.packed)+len(fu.Requests) > maxDeltaKeys {
		// more than a delta is worth holding: the run is worked out
		// whole after a change, as without one
		kc.complete, kc.packed = false, nil
		return
	}
	for i := range fu.Requests {
		r := &fu.Requests[i]
		if (r.Key == 0) != (r.MsgKey == 0) {
			kc.complete = false
		}
		if r.MsgKey == 0 {
			if fu.Class&usage.Copy != 0 {
				kc.complete = false
			}
			continue
		}
		p := keyPart(r.MsgKey) | uint64(sess)&sessMask
		if n := len(kc.packed); n > 0 && kc.packed[n-1] == p {
			continue // the lines of one response come one after another
		}
		kc.packed = append(kc.packed, p)
	}
}

// index sorts what was seen into one packed key each, and isolated.
func (kc *keyCollector) index() {
	slices.Sort(kc.packed)
	kc.isolated = make([]bool, kc.sessions)
	for i := range kc.isolated {
		kc.isolated[i] = true
	}
	// written over the list itself: a group of equal keys (sorted by
	// session) becomes one entry
	out := kc.packed[:0]
	for i := 0; i < len(kc.packed); {
		k := keyPart(kc.packed[i])
		j := i + 1
		for j < len(kc.packed) && keyPart(kc.packed[j]) == k {
			j++
		}
		p := kc.packed[i]
		if sessOf(kc.packed[j-1]) != sessOf(p) {
			for _, q := range kc.packed[i:j] {
				kc.isolated[sessOf(q)] = false
			}
			p = k | sessMask
		}
		out = append(out, p)
		i = j
	}
	kc.packed = out
}

// delta encodes the memoDelta of a run over ss whose result is stored
// under resultKey.
func (kc *keyCollector) delta(ss []*session.Session, resultKey []byte) ([]byte, error) {
	kc.index()
	return encodeDelta(ss, kc.isolated, kc.packed, resultKey)
}

func encodeDelta(ss []*session.Session, isolated []bool, keys []uint64, resultKey []byte) ([]byte, error) {
	head := memoDeltaHead{Isolated: isolated}
	for _, s := range ss {
		eachUsageFile(s, func(_ int, f UsageFile) {
			head.Sizes = append(head.Sizes, f.Size)
			head.MTimes = append(head.MTimes, f.ModTime.UnixNano())
		})
	}
	var hb bytes.Buffer
	if err := gob.NewEncoder(&hb).Encode(&head); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 2*binary.MaxVarintLen64+hb.Len()+8*len(keys)+len(resultKey))
	b = binary.AppendUvarint(b, uint64(hb.Len()))
	b = append(b, hb.Bytes()...)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return append(b, resultKey...), nil
}

// decodeDeltaHead reads the head of a stored delta and returns the rest.
func decodeDeltaHead(v []byte, d *memoDelta) ([]byte, bool) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)-k) {
		return nil, false
	}
	if gob.NewDecoder(bytes.NewReader(v[k:k+int(n)])).Decode(&d.memoDeltaHead) != nil ||
		len(d.MTimes) != len(d.Sizes) { // damaged: changedOnly reads both by one index
		return nil, false
	}
	return v[k+int(n):], true
}

// decodeDeltaBody reads the keys and the result's key after the head, for
// a run of the given number of sessions: a key that names a session past
// them (a damaged delta) makes it false, as changedOnly indexes by it.
func decodeDeltaBody(rest []byte, d *memoDelta, sessions int) bool {
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)-k)/8 {
		return false
	}
	rest = rest[k:]
	d.Keys = make([]uint64, n)
	for i := range d.Keys {
		d.Keys[i] = binary.LittleEndian.Uint64(rest[8*i:])
		if s := sessOf(d.Keys[i]); s >= sessions && s != sessMask {
			return false
		}
	}
	d.ResultKey = rest[8*n:]
	return len(d.ResultKey) > 0 && slices.IsSorted(d.Keys)
}

// findKey returns where a key's part is among packed keys.
func findKey(keys []uint64, part uint64) (int, bool) {
	return slices.BinarySearchFunc(keys, part, func(e, t uint64) int { return cmp.Compare(keyPart(e), t) })
}

// changedOnlyRuns counts the runs changedOnly answered (tests).
var changedOnlyRuns atomic.Int64

// changedOnly answers a run whose shape the memo holds by working out
// again only the sessions whose files changed (memoDelta); ok is false
// when it cannot, and the run is worked out whole. It stores the new
// result as the whole run would.
func changedOnly(ctx context.Context, ss []*session.Session, read ReadFile, memo Memo, key, shape []byte, emit func(i int, su *SessionUsage) error) (ok bool, err error) {
	v := memo.LoadRun(shape)
	if v == nil {
		return false, nil
	}
	var d memoDelta
	rest, ok := decodeDeltaHead(v, &d)
	if !ok || len(d.Isolated) != len(ss) {
		return false, nil
	}
	var changed []int // sessions
	n := 0
	for i, s := range ss {
		moved := false
		eachUsageFile(s, func(_ int, f UsageFile) {
			if n >= len(d.Sizes) || f.Size != d.Sizes[n] || f.ModTime.UnixNano() != d.MTimes[n] {
				moved = true
			}
			n++
		})
		if moved {
			if !d.Isolated[i] {
				return false, nil
			}
			changed = append(changed, i)
		}
	}
	if n != len(d.Sizes) || len(changed) > max(1, len(ss)/2) || !decodeDeltaBody(rest, &d, len(ss)) {
		return false, nil
	}
	rv := memo.LoadRun(d.ResultKey)
	if rv == nil {
		return false, nil
	}
	ms := make([]memoSession, len(ss))
	if decodeMemo(rv, len(ss), func(i int, m *memoSession) error { ms[i] = *m; return nil }) != nil {
		return false, nil
	}
	sub := make([]*session.Session, len(changed))
	for j, i := range changed {
		sub[j] = ss[i]
	}
	kc := newKeyCollector(len(sub))
	subOut, err := consumption(ctx, sub, nil, read, kc.seen, false)
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return false, nil
	}
	defer Close(subOut)
	if !kc.complete {
		return false, nil
	}
	kc.index()
	for j := range sub {
		if !kc.isolated[j] {
			return false, nil
		}
	}
	// a changed session's keys must be its own or new to the run
	in := make([]bool, len(ss))
	for _, i := range changed {
		in[i] = true
	}
	for j, p := range kc.packed {
		// now the changed session's own number among ss
		p = keyPart(p) | uint64(changed[sessOf(p)])
		kc.packed[j] = p
		if at, found := findKey(d.Keys, keyPart(p)); found && d.Keys[at] != p {
			return false, nil
		}
	}
	subMs, ok := toMemo(subOut)
	if !ok {
		return false, nil
	}
	for j, i := range changed {
		ms[i] = subMs[j]
	}
	changedOnlyRuns.Add(1)
	for i, s := range ss {
		if err := emit(i, fromMemoOne(s, &ms[i])); err != nil {
			return true, err
		}
	}
	// the new result and delta, stored as the whole run's would be
	if !unchanged(ss) {
		return true, nil
	}
	enc := newMemoEncoder(len(ms))
	for i := range ms {
		enc.addMemo(&ms[i])
	}
	if rv = enc.value(); rv == nil {
		return true, nil
	}
	memo.StoreRun(key, rv)
	// the run's keys: those of the sessions that did not change, and the
	// changed sessions' new ones (none of them another's), merged in order
	keys := make([]uint64, 0, len(d.Keys)+len(kc.packed))
	j := 0
	for _, p := range d.Keys {
		if s := sessOf(p); s != sessMask && in[s] {
			continue
		}
		for ; j < len(kc.packed) && kc.packed[j] < p; j++ {
			keys = append(keys, kc.packed[j])
		}
		keys = append(keys, p)
	}
	keys = append(keys, kc.packed[j:]...)
	if dv, err := encodeDelta(ss, d.Isolated, keys, key); err == nil {
		memo.StoreRun(shape, dv)
	}
	return true, nil
}

// memoKeys hashes what a Consumption of ss depends on (key) and the same
// without the files' sizes and times (shape); nil when a file that records
// usage has no identity to know it by.
func memoKeys(ss []*session.Session) (key, shape []byte) {
	hk, hs := sha256.New(), sha256.New()
	var b, t []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(v int64) { b = binary.AppendVarint(b, v) }
	str(memoVersion)
	ok := true
	for _, s := range ss {
		str(string(s.Agent))
		str(s.ID)
		str(s.Project)
		str(s.Main)
		num(int64(len(s.Files)))
		eachUsageFile(s, func(k int, f UsageFile) {
			dev, ino, known := f.Identity()
			ok = ok && known
			num(int64(k))
			str(f.Path)
			num(int64(f.Class))
			num(int64(dev))
			num(int64(ino))
			t = binary.AppendVarint(t, f.Size)
			t = binary.AppendVarint(t, f.ModTime.UnixNano())
		})
		num(-1)
		if len(b) >= 32<<10 {
			hk.Write(b)
			hs.Write(b)
			b = b[:0]
		}
	}
	if !ok {
		return nil, nil
	}
	hk.Write(b)
	hs.Write(b)
	hs.Write([]byte("shape"))
	hk.Write(t)
	return hk.Sum(nil), hs.Sum(nil)
}

// memoKey is memoKeys' key.
func memoKey(ss []*session.Session) []byte {
	k, _ := memoKeys(ss)
	return k
}

// unchanged reports whether every file of ss that records usage is still
// what discovery found (the key): a file that grew while the run read it
// may have been read with lines the key does not name.
func unchanged(ss []*session.Session) bool {
	ok := true
	for _, s := range ss {
		eachUsageFile(s, func(_ int, f UsageFile) {
			if !ok {
				return
			}
			dev, ino, _ := f.Identity()
			now, err := safety.Stat(f.Path)
			ok = err == nil && now.Same(safety.Identity{Dev: dev, Ino: ino, Size: f.Size, ModTime: f.ModTime})
		})
		if !ok {
			return false
		}
	}
	return ok
}

// toMemo is what stores the result of a run; false when it is not to be
// stored (a session had errors).
func toMemo(out []*SessionUsage) ([]memoSession, bool) {
	if !storable(out) {
		return nil, false
	}
	ms := make([]memoSession, len(out))
	for i, su := range out {
		ms[i] = memoOf(su)
	}
	return ms, true
}

// storable reports whether the result of a run may be stored: no session
// had errors.
func storable(out []*SessionUsage) bool {
	for _, su := range out {
		if len(su.Errors) > 0 {
			return false
		}
	}
	return true
}

// memoOf is what is stored of one session's result.
func memoOf(su *SessionUsage) memoSession {
	m := memoSession{Project: su.Project, CWD: su.CWD, Totals: su.Totals,
		InRotations: su.InRotations, AsCCUsage: su.AsCCUsage, PerResponse: su.PerResponse,
		PerResponseView: su.PerResponseView, CumulativeView: su.CumulativeView,
		ViewsDiffer: su.ViewsDiffer, UsageLines: su.UsageLines, Rejected: su.Rejected,
		RejectedLines: su.RejectedLines, SessctlOnly: su.SessctlOnly, SessctlLines: su.SessctlLines,
		CCUsageOnly: su.CCUsageOnly, Corrupt: su.Corrupt, Context: su.Context,
		ContextSource: su.ContextSource, Window: su.Window, CCUsageView: su.ccusageView}
	if su.AsCCUsage != nil {
		t := *su.AsCCUsage
		t.View = su.Totals.View
		if reflect.DeepEqual(t, su.Totals) {
			m.AsCCUsage, m.CCUsageSame = nil, true
		}
	}
	return m
}

// memoEncoder encodes a run's result as its sessions come: their number,
// then each as a value of its own, so that the result is never held whole
// beside its encoding (a stored session is about 340 bytes; 3.4 MB for
// 10,000 sessions). A session with errors makes the result one not to
// store.
type memoEncoder struct {
	buf bytes.Buffer
	enc *gob.Encoder
	err error
}

func newMemoEncoder(n int) *memoEncoder {
	e := &memoEncoder{}
	e.enc = gob.NewEncoder(&e.buf)
	e.err = e.enc.Encode(n)
	return e
}

// add encodes the next session's result.
func (e *memoEncoder) add(su *SessionUsage) {
	if e.err != nil {
		return
	}
	if len(su.Errors) > 0 {
		e.err = errNotStorable
		return
	}
	m := memoOf(su)
	e.addMemo(&m)
}

func (e *memoEncoder) addMemo(m *memoSession) {
	if e.err == nil {
		e.err = e.enc.Encode(m)
	}
}

// value is the encoded result, nil when it is not to be stored. The buffer
// grew by doubling, and the value is held until the index writes it: it is
// copied to its size.
func (e *memoEncoder) value() []byte {
	if e.err != nil {
		return nil
	}
	v := bytes.Clone(e.buf.Bytes())
	e.buf = bytes.Buffer{}
	return v
}

var errNotStorable = errors.New("a session had errors")

// decodeMemo decodes a stored result of as many sessions, calling each
// (when not nil) with every session's in order. It returns errBadMemo when
// the value does not decode or is not for as many sessions, or what each
// returned.
func decodeMemo(v []byte, sessions int, each func(i int, m *memoSession) error) error {
	dec := gob.NewDecoder(bytes.NewReader(v))
	var n int
	if err := dec.Decode(&n); err != nil || n != sessions {
		return errBadMemo
	}
	for i := range n {
		// each into a zero value: gob leaves a field the stream does
		// not carry (a zero one) as it was
		var m memoSession
		if err := dec.Decode(&m); err != nil {
			return errBadMemo
		}
		if each != nil {
			if err := each(i, &m); err != nil {
				return err
			}
		}
	}
	return nil
}

var errBadMemo = errors.New("a stored result that does not decode")

// fromMemoOne is the result of session s from what was stored of it.
func fromMemoOne(s *session.Session, m *memoSession) *SessionUsage {
	su := &SessionUsage{Agent: s.Agent, ID: s.ID, Project: m.Project, CWD: m.CWD,
		Main: s.Main, Files: []string{}, Totals: m.Totals, InRotations: m.InRotations,
		AsCCUsage: m.AsCCUsage, PerResponse: m.PerResponse, PerResponseView: m.PerResponseView,
		CumulativeView: m.CumulativeView, ViewsDiffer: m.ViewsDiffer, UsageLines: m.UsageLines,
		Rejected: m.Rejected, RejectedLines: m.RejectedLines, SessctlOnly: m.SessctlOnly,
		SessctlLines: m.SessctlLines, CCUsageOnly: m.CCUsageOnly, Corrupt: m.Corrupt,
		Context: m.Context, ContextSource: m.ContextSource, Window: m.Window, ccusageView: m.CCUsageView}
	if m.CCUsageSame {
		t := su.Totals
		t.View = usage.ViewCCUsage
		su.AsCCUsage = &t
	}
	eachUsageFile(s, func(_ int, f UsageFile) { su.Files = append(su.Files, f.Path) })
	return su
}
