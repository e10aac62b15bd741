package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sessctl/sessctl/internal/binenc"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Spool keeps the results of a run over many sessions on disk as they come
// (ConsumptionEach), and in memory only what orders a report by session:
// each session's agent, id and total, and where its result is. A result is
// about a kilobyte in memory (its totals by model, its files, its lines),
// and a report over 100,000 sessions held them all to its end; a Spool
// holds about 40 bytes and the id of each.
//
// The first SpoolMemory bytes of results stay in memory: a small report
// touches no disk, and works where $TMPDIR cannot be written to.
type Spool struct {
	file   *usage.SpillFile
	mem    []byte // the results, until they pass SpoolMemory
	onDisk bool   // since then, in file (mem's bytes first)
	buf    []byte
	at     []int64 // where each result starts; it ends where the next starts
	end    int64
	total  []int64
	agent  []uint8 // in agents
	id     []string
	agents []session.Agent
}

// SpoolMemory is how many bytes of results a Spool holds in memory before
// it writes them to disk (about 4,000 sessions). A variable for tests.
var SpoolMemory = 2 << 20

// NewSpool makes an empty Spool. Close frees its file.
func NewSpool() *Spool { return &Spool{file: usage.NewSpillFile()} }

// Add keeps su, the next session of the report.
func (sp *Spool) Add(su *SessionUsage) error {
	// the agent first: a session refused leaves nothing written
	a := slices.Index(sp.agents, su.Agent)
	if a < 0 && len(sp.agents) == math.MaxUint8 {
		return errors.New("too many agents")
	}
	sp.buf = appendSessionUsage(sp.buf[:0], su)
	at, err := sp.write(sp.buf)
	if err != nil {
		return err
	}
	if a < 0 {
		a = len(sp.agents)
		sp.agents = append(sp.agents, su.Agent)
	}
	sp.at = append(sp.at, at)
	sp.end = at + int64(len(sp.buf))
	sp.total = append(sp.total, su.Totals.Total())
	sp.agent = append(sp.agent, uint8(a))
	sp.id = append(sp.id, su.ID)
	return nil
}

// write keeps b and returns where it starts.
func (sp *Spool) write(b []byte) (int64, error) {
	if !sp.onDisk && len(sp.mem)+len(b) <= SpoolMemory {
		sp.mem = append(sp.mem, b...)
		return int64(len(sp.mem) - len(b)), nil
	}
	if !sp.onDisk {
		if _, err := sp.file.Write(sp.mem); err != nil {
			return 0, err
		}
		sp.mem, sp.onDisk = nil, true
	}
	return sp.file.Write(b)
}

// Len is the number of sessions kept.
func (sp *Spool) Len() int { return len(sp.at) }

// Session reads back session k (in the order of Add). It is a new value,
// the caller's.
func (sp *Spool) Session(k int) (*SessionUsage, error) {
	b, err := sp.record(k)
	if err != nil {
		return nil, err
	}
	su, err := readSessionUsage(b)
	if err != nil {
		return nil, fmt.Errorf("reading back a session's usage: %w", err)
	}
	return su, nil
}

// Totals reads back the totals of session k alone (a row by session needs
// no more; the table asks for each row twice, to measure and to draw, and
// decoding the whole session each time doubled a warm run's time).
func (sp *Spool) Totals(k int) (usage.Totals, error) {
	b, err := sp.record(k)
	if err != nil {
		return usage.Totals{}, err
	}
	d := binenc.NewDecoder(b, errSpooled)
	d.Str() // agent
	d.Str() // id
	var t usage.Totals
	getTotals(&d, &t)
	if d.Err != nil {
		return usage.Totals{}, fmt.Errorf("reading back a session's usage: %w", d.Err)
	}
	return t, nil
}

// record returns the bytes of session k.
func (sp *Spool) record(k int) ([]byte, error) {
	end := sp.end
	if k+1 < len(sp.at) {
		end = sp.at[k+1]
	}
	if !sp.onDisk {
		return sp.mem[sp.at[k]:end], nil
	}
	b := make([]byte, end-sp.at[k])
	if err := sp.file.ReadAt(b, sp.at[k]); err != nil {
		return nil, err
	}
	return b, nil
}

// Close frees the file; the Spool gives nothing more.
func (sp *Spool) Close() error {
	sp.mem = nil
	return sp.file.Close()
}

// key is session k's key in a report by session (sessionKey).
func (sp *Spool) key(k int) string { return sp.agentOf(k) + ":" + sp.id[k] }

// agentOf is the agent of session k.
func (sp *Spool) agentOf(k int) string { return string(sp.agents[sp.agent[k]]) }

// cmpKey compares the keys of sessions a and b without making them.
func (sp *Spool) cmpKey(a, b int) int {
	aa, ab := sp.agents[sp.agent[a]], sp.agents[sp.agent[b]]
	if aa == ab {
		return strings.Compare(sp.id[a], sp.id[b])
	}
	if strings.HasPrefix(string(aa), string(ab)) || strings.HasPrefix(string(ab), string(aa)) {
		return strings.Compare(sp.key(a), sp.key(b))
	}
	return strings.Compare(string(aa), string(ab))
}

// Groups is Group by session of the sessions kept: the same rows in the
// same order. A row is read back from disk when asked for (Groups.Row).
func (sp *Spool) Groups() (*Groups, error) { return sp.groups(nil) }

// groups is Groups of sessions whose places are place (by number; nil:
// the order of Add).
func (sp *Spool) groups(place []int32) (*Groups, error) {
	g := &Groups{sp: sp}
	if err := orderSessions(g, spoolSet{sp, place}); err != nil {
		return nil, err
	}
	return g, nil
}

// spoolSet is the sessions of a Spool as a sessionSet.
type spoolSet struct {
	sp     *Spool
	places []int32
}

func (s spoolSet) place(k int) int {
	if s.places == nil {
		return k
	}
	return int(s.places[k])
}

func (s spoolSet) len() int                           { return s.sp.Len() }
func (s spoolSet) key(k int) string                   { return s.sp.key(k) }
func (s spoolSet) cmpKey(a, b int) int                { return s.sp.cmpKey(a, b) }
func (s spoolSet) agent(k int) string                 { return s.sp.agentOf(k) }
func (s spoolSet) total(k int) int64                  { return s.sp.total[k] }
func (s spoolSet) totals(k int) (usage.Totals, error) { return s.sp.Totals(k) }

// A SessionUsage on disk (appendSessionUsage), in binenc's layout: its
// fields in order, a list that may be nil its length plus one (0: nil), a
// float its bits, a time its MarshalBinary, a *Totals a number (0: nil,
// 1: one follows, 2: AsCCUsage is Totals in the other view: most
// sessions). TestSpoolRoundTrip fails when a field is added to
// SessionUsage and not here.

var errSpooled = errors.New("not a session's usage as the spool writes it")

func appendSessionUsage(b []byte, su *SessionUsage) []byte {
	e := binenc.Encoder{B: b}
	e.Str(string(su.Agent))
	e.Str(su.ID)
	putTotals(&e, &su.Totals) // first after the names: Spool.Totals reads no further
	e.Str(su.Project)
	e.Str(su.CWD)
	e.Str(su.Main)
	putStrings(&e, su.Files)
	putTotalsRef(&e, su.InRotations, nil)
	putTotalsRef(&e, su.AsCCUsage, &su.Totals)
	e.Int(int64(su.PerResponse))
	e.Int(su.PerResponseView)
	e.Int(su.CumulativeView)
	e.Str(su.ViewsDiffer)
	e.Int(int64(su.UsageLines))
	e.Int(int64(su.Rejected))
	putDrops(&e, su.RejectedLines)
	e.Int(int64(su.SessctlOnly))
	putDrops(&e, su.SessctlLines)
	e.Int(int64(su.CCUsageOnly))
	e.Int(int64(su.Corrupt))
	putStrings(&e, su.Errors)
	e.Int(su.Context)
	e.Str(su.ContextSource)
	e.Int(su.Window)
	if su.ccusageView {
		e.Uint(1)
	} else {
		e.Uint(0)
	}
	return e.B
}

func readSessionUsage(b []byte) (*SessionUsage, error) {
	d := binenc.NewDecoder(b, errSpooled)
	su := &SessionUsage{}
	su.Agent = session.Agent(d.Str())
	su.ID = d.Str()
	getTotals(&d, &su.Totals)
	su.Project = d.Str()
	su.CWD = d.Str()
	su.Main = d.Str()
	su.Files = getStrings(&d)
	su.InRotations = getTotalsRef(&d, nil)
	su.AsCCUsage = getTotalsRef(&d, &su.Totals)
	su.PerResponse = int(d.Int())
	su.PerResponseView = d.Int()
	su.CumulativeView = d.Int()
	su.ViewsDiffer = d.Str()
	su.UsageLines = int(d.Int())
	su.Rejected = int(d.Int())
	su.RejectedLines = getDrops(&d)
	su.SessctlOnly = int(d.Int())
	su.SessctlLines = getDrops(&d)
	su.CCUsageOnly = int(d.Int())
	su.Corrupt = int(d.Int())
	su.Errors = getStrings(&d)
	su.Context = d.Int()
	su.ContextSource = d.Str()
	su.Window = d.Int()
	su.ccusageView = d.Uint() == 1
	if d.Err == nil && len(d.B) > 0 {
		d.Fail()
	}
	return su, d.Err
}

// putLen writes the length of a list that may be nil.
func putLen(e *binenc.Encoder, n int, isNil bool) {
	if isNil {
		e.Int(0)
		return
	}
	e.Int(int64(n) + 1)
}

// getLen reads what putLen wrote; nil is -1.
func getLen(d *binenc.Decoder) int {
	n := d.Count()
	if d.Err != nil {
		return -1
	}
	return n - 1
}

func putStrings(e *binenc.Encoder, ss []string) {
	putLen(e, len(ss), ss == nil)
	for _, s := range ss {
		e.Str(s)
	}
}

func getStrings(d *binenc.Decoder) []string {
	n := getLen(d)
	if n < 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.Str()
	}
	return ss
}

func putDrops(e *binenc.Encoder, ds []FileDrop) {
	putLen(e, len(ds), ds == nil)
	for _, d := range ds {
		e.Str(d.Path)
		e.Int(int64(d.Line))
		e.Str(d.Reason)
	}
}

func getDrops(d *binenc.Decoder) []FileDrop {
	n := getLen(d)
	if n < 0 {
		return nil
	}
	ds := make([]FileDrop, n)
	for i := range ds {
		ds[i].Path = d.Str()
		ds[i].Line = int(d.Int())
		ds[i].Reason = d.Str()
	}
	return ds
}

func putUsage(e *binenc.Encoder, u *session.Usage) {
	for _, v := range [...]int64{u.Input, u.Output, u.CacheRead, u.CacheCreation, u.Reasoning, u.CacheCreation1h} {
		e.Int(v)
	}
}

func getUsage(d *binenc.Decoder, u *session.Usage) {
	for _, p := range [...]*int64{&u.Input, &u.Output, &u.CacheRead, &u.CacheCreation, &u.Reasoning, &u.CacheCreation1h} {
		*p = d.Int()
	}
}

func putTotals(e *binenc.Encoder, t *usage.Totals) {
	e.Str(string(t.View))
	putTotalsBody(e, t)
}

// putTotalsBody is putTotals without the view.
func putTotalsBody(e *binenc.Encoder, t *usage.Totals) {
	putUsage(e, &t.Usage)
	e.Int(int64(t.Requests))
	putLen(e, len(t.ByModel), t.ByModel == nil)
	for i := range t.ByModel {
		e.Str(t.ByModel[i].Model)
		putUsage(e, &t.ByModel[i].Usage)
	}
	tb, _ := t.LastActivity.MarshalBinary() // fails only past year 32767 or for odd zones
	e.Str(string(tb))
	e.U64(math.Float64bits(t.CostUSD))
	putLen(e, len(t.Unpriced), t.Unpriced == nil)
	models := make([]string, 0, len(t.Unpriced))
	for m := range t.Unpriced {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		e.Str(m)
		e.Int(t.Unpriced[m])
	}
}

func getTotals(d *binenc.Decoder, t *usage.Totals) {
	t.View = usage.View(d.Str())
	getTotalsBody(d, t)
}

func getTotalsBody(d *binenc.Decoder, t *usage.Totals) {
	getUsage(d, &t.Usage)
	t.Requests = int(d.Int())
	if n := getLen(d); n >= 0 {
		t.ByModel = make(usage.ByModel, n)
		for i := range t.ByModel {
			t.ByModel[i].Model = d.Str()
			getUsage(d, &t.ByModel[i].Usage)
		}
	}
	if err := t.LastActivity.UnmarshalBinary([]byte(d.Str())); err != nil {
		d.Fail()
	}
	t.CostUSD = math.Float64frombits(d.U64())
	if n := getLen(d); n >= 0 {
		t.Unpriced = make(map[string]int64, n)
		for range n {
			m := d.Str()
			t.Unpriced[m] = d.Int()
		}
	}
}

// putTotalsRef writes t, which may be nil, or a mark when t is same in
// another view (a ccusage view equal to the totals).
func putTotalsRef(e *binenc.Encoder, t, same *usage.Totals) {
	if t == nil {
		e.Uint(0)
		return
	}
	if same != nil {
		n := len(e.B)
		putTotalsBody(e, t)
		m := len(e.B)
		putTotalsBody(e, same)
		equal := string(e.B[n:m]) == string(e.B[m:])
		e.B = e.B[:n]
		if equal {
			e.Uint(2)
			e.Str(string(t.View))
			return
		}
	}
	e.Uint(1)
	putTotals(e, t)
}

func getTotalsRef(d *binenc.Decoder, same *usage.Totals) *usage.Totals {
	switch d.Uint() {
	case 0:
		return nil
	case 1:
		t := &usage.Totals{}
		getTotals(d, t)
		return t
	case 2:
		if same != nil {
			// sharing the totals' by-model list and map, as
			// Consumption's does (read only)
			t := *same
			t.View = usage.View(d.Str())
			return &t
		}
	}
	d.Fail()
	return nil
}
