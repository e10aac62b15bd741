// Package usage totals the recorded usage of agent sessions: what the model
// APIs reported for each request, by each format's own rules
// (shared/formats/tokens.md §4). This is the number bills are made of, and
// the one ccusage sums; it is never mixed with estimates (pkg/tokens) or
// with context gauges.
//
// The rules of each agent live in its home (pkg/agent/…): a home that
// records usage implements Scanner, a fast reader of its files built on
// this package's LineReader and Lexer. The package itself holds what is
// common: the requests a scan yields (FileUsage), their de-duplication and
// the two views (sessctl's and ccusage's) over many files (Ledger), and the
// totals (Totals).
package usage

import (
	"sync/atomic"

	"bytes"
	"encoding/binary"
	"github.com/sessctl/sessctl/pkg/usage/price"
	"math/bits"
	"sort"
	"time"

	"github.com/sessctl/sessctl/internal/intern"
	"github.com/sessctl/sessctl/pkg/session"
)

// MaxRequestTokens bounds one usage field of one request. A larger value is
// not a real API report (no model has a window near it) and the line is
// rejected rather than allowed to dwarf every real number.
const MaxRequestTokens = 1_000_000_000

// Request is the recorded usage of one model request. It holds no
// pointers, so that the long lists of them cost the garbage collector
// nothing: its model is an id into the table of the FileUsage that holds
// it, or of the Ledger once added there (FileUsage.ModelID, Ledger.Model).
type Request struct {
	Usage session.Usage
	Model ModelID
	// Time is the request's timestamp in Unix milliseconds, 0 when unknown.
	Time int64
	// Line is the 1-based line number in the file that recorded it.
	Line int32
	// File numbers the file among those added to a Ledger, in the order
	// of the Add calls (0 for the first).
	File int32

	// Key and MsgKey identify a response for de-duplication (Claude Code:
	// message.id+requestId and message.id; Kimi: message_id for both);
	// 0 = none: the request is counted wherever it appears, as ccusage
	// does. Make them with HashKey.
	Key, MsgKey uint64
	// Sidechain marks a subagent's copy of a response; Speed that the
	// usage carried a speed field (ccusage's last tie-break).
	Sidechain, Speed bool
	// CostUSD is the cost the line itself records (older Claude Code
	// versions wrote costUSD), when HasCost: it is the cost of the request,
	// as ccusage's default mode takes it, instead of the price table's.
	CostUSD float64
	HasCost bool
	// Counted says whether sessctl counts the request; CCUsage whether
	// ccusage 20.0.24 would (it silently drops some lines, and counts some
	// that sessctl rejects).
	Counted, CCUsage bool

	// line identifies a counted request without Key by its line's bytes
	// and how many lines with those bytes came before it in its file: a
	// rotated copy of a file repeats both (FileUsage.Add).
	line uint64
}

// Drop is why a line that carries usage is not counted by sessctl, or by
// ccusage.
type Drop struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// FileUsage is what one pass over one file found.
type FileUsage struct {
	Path string
	// Class is what the file is to usage accounting (from the home's
	// Classify).
	Class FileClass
	// Requests in file order (Claude: before de-duplication; Codex: one per
	// counted change of the running total; Kimi: one per StatusUpdate).
	Requests []Request
	Lines    int // lines read
	// UsageLines counts lines that carried recorded usage.
	UsageLines int
	// Rejected are lines with usage that sessctl did not count (the first
	// maxDrops of them; RejectedCount has them all). Corrupt lines count
	// here too when they looked like usage records.
	Rejected      []Drop
	RejectedCount int
	// CCUsageOnly counts lines sessctl rejects and ccusage would count;
	// SessctlOnly lines sessctl counts and ccusage would silently drop (the
	// first maxDrops are listed in SessctlOnlyLines).
	CCUsageOnly      int
	SessctlOnly      int
	SessctlOnlyLines []Drop
	// Corrupt counts unusable lines (torn, not JSON) among those inspected.
	Corrupt int
	// PerResponse counts the requests sessctl took from per-response usage
	// records (Codex 0.169's token_usage_record) rather than from the
	// cumulative counters ccusage reads. PerResponseView is the file's total
	// by that method (the records, and the counter changes no record
	// covers), CumulativeView its total by the counters alone: where they
	// differ, counter events were lost.
	PerResponse                     int
	PerResponseView, CumulativeView int64
	// LastActivity is the newest timestamp of a counted request (Unix ms).
	LastActivity int64
	// Context is the latest context gauge the file recorded (-1 = none),
	// and ContextSource the field it came from: Codex
	// last_token_usage.total_tokens, Kimi StatusUpdate.context_tokens.
	Context       int64
	ContextSource string
	// Window is the context window the file recorded, 0 when none.
	Window int64
	// CWD is the working directory the file names, when the session's path
	// does not say (Codex session_meta).
	CWD string

	models modelTable
	lines  map[uint64]uint32 // line hash -> times seen, for Request.line
	stream func(*FileUsage)  // Reader.Stream
}

// StreamPart is how many requests a streaming read (Reader.Stream) hands
// over at a time (a variable for tests).
var StreamPart = 8192

const maxDrops = 20

// ModelID names a model in a table of names: a FileUsage's, or a Ledger's
// once the request was added to it. 0 is no model ("").
type ModelID int32

// modelTable interns model names.
type modelTable = intern.Table[ModelID]

// ModelID returns the id of a model name in fu's table, adding it when new.
func (fu *FileUsage) ModelID(name string) ModelID { return fu.models.ID(name) }

// Model returns the model name of one of fu's requests.
func (fu *FileUsage) Model(r *Request) string { return fu.models.Name(r.Model) }

// Reject notes a line with usage that sessctl does not count, and why.
func (fu *FileUsage) Reject(line int, reason string) {
	fu.RejectedCount++
	if len(fu.Rejected) < maxDrops {
		fu.Rejected = append(fu.Rejected, Drop{line, reason})
	}
}

// CountedNotByCCUsage notes a line that sessctl counts and ccusage would
// drop silently, and why ccusage drops it.
func (fu *FileUsage) CountedNotByCCUsage(line int, reason string) {
	fu.SessctlOnly++
	if len(fu.SessctlOnlyLines) < maxDrops {
		fu.SessctlOnlyLines = append(fu.SessctlOnlyLines, Drop{line, reason})
	}
}

// Add appends a request; line is the line that recorded it.
func (fu *FileUsage) Add(r Request, line []byte) {
	if r.Counted && r.Time > fu.LastActivity {
		fu.LastActivity = r.Time
	}
	if r.Counted && r.Key == 0 && line != nil {
		// the k-th line with these bytes in this file: lines a client
		// writes twice stay two requests (ccusage counts both), and a
		// rotated copy's k-th is the same request
		// HashKey(line, nil, false), and HashKey(line, n, true) from the
		// same hash of the line: the line is hashed once
		h0 := mixBytes(hashSeed, line)
		h := nonZero(h0)
		if fu.lines == nil {
			fu.lines = map[uint64]uint32{}
		}
		// one map operation for a line not seen before (nearly every
		// line): it is new when the map grew
		seen := len(fu.lines)
		fu.lines[h]++
		k := uint32(0)
		if len(fu.lines) == seen {
			k = fu.lines[h] - 1
		}
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], k)
		r.line = nonZero(mixBytes(h0^hashSecond, n[:]))
	}
	fu.Requests = append(fu.Requests, r)
	if fu.stream != nil && len(fu.Requests) >= StreamPart {
		fu.stream(fu)
		fu.Requests = fu.Requests[:0]
	}
}

// Ledger totals requests over many files, applying Claude Code's
// de-duplication (one count per message.id + requestId across all files,
// the largest usage wins). Add files in a stable order (sorted by path, as
// ccusage does) to get the same winners on every run. Requests without a
// key (Codex, clawdcode) are kept as they are. The ledger copies what it
// keeps, so a FileUsage's Requests can be dropped after Add.
//
// Rotated copies (FileClass Copy) are in sessctl's view and not in
// ccusage's, which does not read them: a reverted session's spend stays
// counted. A request a copy repeats is counted once: by its keys when it
// has them, else by its line (a copy repeats the line byte for byte). Add
// the copies after the files they copy.
//
// Its memory is bounded: past Budget requests it spills to disk
// (ledger_spill.go) and gives the same requests, in the same order,
// through Each and EachCCUsage after Finish. Close frees its files.
type Ledger struct {
	files int32 // files added so far
	// Requests are counted by sessctl, de-duplicated.
	Requests []Request
	// CCUsage holds the requests ccusage 20.0.24 would count, de-duplicated
	// by its rules over the lines it does not drop, once the two views
	// differ; use CCUsageView.
	CCUsage []Request

	own, ccu dedupe
	copied   map[uint64]struct{} // Request.line of the requests counted so far
	models   modelTable
	remap    []ModelID // file model id -> ledger model id, during Add
	// the price of each model id, looked up once (Tally)
	priced []*price.Model
	looked []bool
	// diverged is set once a line was counted by one view and not the
	// other; until then CCUsage is Requests and is not kept twice.
	diverged bool

	// Budget is how many requests the ledger holds in memory (both views)
	// before it spills to disk (0: MemoryBudget()). Past it, Requests and
	// CCUsage are no longer filled: Each and EachCCUsage give the
	// requests, after Finish.
	Budget int
	// NoCopies says that no rotated copy (a file of class Copy) will be
	// added: a spilling ledger then keeps no record of the lines of
	// requests without keys, which only copies are checked against.
	NoCopies bool
	spill    *ledgerSpill
	expect   int   // the requests Grow said are coming (firstParts)
	err      error // the first error of spilling, returned by Finish
}

// dedupe indexes a request list by its two keys. Both indexes are always
// set together to the same place, so one map keyed by message.id holds
// both: the place of the message's latest request (the message index),
// and the key and place of its first key (the exact index). A message
// seen with further requestIds keeps those in more. One map look-up per
// request instead of two, and a quarter less memory.
type dedupe struct {
	byMsg map[uint64]msgEntry
	more  map[uint64]int32 // exact index entries not in byMsg
	hint  int              // the size byMsg is made with (Ledger.Grow)
}

type msgEntry struct {
	latest, at int32 // message index; exact index of key
	key        uint64
}

// exact returns the place of the request with key, if any.
func (d *dedupe) exact(e msgEntry, found bool, key uint64) (int32, bool) {
	if found && e.key == key {
		return e.at, true
	}
	at, ok := d.more[key]
	return at, ok
}

// set indexes place at under both keys of r.
func (d *dedupe) set(e msgEntry, found bool, r *Request, at int32) {
	switch {
	case !found:
		e = msgEntry{key: r.Key, at: at}
	case e.key == r.Key:
		e.at = at
	default:
		if d.more == nil {
			d.more = map[uint64]int32{}
		}
		d.more[r.Key] = at
	}
	e.latest = at
	d.byMsg[r.MsgKey] = e
}

// Add adds one file's requests and then releases them from fu. It returns
// the list it released, which the caller may give to a Reader's Reuse.
// Requests of a file that ccusage does not read (fu.Class) are not in the
// ccusage view.
func (lg *Ledger) Add(fu *FileUsage) []Request {
	lg.files++
	lg.add(fu)
	reqs := fu.Requests
	fu.Requests = nil
	return reqs
}

// BeginFile starts a file whose requests come in parts (AddPart): a file
// read with Reader.Stream.
func (lg *Ledger) BeginFile() { lg.files++ }

// AddPart adds the requests fu holds now to the file BeginFile started,
// in their order; the caller may reuse fu.Requests after it.
func (lg *Ledger) AddPart(fu *FileUsage) { lg.add(fu) }

// TallyFile counts fu's requests straight into ty, in their order, when
// nothing could make the ledger count them otherwise: no rotated copy
// will come (NoCopies), none of them has a key (so none replaces or is
// replaced by another) and the two views count each of them alike. Then
// the file takes its number as with Add, the ledger keeps none of its
// requests (Each and EachCCUsage do not give them) and TallyFile returns
// fu's list, which the caller may give to a Reader's Reuse; otherwise it
// does nothing and returns nil, ok false.
//
// A session of that one file then has in ty the same totals, summed in
// the same order, as Add and Each would give it, without the requests
// being held or, past the budget, written to disk and read back (most of
// the serial tail of a Codex run: every Codex request is without keys).
// The caller keeps ty as the session's tally for both views.
func (lg *Ledger) TallyFile(ty *Tally, fu *FileUsage) (reqs []Request, ok bool) {
	if !lg.NoCopies || fu.Class&Copy != 0 {
		return nil, false
	}
	ccusage := fu.Class&CCUsage != 0
	for i := range fu.Requests {
		r := &fu.Requests[i]
		if r.Key != 0 || r.MsgKey != 0 || r.Counted != (r.CCUsage && ccusage) {
			return nil, false
		}
	}
	lg.files++
	fi := lg.takeModels(fu)
	for i := range fu.Requests {
		r := &fu.Requests[i]
		lg.number(r, fi, ccusage)
		if r.Counted {
			lg.Tally(ty, r)
		}
	}
	reqs, fu.Requests = fu.Requests, nil
	return reqs, true
}

// takeModels maps the model ids of fu, the file added last, to the
// ledger's (number) and returns the file's number.
func (lg *Ledger) takeModels(fu *FileUsage) int32 {
	lg.remap = append(lg.remap[:0], 0)
	for _, name := range fu.models.Names() {
		lg.remap = append(lg.remap, lg.models.ID(name))
	}
	return lg.files - 1
}

// number gives r, of file fi, the file's number and the ledger's model id,
// and leaves it out of the ccusage view when ccusage does not read its
// file.
func (lg *Ledger) number(r *Request, fi int32, ccusage bool) {
	r.File = fi
	if !ccusage {
		r.CCUsage = false
	}
	if int(r.Model) < len(lg.remap) && r.Model > 0 {
		r.Model = lg.remap[r.Model]
	} else {
		r.Model = 0
	}
}

// add adds fu's requests to the file added last.
func (lg *Ledger) add(fu *FileUsage) {
	fi := lg.takeModels(fu)
	ccusage := fu.Class&CCUsage != 0
	for i := range fu.Requests {
		r := &fu.Requests[i]
		lg.number(r, fi, ccusage)
		if lg.spill != nil {
			lg.spillAdd(r, fu.Class&Copy != 0)
			continue
		}
		if r.Counted != r.CCUsage && !lg.diverged {
			lg.diverged = true
			lg.CCUsage = append([]Request(nil), lg.Requests...)
			lg.ccu = lg.own.clone()
		}
		if r.Counted && lg.first(r, fu.Class&Copy != 0) {
			lg.Requests = lg.own.push(lg.Requests, r)
		}
		if r.CCUsage && lg.diverged {
			lg.CCUsage = lg.ccu.push(lg.CCUsage, r)
		}
		if len(lg.Requests)+len(lg.CCUsage) > lg.budget() {
			lg.startSpill()
		}
	}
}

// first reports whether a request is not one a rotated copy repeats: a
// request without keys is known by its line; in a copy, a line seen before
// is a request counted already.
func (lg *Ledger) first(r *Request, copy bool) bool {
	if lg.NoCopies && !copy {
		// outside a copy a request is always first, and the lines are
		// kept only for the copies: with none to come, none is kept (a
		// Codex store's every request went into this set, and past the
		// budget into the partitions, for nothing)
		return true
	}
	if lg.copied == nil && r.Key == 0 && r.line != 0 {
		lg.copied = make(map[uint64]struct{}, lg.own.hint)
	}
	return first(&lg.copied, r, copy)
}

// first is Ledger.first over the set of lines counted so far.
func first(copied *map[uint64]struct{}, r *Request, copy bool) bool {
	if r.Key != 0 || r.line == 0 {
		return true
	}
	if *copied == nil {
		*copied = map[uint64]struct{}{}
	}
	if _, seen := (*copied)[r.line]; seen {
		return !copy
	}
	(*copied)[r.line] = struct{}{}
	return true
}

// Grow makes room for about n more requests (a hint: it saves growing the
// tables one doubling at a time). Room in the list that is never used costs
// address space more than memory; the index is made for half of it.
func (lg *Ledger) Grow(n int) {
	lg.expect += max(n, 0)
	n = min(n, lg.budget())
	if n <= 0 || lg.spill != nil {
		return
	}
	// one more than asked: the request that passes the budget is pushed
	// before the ledger spills, and without it that push copied the whole
	// list into one twice its size, to be dropped at once (3 MB copied
	// and 6 MB of fresh pages touched on every store past the budget)
	lg.Requests = append(make([]Request, 0, len(lg.Requests)+n+1), lg.Requests...)
	// the index a request list uses is made at its first request, at this
	// size: requests with keys (Claude Code) use only the message index,
	// those without (Codex, clawdcode) only the set of lines, and a map
	// made and never used costs its pages all the same
	lg.own.hint = n / 2
}

// Model returns the model name of one of lg's requests.
func (lg *Ledger) Model(r *Request) string { return lg.models.Name(r.Model) }

// CCUsageView returns the requests ccusage would count (before the
// ledger spills; then EachCCUsage gives them).
func (lg *Ledger) CCUsageView() []Request {
	if !lg.diverged {
		return lg.Requests
	}
	return lg.CCUsage
}

func (d *dedupe) clone() dedupe {
	c := dedupe{byMsg: make(map[uint64]msgEntry, len(d.byMsg))}
	for k, v := range d.byMsg {
		c.byMsg[k] = v
	}
	if d.more != nil {
		c.more = make(map[uint64]int32, len(d.more))
		for k, v := range d.more {
			c.more[k] = v
		}
	}
	return c
}

// push adds r to list unless it duplicates a request already there, in
// which case the better of the two stays (ccusage's push_deduped_entry):
// the one not on a sidechain, else the larger total, else the one with a
// speed field.
func (d *dedupe) push(list []Request, r *Request) []Request {
	if r.Key == 0 {
		return append(list, *r)
	}
	if d.byMsg == nil {
		d.byMsg = make(map[uint64]msgEntry, d.hint)
	}
	e, found := d.byMsg[r.MsgKey]
	at, ok := d.exact(e, found, r.Key)
	// sidechain logs replay parent messages under a new requestId
	if !ok && found && (r.Sidechain || list[e.latest].Sidechain) {
		at, ok = e.latest, true
	}
	if ok {
		if better(r, &list[at]) {
			list[at] = *r
			d.set(e, found, r, at)
		}
		return list
	}
	d.set(e, found, r, int32(len(list)))
	return append(list, *r)
}

func better(c, e *Request) bool {
	if c.Sidechain != e.Sidechain {
		return e.Sidechain
	}
	if ct, et := c.Usage.Total(), e.Usage.Total(); ct != et {
		return ct > et
	}
	return c.Speed && !e.Speed
}

// Totals is recorded usage summed, with a breakdown by model.
type Totals struct {
	// View says which count the numbers are: ViewSessctl or ViewCCUsage.
	View View `json:"view,omitempty"`
	session.Usage
	Requests int     `json:"requests"`
	ByModel  ByModel `json:"by_model,omitempty"`
	// LastActivity is the newest request time.
	LastActivity time.Time `json:"last_activity,omitzero"`
	// CostUSD is what the requests cost by the price table (Prices), each
	// request priced on its own (long-context tiers are per request). The
	// tokens of models the table has no price for are in Unpriced, by
	// model, and not in CostUSD: never counted as free.
	CostUSD  float64          `json:"cost_usd"`
	Unpriced map[string]int64 `json:"unpriced,omitempty"`
}

// prices is the table Totals price requests by.
var prices atomic.Pointer[price.Table]

func init() { prices.Store(price.Default()) }

// Prices is the price table in use: the embedded one unless SetPrices.
func Prices() *price.Table { return prices.Load() }

// SetPrices replaces the price table (--prices FILE).
func SetPrices(t *price.Table) {
	prices.Store(t)
	pricesSet.Store(true)
}

// pricesSet says SetPrices was called: totals may be priced by another
// table than the embedded one.
var pricesSet atomic.Bool

// PricesSet reports whether SetPrices replaced the embedded price table.
func PricesSet() bool { return pricesSet.Load() }

// cost prices request r of model m into t.
func (t *Totals) cost(m string, r *Request, pm *price.Model) {
	addCost(&t.CostUSD, &t.Unpriced, m, r, pm)
}

// addCost adds the price of request r of model m at prices pm to cost, or
// its tokens to unpriced by model when it has none (Totals.cost, and a
// Tally's own sums).
func addCost(cost *float64, unpriced *map[string]int64, m string, r *Request, pm *price.Model) {
	c, ok := r.cost(pm)
	if !ok {
		if *unpriced == nil {
			*unpriced = map[string]int64{}
		}
		if m == "" {
			m = "(unknown)"
		}
		(*unpriced)[m] += r.Usage.Total()
		return
	}
	*cost += c
}

// cost is what request r costs at the prices pm (nil: none known): the
// cost its line recorded, else the price table's; false when it has tokens
// and no price.
func (r *Request) cost(pm *price.Model) (float64, bool) {
	u := r.Usage
	if r.HasCost {
		return r.CostUSD, true
	}
	if u.Total() == 0 {
		return 0, true
	}
	if pm == nil {
		return 0, false
	}
	return pm.Cost(price.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead,
		CacheWrite: u.CacheCreation - u.CacheCreation1h, CacheWrite1h: u.CacheCreation1h}), true
}

// Cost is what the request costs as Totals counts it, model being its
// model's name: false when the price table has no price for a request
// with tokens (Totals puts those in Unpriced, never in CostUSD).
func (r *Request) Cost(model string) (float64, bool) { return r.cost(priceOf(model)) }

// LineID identifies a request without Key by its line: a hash of the
// line's bytes and of how many lines with the same bytes came before it in
// its file (0 when the request has a Key or was added without its line).
// It depends on the file's content only, never on its path.
func (r *Request) LineID() uint64 { return r.line }

// priceOf looks model m up in the table in use (nil: unpriced).
func priceOf(m string) *price.Model {
	if pm, ok := Prices().Lookup(m); ok {
		return &pm
	}
	return nil
}

// View names one of the two counts of recorded usage.
type View string

// The two views of recorded usage (docs/stats.md).
const (
	// ViewSessctl is sessctl's count: every file of a session that records
	// usage, rotated copies and subagents included, each request once, by
	// each format's own rules.
	ViewSessctl View = "sessctl"
	// ViewCCUsage is what ccusage 20.0.24 counts for the same sessions: the
	// *.jsonl files only (no rotations), by its rules, which drop some
	// lines silently and keep some that sessctl rejects.
	ViewCCUsage View = "ccusage 20.0.24"
)

// Add counts one request of the given model.
func (t *Totals) Add(r *Request, model string) {
	t.Usage = t.Usage.Add(r.Usage)
	t.Requests++
	t.cost(model, r, priceOf(model))
	if r.Usage.Total() > 0 || r.Usage.Reasoning > 0 {
		t.addModel(model, r.Usage)
	}
	if r.Time > 0 {
		if ts := time.UnixMilli(r.Time).UTC(); ts.After(t.LastActivity) {
			t.LastActivity = ts
		}
	}
}

// addModel adds u to the row of model m ("(unknown)" when m is empty).
func (t *Totals) addModel(m string, u session.Usage) {
	if m == "" {
		m = "(unknown)"
	}
	t.ByModel.add(m, u)
}

// Totals counts the requests reqs of lg: the same as Totals.Add for each
// of them, with one map update per model rather than one per request.
func (lg *Ledger) Totals(reqs []*Request) Totals {
	var ty Tally
	for _, r := range reqs {
		lg.Tally(&ty, r)
	}
	return lg.Total(&ty)
}

// Tally is Ledger.Totals taken one request at a time (Ledger.Tally), for
// requests that stream by: Ledger.Total(&ty) is Ledger.Totals of the
// requests tallied, in the order tallied.
//
// A run over many sessions keeps one for each (pkg/stats), so it is small:
// the models it saw are a short list, not a slot for each model of the
// ledger (100,000 sessions of a store with six models held 23 MB of them).
type Tally struct {
	usage    session.Usage
	requests int
	cost     float64
	unpriced map[string]int64
	models   []modelTally // the models of requests with tokens, in order of first use
	last     int64
}

type modelTally struct {
	id ModelID
	u  session.Usage
}

// Tally adds request r of lg to ty.
func (lg *Ledger) Tally(ty *Tally, r *Request) {
	ty.usage = ty.usage.Add(r.Usage)
	ty.requests++
	for int(r.Model) >= len(lg.priced) {
		lg.priced, lg.looked = append(lg.priced, nil), append(lg.looked, false)
	}
	if !lg.looked[r.Model] {
		lg.priced[r.Model], lg.looked[r.Model] = priceOf(lg.models.Name(r.Model)), true
	}
	addCost(&ty.cost, &ty.unpriced, lg.models.Name(r.Model), r, lg.priced[r.Model])
	if r.Usage.Total() > 0 || r.Usage.Reasoning > 0 {
		k := 0
		for k < len(ty.models) && ty.models[k].id != r.Model {
			k++
		}
		if k == len(ty.models) {
			ty.models = append(ty.models, modelTally{id: r.Model})
		}
		ty.models[k].u = ty.models[k].u.Add(r.Usage)
	}
	ty.last = max(ty.last, r.Time)
}

// Total returns the totals of the requests tallied in ty.
func (lg *Ledger) Total(ty *Tally) Totals {
	t := Totals{Usage: ty.usage, Requests: ty.requests, CostUSD: ty.cost}
	if ty.unpriced != nil {
		// each Totals its own maps
		t.Unpriced = make(map[string]int64, len(ty.unpriced))
		for m, n := range ty.unpriced {
			t.Unpriced[m] = n
		}
	}
	for _, m := range ty.models {
		t.addModel(lg.models.Name(m.id), m.u)
	}
	if ty.last > 0 {
		t.LastActivity = time.UnixMilli(ty.last).UTC()
	}
	return t
}

// Merge adds another Totals.
func (t *Totals) Merge(o Totals) {
	if t.View == "" {
		t.View = o.View
	}
	t.Usage = t.Usage.Add(o.Usage)
	t.Requests += o.Requests
	for _, e := range o.ByModel {
		t.addModel(e.Model, e.Usage)
	}
	t.CostUSD += o.CostUSD
	for m, n := range o.Unpriced {
		if t.Unpriced == nil {
			t.Unpriced = map[string]int64{}
		}
		t.Unpriced[m] += n
	}
	if o.LastActivity.After(t.LastActivity) {
		t.LastActivity = o.LastActivity
	}
}

// Models returns the model names of t, largest total first.
func (t *Totals) Models() []string {
	var ms []string
	for _, e := range t.ByModel {
		ms = append(ms, e.Model)
	}
	sort.Slice(ms, func(i, j int) bool {
		ti, tj := t.ByModel.Get(ms[i]).Total(), t.ByModel.Get(ms[j]).Total()
		if ti != tj {
			return ti > tj
		}
		return ms[i] < ms[j]
	})
	return ms
}

// ParseMillis returns a timestamp in Unix milliseconds, with a fast path
// for the form every client writes (2026-11-22T02:58:38.406Z).
func ParseMillis(b []byte) (int64, error) {
	if len(b) == 24 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[23] == 'Z' {
		num := func(i, j int) int {
			n := 0
			for _, c := range b[i:j] {
				if c < '0' || c > '9' {
					return -1
				}
				n = n*10 + int(c-'0')
			}
			return n
		}
		y, mo, d, h, mi, se, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo) && h >= 0 && h < 24 && mi >= 0 && mi < 60 && se >= 0 && se < 60 && ms >= 0 {
			return daysFromCivil(y, mo, d)*86_400_000 + int64(h)*3_600_000 + int64(mi)*60_000 + int64(se)*1000 + int64(ms), nil
		}
	}
	return ParseRFC3339(string(b))
}

// daysIn is the number of days of month m (1-12) of year y.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's days_from_civil), for
// y >= 0: what time.Date would give, without its normalising.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	doy := (153*((m+9)%12)+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// ParseRFC3339 returns a timestamp in Unix milliseconds.
func ParseRFC3339(s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

// LooksCorrupt is the cheap test applied to lines the fast path does not
// decode: a non-blank line that does not start with '{' and end with '}',
// or a torn last line that is not valid JSON. It misses damage inside a
// well-bracketed line; the single-session view validates every line.
func LooksCorrupt(line []byte, torn bool) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return false
	}
	if t[0] != '{' || t[len(t)-1] != '}' {
		return true
	}
	return torn && !ValidLine(line)
}

// HashKey makes a Request key from an id and, when hasReq, a second id (a
// request id: an empty one is not a missing one). Eight bytes at a time,
// each word mixed in by a 64x64->128 multiply (as wyhash does); a collision
// would merge two requests, and at 64 bits that needs billions of them. The
// key is never 0.
func HashKey(id, req []byte, hasReq bool) uint64 {
	k := mixBytes(hashSeed, id)
	if hasReq {
		k = mixBytes(k^hashSecond, req)
	}
	return nonZero(k)
}

// HashKey's constants: the seed, and what separates the second id.
const hashSeed, hashSecond = 0x9e3779b97f4a7c15, 0xff51afd7ed558ccd

// nonZero is k, or 1 for 0: a key is never 0.
func nonZero(k uint64) uint64 {
	if k == 0 {
		return 1
	}
	return k
}

func mixBytes(h uint64, b []byte) uint64 {
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	h ^= uint64(len(b)) * m1
	for len(b) >= 8 {
		hi, lo := bits.Mul64(h^binary.LittleEndian.Uint64(b), m2)
		h = hi ^ lo
		b = b[8:]
	}
	var t uint64
	for i, c := range b {
		t |= uint64(c) << (8 * i)
	}
	hi, lo := bits.Mul64(h^t^m1, m2)
	return hi ^ lo
}
