package usage

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
// requests, in the same order, as the ledger that never spilled.

// defaultBudget is MemoryBudget's default: about 16 MB of requests and
// their indexes.
const defaultBudget = 1 << 17

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
// is replayed whole in memory: 64 of them hold 64 budgets of requests
// before one exceeds the budget.
const spillParts = 64

// record kinds of a partition
const (
	recSlot    = iota + 1 // view, seq: a request in a view's list (seq = its place)
	recMsg                // view, a = MsgKey, b = latest, c = at, seq = key
	recMore               // view, a = Key, c = at
	recCopied             // a = a line counted (Ledger.copied)
	recDiverge            // view 0: the ccusage view starts as a copy of sessctl's; 1: as what follows
	recArrival            // view = 1 for a rotated copy's request, seq: arrival number
)

const recSize = 2 + 4*8 + requestSize

// winnerSize is a winner on disk: its slot's number, the request.
const winnerSize = 8 + requestSize

type ledgerSpill struct {
	dir   spillDir
	parts []*spillFile
	seq   uint64 // the number of the next arrival
	rec   [recSize]byte
	// after Finish: each view's winners, one sorted run per partition
	out  [2]*spillFile
	runs [2][]int64 // run i is [runs[i], runs[i+1])
}

// partOf is the partition of a key.
func partOf(k uint64, n int) int {
	return int((k * 0x9e3779b97f4a7c15) >> 32 % uint64(n))
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

func (sp *ledgerSpill) write(part int, kind, view byte, seq, a, b, c uint64, r *Request) error {
	rec := sp.rec[:]
	rec[0], rec[1] = kind, view
	le := binary.LittleEndian
	le.PutUint64(rec[2:], seq)
	le.PutUint64(rec[10:], a)
	le.PutUint64(rec[18:], b)
	le.PutUint64(rec[26:], c)
	if r != nil {
		encodeRequest(rec[34:], r)
	} else {
		clear(rec[34:])
	}
	return sp.parts[part].write(rec)
}

func (lg *Ledger) fail(err error) {
	if lg.err == nil && err != nil {
		lg.err = err
	}
}

// startSpill writes what the ledger holds into the partitions and frees
// it.
func (lg *Ledger) startSpill() {
	sp := &ledgerSpill{parts: make([]*spillFile, spillParts)}
	lg.spill = sp
	for i := range sp.parts {
		f, err := newSpillFile(&sp.dir, 16<<10)
		if err != nil {
			lg.fail(err)
			return
		}
		sp.parts[i] = f
	}
	n := len(sp.parts)
	snapshot := func(view byte, list []Request, d *dedupe) {
		for i := range list {
			r := &list[i]
			lg.fail(sp.write(partOf(spillKey(r, uint64(i)), n), recSlot, view, uint64(i), 0, 0, 0, r))
		}
		for mk, e := range d.byMsg {
			lg.fail(sp.write(partOf(mk, n), recMsg, view, e.key, mk, uint64(e.latest), uint64(e.at), nil))
		}
		for k, at := range d.more {
			lg.fail(sp.write(partOf(list[at].MsgKey, n), recMore, view, 0, k, 0, uint64(at), nil))
		}
	}
	snapshot(0, lg.Requests, &lg.own)
	for line := range lg.copied {
		lg.fail(sp.write(partOf(line, n), recCopied, 0, 0, line, 0, 0, nil))
	}
	if lg.diverged {
		for p := range sp.parts {
			lg.fail(sp.write(p, recDiverge, 1, 0, 0, 0, 0, nil))
		}
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
		for p := range sp.parts {
			lg.fail(sp.write(p, recDiverge, 0, 0, 0, 0, 0, nil))
		}
	}
	var c byte
	if copy {
		c = 1
	}
	lg.fail(sp.write(partOf(spillKey(r, sp.seq), len(sp.parts)), recArrival, c, sp.seq, 0, 0, 0, r))
	sp.seq++
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
	for _, f := range sp.parts {
		lg.fail(f.flush())
	}
	for v := range sp.out {
		f, err := newSpillFile(&sp.dir, 64<<10)
		lg.fail(err)
		sp.out[v] = f
	}
	if lg.err != nil {
		return lg.err
	}
	for p, f := range sp.parts {
		lg.fail(sp.replay(f, lg.diverged))
		// the partition is read: its disk space goes back now
		f.f.Close()
		sp.parts[p] = nil
	}
	for v := range sp.out {
		lg.fail(sp.out[v].flush())
	}
	return lg.err
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

func (sp *ledgerSpill) replay(f *spillFile, diverged bool) error {
	rd := f.section(0, f.off, 64<<10)
	var views [2]replayView
	// the places of the slots written whole, by number, for the indexes
	// that follow them
	var places [2]map[uint64]int32
	damaged := false
	place := func(v byte, seq uint64) int32 {
		at, ok := places[v][seq]
		// an index to a slot of another partition: two messages whose
		// keys collide, not seen in 64-bit hashes of real ids
		damaged = damaged || !ok
		return at
	}
	var copied map[uint64]struct{}
	split := false // the ccusage view is kept apart
	var rec [recSize]byte
	var r Request
	le := binary.LittleEndian
	for {
		if _, err := io.ReadFull(rd, rec[:]); err != nil {
			if err == io.EOF {
				break
			}
			return fmt.Errorf("reading spilled usage back: %w", err)
		}
		view, seq := rec[1]&1, le.Uint64(rec[2:])
		a, b, c := le.Uint64(rec[10:]), le.Uint64(rec[18:]), le.Uint64(rec[26:])
		v := &views[view]
		switch rec[0] {
		case recSlot:
			decodeRequest(rec[34:], &r)
			if places[view] == nil {
				places[view] = map[uint64]int32{}
			}
			places[view][seq] = int32(len(v.list))
			v.list = append(v.list, r)
			v.seqs = append(v.seqs, seq)
		case recMsg:
			if v.d.byMsg == nil {
				v.d.byMsg = map[uint64]msgEntry{}
			}
			v.d.byMsg[a] = msgEntry{latest: place(view, b), at: place(view, c), key: seq}
		case recMore:
			if v.d.more == nil {
				v.d.more = map[uint64]int32{}
			}
			v.d.more[a] = place(view, c)
		case recCopied:
			if copied == nil {
				copied = map[uint64]struct{}{}
			}
			copied[a] = struct{}{}
		case recDiverge:
			split = true
			if view == 0 {
				o := &views[0]
				views[1] = replayView{d: o.d.clone(), list: append([]Request(nil), o.list...), seqs: append([]uint64(nil), o.seqs...)}
			}
		case recArrival:
			places = [2]map[uint64]int32{}
			decodeRequest(rec[34:], &r)
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
	h := make(runHeap, 0, len(runs))
	for i, from := range runs {
		to := out.off
		if i+1 < len(runs) {
			to = runs[i+1]
		}
		if to == from {
			continue
		}
		rr := &runReader{rd: out.section(from, to, 4<<10)}
		ok, err := rr.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, rr)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		rr := h[0]
		r := rr.r
		if err := fn(&r); err != nil {
			return err
		}
		ok, err := rr.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
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
