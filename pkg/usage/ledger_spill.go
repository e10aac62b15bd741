package usage

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
)

// A Ledger past its Budget spills (docs/architecture.md, "The usage
// ledger"). De-duplication is separable by message: whether a request
// replaces another depends only on the requests with its MsgKey (its Key
// is a hash of its message id and request id, so one Key has one MsgKey,
// barring a 64-bit collision). A request without keys depends only on the
// requests with the same line (rotated copies). So the ledger writes what
// it holds (its lists and indexes, as they are) and then every further
// request, numbered in arrival order, into partitions by the hash of
// MsgKey (without keys: of the line); at Finish it replays each partition
// alone through the same push, and each view's winners come back in the
// order of their slots by a k-way merge on those numbers: the same
// requests, in the same order, as the ledger that never spilled. A request
// without keys outside a rotated copy wins its slot whatever else comes,
// so it skips the partitions (spillAdd, the snapshot in startSpill): it is
// written straight to a run of winners of its own, merged with the
// others.

// defaultBudget is MemoryBudget's default: 32,768 requests, about 5 MB
// with their indexes (a Claude Code store of about 250 MB), which keeps the
// peak RSS of stats --all and export --usage under 64 MB at any store size
// (scripts/bench-stats.sh measures it).
const defaultBudget = 1 << 15

var memoryBudget atomic.Int64

// MemoryBudget is how many requests a Ledger or a Sorter holds in memory
// before it spills to disk.
func MemoryBudget() int {
	if n := memoryBudget.Load(); n > 0 {
		return int(n)
	}
	return defaultBudget
}

// SetMemoryBudget sets MemoryBudget (n <= 0: the default) and returns the
// previous setting. Tests set a tiny one to spill on small stores.
func SetMemoryBudget(n int) int {
	return int(memoryBudget.Swap(int64(max(n, 0))))
}

func (lg *Ledger) budget() int {
	if lg.Budget > 0 {
		return lg.Budget
	}
	return MemoryBudget()
}

// spillParts is how many partitions a spilling ledger writes. A partition
// is replayed whole in memory; one larger than the budget is split again
// by another hash, as many levels as it takes (up to maxSplits).
const (
	spillParts = 64
	maxSplits  = 4
)

// record kinds of a partition. Every record starts with its kind, view,
// partition key and a number: 18 bytes; the body follows by kind.
const (
	recSlot    = iota + 1 // view, seq: a request in a view's list (seq = its place); body: the request
	recMsg                // view, pk = MsgKey, seq = the entry's key; body: latest, at
	recMore               // view, pk = the slot's MsgKey, seq = Key; body: at
	recCopied             // pk = a line counted (Ledger.copied)
	recDiverge            // view 0: the ccusage view starts as a copy of sessctl's; 1: as what follows
	recArrival            // view = 1 for a rotated copy's request, seq: arrival number; body: the request
)

const recHead = 2 + 8 + 8

// recBody is the size of the body of a record of kind k.
func recBody(k byte) int {
	switch k {
	case recSlot, recArrival:
		return requestSize
	case recMsg:
		return 16
	case recMore:
		return 8
	}
	return 0
}

// winnerSize is a winner on disk: its slot's number, the request.
const winnerSize = 8 + requestSize

type ledgerSpill struct {
	dir   spillDir
	parts *partSet
	seq   uint64 // the number of the next arrival
	rec   [recHead + requestSize]byte
	win   [winnerSize]byte // toDirect's record (on its stack it escaped: an allocation a request)
	// the views of the partition being replayed, their memory reused by
	// the next
	views  [2]replayView
	places [2]map[uint64]int32
	copied map[uint64]struct{}
	// the most requests one partition's replay held (tests)
	maxHeld int
	// after Finish: each view's winners, one sorted run per partition
	out  [2]*spillFile
	runs [2][]int64 // run i is [runs[i], runs[i+1])
	// direct holds each view's winners that need no replay, in arrival
	// order: one more sorted run (see spillAdd)
	direct [2]*spillFile
}

// partOf is the partition of key k at a level of splitting (splitmix64's
// finalizer, salted by the level).
func partOf(k uint64, level, n int) int {
	k += uint64(level+1) * 0x9e3779b97f4a7c15
	k = (k ^ k>>30) * 0xbf58476d1ce4e5b9
	k = (k ^ k>>27) * 0x94d049bb133111eb
	k ^= k >> 31
	return int(k % uint64(n))
}

// spillKey is what partitions a request: its message, else its line, else
// its arrival (a request without either depends on nothing).
func spillKey(r *Request, seq uint64) uint64 {
	switch {
	case r.Key != 0:
		return r.MsgKey
	case r.line != 0:
		return r.line
	}
	return seq
}

// partSet is one level of partitions. A partition's file is made when
// the first record goes to it (most are never made when a small partition
// is split again).
type partSet struct {
	dir   *spillDir
	files []*spillFile
	level int
	// records every partition holds from its start (recDiverge), written
	// first into the files made after them
	markers [][]byte
}

func newPartSet(dir *spillDir, level, n int) *partSet {
	return &partSet{dir: dir, files: make([]*spillFile, n), level: level}
}

// to writes rec to partition i.
func (ps *partSet) to(i int, rec []byte) error {
	f := ps.files[i]
	if f == nil {
		var err error
		if f, err = newSpillFile(ps.dir, 16<<10); err != nil {
			return err
		}
		ps.files[i] = f
		for _, m := range ps.markers {
			if err := f.write(m); err != nil {
				return err
			}
		}
	}
	return f.write(rec)
}

// all writes rec to every partition, made or to be made.
func (ps *partSet) all(rec []byte) error {
	ps.markers = append(ps.markers, slices.Clone(rec))
	var errs []error
	for _, f := range ps.files {
		if f != nil {
			errs = append(errs, f.write(rec))
		}
	}
	return errors.Join(errs...)
}

// write writes a record to partition pk's file among parts.
func (sp *ledgerSpill) write(parts *partSet, kind, view byte, pk, seq, a, b uint64, r *Request) error {
	rec := sp.rec[:recHead+recBody(kind)]
	rec[0], rec[1] = kind, view
	le := binary.LittleEndian
	le.PutUint64(rec[2:], pk)
	le.PutUint64(rec[10:], seq)
	switch kind {
	case recSlot, recArrival:
		encodeRequest(rec[recHead:], r)
	case recMsg:
		le.PutUint64(rec[recHead:], a)
		le.PutUint64(rec[recHead+8:], b)
	case recMore:
		le.PutUint64(rec[recHead:], a)
	}
	return parts.to(partOf(pk, parts.level, len(parts.files)), rec)
}

// all writes a record to every partition.
func (sp *ledgerSpill) all(parts *partSet, kind, view byte) error {
	rec := sp.rec[:recHead]
	clear(rec)
	rec[0], rec[1] = kind, view
	return parts.all(rec)
}

func (lg *Ledger) fail(err error) {
	if lg.err == nil && err != nil {
		lg.err = err
	}
}

// firstParts is how many partitions the first level has: spillParts, or,
// when Grow said how many requests are coming, as many as hold them at
// half the budget each (at least 2). Each partition is a file to make,
// fill and read back, and most stores that spill at all spill little: a
// 1 GB store of 133,633 requests made 64 files of about 2,000 requests,
// where 9 do. A partition that turns out larger than the budget is split
// again, as any is.
func (lg *Ledger) firstParts() int {
	if lg.expect <= 0 {
		return spillParts
	}
	return min(max(2, 2*lg.expect/lg.budget()+1), spillParts)
}

// startSpill writes what the ledger holds into the partitions and frees
// it.
func (lg *Ledger) startSpill() {
	sp := &ledgerSpill{}
	lg.spill = sp
	parts := newPartSet(&sp.dir, 0, lg.firstParts())
	sp.parts = parts
	snapshot := func(view byte, list []Request, d *dedupe) {
		for i := range list {
			r := &list[i]
			if r.Key == 0 {
				// nothing replaces it and no index names it: a winner
				// already (see spillAdd)
				lg.fail(sp.toDirect(int(view), uint64(i), r))
				continue
			}
			lg.fail(sp.write(parts, recSlot, view, spillKey(r, uint64(i)), uint64(i), 0, 0, r))
		}
		for mk, e := range d.byMsg {
			lg.fail(sp.write(parts, recMsg, view, mk, e.key, uint64(e.latest), uint64(e.at), nil))
		}
		for k, at := range d.more {
			lg.fail(sp.write(parts, recMore, view, list[at].MsgKey, k, uint64(at), 0, nil))
		}
	}
	snapshot(0, lg.Requests, &lg.own)
	for line := range lg.copied {
		lg.fail(sp.write(parts, recCopied, 0, line, 0, 0, 0, nil))
	}
	if lg.diverged {
		lg.fail(sp.all(parts, recDiverge, 1))
		snapshot(1, lg.CCUsage, &lg.ccu)
	}
	sp.seq = uint64(max(len(lg.Requests), len(lg.CCUsage)))
	lg.Requests, lg.CCUsage, lg.copied = nil, nil, nil
	lg.own, lg.ccu = dedupe{}, dedupe{}
}

// spillAdd is Add's step for one request once the ledger spills.
func (lg *Ledger) spillAdd(r *Request, copy bool) {
	sp := lg.spill
	if lg.err != nil || !r.Counted && !r.CCUsage {
		return
	}
	if r.Counted != r.CCUsage && !lg.diverged {
		lg.diverged = true
		lg.fail(sp.all(sp.parts, recDiverge, 0))
		// the ccusage view starts as a copy of sessctl's: its direct
		// winners too
		lg.fail(sp.copyDirect())
	}
	if !copy && r.Key == 0 {
		// A request without keys outside a rotated copy wins its slot
		// whatever comes before or after it (first and push keep it), so
		// it goes straight to the winners; only the rotated copies that
		// follow need its line, and get it as a recCopied in the line's
		// partition. Codex's requests are all such: a store of them no
		// longer writes and replays every request.
		if r.line != 0 && !lg.NoCopies {
			lg.fail(sp.write(sp.parts, recCopied, 0, r.line, 0, 0, 0, nil))
		}
		if r.Counted {
			lg.fail(sp.toDirect(0, sp.seq, r))
		}
		if r.CCUsage && lg.diverged {
			lg.fail(sp.toDirect(1, sp.seq, r))
		}
		sp.seq++
		return
	}
	var c byte
	if copy {
		c = 1
	}
	lg.fail(sp.write(sp.parts, recArrival, c, spillKey(r, sp.seq), sp.seq, 0, 0, r))
	sp.seq++
}

// toDirect writes r, the winner of slot seq, to view's direct run.
func (sp *ledgerSpill) toDirect(view int, seq uint64, r *Request) error {
	if sp.direct[view] == nil {
		f, err := newSpillFile(&sp.dir, 64<<10)
		if err != nil {
			return err
		}
		sp.direct[view] = f
	}
	w := sp.win[:]
	binary.LittleEndian.PutUint64(w, seq)
	encodeRequest(w[8:], r)
	return sp.direct[view].write(w)
}

// copyDirect starts the ccusage view's direct run as a copy of sessctl's,
// when the views part after the spill.
func (sp *ledgerSpill) copyDirect() error {
	d := sp.direct[0]
	if d == nil {
		return nil
	}
	if err := d.flush(); err != nil {
		return err
	}
	rd := d.section(0, d.off, 64<<10)
	var w [winnerSize]byte
	for {
		if _, err := io.ReadFull(rd, w[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading spilled usage back: %w", err)
		}
		var r Request
		decodeRequest(w[8:], &r)
		if err := sp.toDirect(1, binary.LittleEndian.Uint64(w[:]), &r); err != nil {
			return err
		}
	}
}

// Spilled reports whether the ledger went past its budget: Requests and
// CCUsage are then not filled, Each and EachCCUsage read the requests
// from disk.
func (lg *Ledger) Spilled() bool { return lg.spill != nil }

// Finish ends the adding: a ledger that spilled replays its partitions.
// Call it before Each and EachCCUsage.
func (lg *Ledger) Finish() error {
	sp := lg.spill
	if sp == nil || sp.out[0] != nil || lg.err != nil {
		return lg.err
	}
	for v := range sp.out {
		f, err := newSpillFile(&sp.dir, 64<<10)
		lg.fail(err)
		sp.out[v] = f
	}
	if lg.err != nil {
		return lg.err
	}
	lg.fail(sp.replayAll(sp.parts, lg.diverged, int64(lg.budget())*(recHead+requestSize)))
	for _, d := range sp.direct {
		if d != nil {
			lg.fail(d.flush())
		}
	}
	sp.parts = nil
	sp.views, sp.places, sp.copied = [2]replayView{}, [2]map[uint64]int32{}, nil
	for v := range sp.out {
		lg.fail(sp.out[v].flush())
	}
	return lg.err
}

// replayAll replays each partition of parts, splitting again those larger
// than limit bytes, and closes them.
func (sp *ledgerSpill) replayAll(parts *partSet, diverged bool, limit int64) error {
	for _, f := range parts.files {
		if f == nil {
			continue
		}
		if err := f.flush(); err != nil {
			return err
		}
		f.w = nil // its buffer is not needed again
	}
	for p, f := range parts.files {
		if f == nil {
			continue
		}
		var err error
		if f.off > limit && parts.level < maxSplits {
			err = sp.split(f, parts.level+1, diverged, limit)
		} else {
			err = sp.replay(f, diverged)
		}
		// the partition is read: its disk space goes back now
		f.f.Close()
		parts.files[p] = nil
		if err != nil {
			return err
		}
	}
	return nil
}

// split writes the records of f into partitions of the next level and
// replays those.
func (sp *ledgerSpill) split(f *spillFile, level int, diverged bool, limit int64) error {
	parts := newPartSet(&sp.dir, level, spillParts)
	rd := f.section(0, f.off, 64<<10)
	var rec [recHead + requestSize]byte
	le := binary.LittleEndian
	for {
		if _, err := io.ReadFull(rd, rec[:recHead]); err != nil {
			if err == io.EOF {
				break
			}
			return fmt.Errorf("reading spilled usage back: %w", err)
		}
		n := recHead + recBody(rec[0])
		if _, err := io.ReadFull(rd, rec[recHead:n]); err != nil {
			return fmt.Errorf("reading spilled usage back: %w", err)
		}
		var err error
		if rec[0] == recDiverge {
			err = parts.all(rec[:n])
		} else {
			err = parts.to(partOf(le.Uint64(rec[2:]), level, len(parts.files)), rec[:n])
		}
		if err != nil {
			return err
		}
	}
	// one key alone fills the partition: splitting again would not help
	for _, p := range parts.files {
		if p != nil && p.off == f.off {
			parts.level = maxSplits
		}
	}
	return sp.replayAll(parts, diverged, limit)
}

// replayView is one view of a partition being replayed: a list as the
// ledger keeps it, each slot with its number.
type replayView struct {
	d    dedupe
	list []Request
	seqs []uint64
}

func (v *replayView) push(r *Request, seq uint64) {
	n := len(v.list)
	v.list = v.d.push(v.list, r)
	if len(v.list) > n {
		v.seqs = append(v.seqs, seq)
	}
}

// reset empties v, keeping its memory for the next partition.
func (v *replayView) reset() {
	v.list, v.seqs = v.list[:0], v.seqs[:0]
	clear(v.d.byMsg)
	clear(v.d.more)
	if v.d.byMsg == nil {
		v.d.byMsg = map[uint64]msgEntry{}
	}
}

func (sp *ledgerSpill) replay(f *spillFile, diverged bool) error {
	rd := f.section(0, f.off, 64<<10)
	views := &sp.views
	views[0].reset()
	views[1].reset()
	// the places of the slots written whole, by number, for the indexes
	// that follow them
	places := &sp.places
	for i := range places {
		if places[i] == nil {
			places[i] = map[uint64]int32{}
		}
		clear(places[i])
	}
	damaged := false
	place := func(v byte, seq uint64) int32 {
		at, ok := places[v][seq]
		// an index to a slot of another partition: two messages whose
		// keys collide, not seen in 64-bit hashes of real ids
		damaged = damaged || !ok
		return at
	}
	if sp.copied == nil {
		sp.copied = map[uint64]struct{}{}
	}
	copied := sp.copied
	clear(copied)
	split := false // the ccusage view is kept apart
	var rec [recHead + requestSize]byte
	var r Request
	le := binary.LittleEndian
	for {
		if _, err := io.ReadFull(rd, rec[:recHead]); err != nil {
			if err == io.EOF {
				break
			}
			return fmt.Errorf("reading spilled usage back: %w", err)
		}
		kind := rec[0]
		if _, err := io.ReadFull(rd, rec[recHead:recHead+recBody(kind)]); err != nil {
			return fmt.Errorf("reading spilled usage back: %w", err)
		}
		view, pk, seq := rec[1]&1, le.Uint64(rec[2:]), le.Uint64(rec[10:])
		v := &views[view]
		switch kind {
		case recSlot:
			decodeRequest(rec[recHead:], &r)
			places[view][seq] = int32(len(v.list))
			v.list = append(v.list, r)
			v.seqs = append(v.seqs, seq)
		case recMsg:
			v.d.byMsg[pk] = msgEntry{latest: place(view, le.Uint64(rec[recHead:])), at: place(view, le.Uint64(rec[recHead+8:])), key: seq}
		case recMore:
			if v.d.more == nil {
				v.d.more = map[uint64]int32{}
			}
			v.d.more[seq] = place(view, le.Uint64(rec[recHead:]))
		case recCopied:
			copied[pk] = struct{}{}
		case recDiverge:
			split = true
			if view == 0 {
				o := &views[0]
				views[1].list = append(views[1].list[:0], o.list...)
				views[1].seqs = append(views[1].seqs[:0], o.seqs...)
				views[1].d = o.d.clone()
			}
		case recArrival:
			decodeRequest(rec[recHead:], &r)
			if r.Counted && first(&copied, &r, view == 1) {
				views[0].push(&r, seq)
			}
			if r.CCUsage && split {
				views[1].push(&r, seq)
			}
		default:
			return errors.New("reading spilled usage back: a damaged record")
		}
	}
	if damaged {
		return errors.New("reading spilled usage back: an index to another partition (a key collision)")
	}
	if split != diverged {
		return errors.New("reading spilled usage back: a partition lost its views")
	}
	sp.maxHeld = max(sp.maxHeld, len(views[0].list)+len(views[1].list))
	var w [winnerSize]byte
	for i := range views {
		if i == 1 && !diverged {
			break
		}
		v := &views[i]
		out := sp.out[i]
		sp.runs[i] = append(sp.runs[i], out.off)
		for j := range v.list {
			le.PutUint64(w[:], v.seqs[j])
			encodeRequest(w[8:], &v.list[j])
			if err := out.write(w[:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Each calls fn with each request sessctl counts, in the order of
// Requests (the request a later duplicate replaced stays in its first
// place). fn may keep nothing of r. After Finish.
func (lg *Ledger) Each(fn func(r *Request) error) error {
	if lg.spill == nil {
		for i := range lg.Requests {
			if err := fn(&lg.Requests[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return lg.spill.merge(0, fn)
}

// EachCCUsage is Each over the requests ccusage would count
// (CCUsageView).
func (lg *Ledger) EachCCUsage(fn func(r *Request) error) error {
	if lg.spill == nil {
		l := lg.CCUsageView()
		for i := range l {
			if err := fn(&l[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if !lg.diverged {
		return lg.spill.merge(0, fn)
	}
	return lg.spill.merge(1, fn)
}

// Diverged reports whether the two views differ (a request counted by one
// and not the other was added).
func (lg *Ledger) Diverged() bool { return lg.diverged }

// Close frees the files of a ledger that spilled.
func (lg *Ledger) Close() error {
	if lg.spill == nil {
		return nil
	}
	return lg.spill.dir.close()
}

// runReader reads one sorted run of winners.
type runReader struct {
	rd  io.Reader
	buf [winnerSize]byte
	seq uint64
	r   Request
}

func (rr *runReader) next() (bool, error) {
	if _, err := io.ReadFull(rr.rd, rr.buf[:]); err != nil {
		if err == io.EOF {
			return false, nil
		}
		return false, fmt.Errorf("reading spilled usage back: %w", err)
	}
	rr.seq = binary.LittleEndian.Uint64(rr.buf[:])
	decodeRequest(rr.buf[8:], &rr.r)
	return true, nil
}

type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge calls fn with view's winners in the order of their numbers.
func (sp *ledgerSpill) merge(view int, fn func(*Request) error) error {
	out := sp.out[view]
	if out == nil {
		return errors.New("usage ledger: Each before Finish")
	}
	runs := sp.runs[view]
	h := make(runHeap, 0, len(runs)+1)
	if d := sp.direct[view]; d != nil && d.off > 0 {
		rr := &runReader{rd: d.section(0, d.off, readBuf(len(runs)+1))}
		ok, err := rr.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, rr)
		}
	}
	for i, from := range runs {
		to := out.off
		if i+1 < len(runs) {
			to = runs[i+1]
		}
		if to == from {
			continue
		}
		rr := &runReader{rd: out.section(from, to, readBuf(len(runs)))}
		ok, err := rr.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, rr)
		}
	}
	return drain(&h, func() *runReader { return h[0] }, func(rr *runReader) *Request { return &rr.r }, fn)
}

// drain is the k-way merge of sorted runs on disk (the ledger's winners,
// Sorter's runs): fn gets the request at the heap's top, whose run then
// moves on to its next request, until every run is read.
func drain[T interface{ next() (bool, error) }](h heap.Interface, top func() T, req func(T) *Request, fn func(*Request) error) error {
	heap.Init(h)
	for h.Len() > 0 {
		t := top()
		if err := fn(req(t)); err != nil {
			return err
		}
		ok, err := t.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

// TakeRequests returns Requests and frees the rest of what the ledger
// holds but its model names (Model): the indexes, the ccusage view. Only
// for a ledger that did not spill, once its views were read.
func (lg *Ledger) TakeRequests() []Request {
	reqs := lg.Requests
	lg.Requests, lg.CCUsage, lg.copied = nil, nil, nil
	lg.own, lg.ccu = dedupe{}, dedupe{}
	return reqs
}

// readBuf is the buffer of each of n runs read at once: 16 KiB, less when
// there are so many that their buffers would pass 1 MiB.
func readBuf(n int) int {
	return max(512, min(16<<10, (1<<20)/max(n, 1)))
}
