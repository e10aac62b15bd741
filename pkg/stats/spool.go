package stats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Spool keeps the results of a run over many sessions on disk as they come
// (ConsumptionEach), and in memory only what orders a report by session:
// each session's agent, id and total, and where its result is. A result is
// about a kilobyte in memory (its totals by model, its files, its lines),
// and a report over 100,000 sessions held them all to its end; a Spool
// holds about 40 bytes and the id of each.
type Spool struct {
	file   *usage.SpillFile
	buf    []byte
	at     []int64 // where each result starts; it ends where the next starts
	end    int64
	total  []int64
	agent  []uint8 // in agents
	id     []string
	agents []session.Agent
}

// NewSpool makes an empty Spool. Close frees its file.
func NewSpool() *Spool { return &Spool{file: usage.NewSpillFile()} }

// Add keeps su, the next session of the report.
func (sp *Spool) Add(su *SessionUsage) error {
	sp.buf = appendSessionUsage(sp.buf[:0], su)
	at, err := sp.file.Write(sp.buf)
	if err != nil {
		return err
	}
	a := slices.Index(sp.agents, su.Agent)
	if a < 0 {
		if len(sp.agents) == math.MaxUint8 {
			return errors.New("too many agents")
		}
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

// Len is the number of sessions kept.
func (sp *Spool) Len() int { return len(sp.at) }

// ID is the id of session k (in the order of Add).
func (sp *Spool) ID(k int) string { return sp.id[k] }

// Session reads back session k (in the order of Add). It is a new value,
// the caller's.
func (sp *Spool) Session(k int) (*SessionUsage, error) {
	end := sp.end
	if k+1 < len(sp.at) {
		end = sp.at[k+1]
	}
	b := make([]byte, end-sp.at[k])
	if err := sp.file.ReadAt(b, sp.at[k]); err != nil {
		return nil, err
	}
	su, err := readSessionUsage(b)
	if err != nil {
		return nil, fmt.Errorf("reading back a session's usage: %w", err)
	}
	return su, nil
}

// Close frees the file; the Spool gives nothing more.
func (sp *Spool) Close() error { return sp.file.Close() }

// key is session k's key in a report by session (sessionKey).
func (sp *Spool) key(k int) string { return string(sp.agents[sp.agent[k]]) + ":" + sp.id[k] }

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

func (s spoolSet) len() int            { return s.sp.Len() }
func (s spoolSet) key(k int) string    { return s.sp.key(k) }
func (s spoolSet) cmpKey(a, b int) int { return s.sp.cmpKey(a, b) }
func (s spoolSet) agent(k int) string  { return string(s.sp.agents[s.sp.agent[k]]) }
func (s spoolSet) total(k int) int64   { return s.sp.total[k] }
func (s spoolSet) totals(k int) (usage.Totals, error) {
	su, err := s.sp.Session(k)
	if err != nil {
		return usage.Totals{}, err
	}
	return su.Totals, nil
}

// A SessionUsage on disk (appendSessionUsage): its fields in order, each
// number a varint, each string and list its length then its elements, a
// list that may be nil its length plus one (0: nil), a float its bits,
// a time its MarshalBinary, a *Totals a byte (0: nil, 1: one follows, 2:
// AsCCUsage is Totals in the other view). TestSpoolCarriesEveryField
// fails when a field is added to SessionUsage and not here.

func appendSessionUsage(b []byte, su *SessionUsage) []byte {
	b = appendString(b, string(su.Agent))
	b = appendString(b, su.ID)
	b = appendString(b, su.Project)
	b = appendString(b, su.CWD)
	b = appendString(b, su.Main)
	b = appendStrings(b, su.Files)
	b = appendTotals(b, &su.Totals)
	b = appendTotalsRef(b, su.InRotations, nil)
	b = appendTotalsRef(b, su.AsCCUsage, &su.Totals)
	b = binary.AppendVarint(b, int64(su.PerResponse))
	b = binary.AppendVarint(b, su.PerResponseView)
	b = binary.AppendVarint(b, su.CumulativeView)
	b = appendString(b, su.ViewsDiffer)
	b = binary.AppendVarint(b, int64(su.UsageLines))
	b = binary.AppendVarint(b, int64(su.Rejected))
	b = appendDrops(b, su.RejectedLines)
	b = binary.AppendVarint(b, int64(su.SessctlOnly))
	b = appendDrops(b, su.SessctlLines)
	b = binary.AppendVarint(b, int64(su.CCUsageOnly))
	b = binary.AppendVarint(b, int64(su.Corrupt))
	b = appendStrings(b, su.Errors)
	b = binary.AppendVarint(b, su.Context)
	b = appendString(b, su.ContextSource)
	b = binary.AppendVarint(b, su.Window)
	if su.ccusageView {
		return append(b, 1)
	}
	return append(b, 0)
}

func readSessionUsage(b []byte) (*SessionUsage, error) {
	r := reader{b: b}
	su := &SessionUsage{}
	su.Agent = session.Agent(r.string())
	su.ID = r.string()
	su.Project = r.string()
	su.CWD = r.string()
	su.Main = r.string()
	su.Files = r.strings()
	r.totals(&su.Totals)
	su.InRotations = r.totalsRef(nil)
	su.AsCCUsage = r.totalsRef(&su.Totals)
	su.PerResponse = int(r.varint())
	su.PerResponseView = r.varint()
	su.CumulativeView = r.varint()
	su.ViewsDiffer = r.string()
	su.UsageLines = int(r.varint())
	su.Rejected = int(r.varint())
	su.RejectedLines = r.drops()
	su.SessctlOnly = int(r.varint())
	su.SessctlLines = r.drops()
	su.CCUsageOnly = int(r.varint())
	su.Corrupt = int(r.varint())
	su.Errors = r.strings()
	su.Context = r.varint()
	su.ContextSource = r.string()
	su.Window = r.varint()
	su.ccusageView = r.byte() == 1
	if r.err == nil && len(r.b) > 0 {
		r.err = errors.New("bytes left over")
	}
	return su, r.err
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(ss))+1)
	for _, s := range ss {
		b = appendString(b, s)
	}
	return b
}

func appendDrops(b []byte, ds []FileDrop) []byte {
	if ds == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(ds))+1)
	for _, d := range ds {
		b = appendString(b, d.Path)
		b = binary.AppendVarint(b, int64(d.Line))
		b = appendString(b, d.Reason)
	}
	return b
}

func appendUsage(b []byte, u *session.Usage) []byte {
	for _, v := range [...]int64{u.Input, u.Output, u.CacheRead, u.CacheCreation, u.Reasoning, u.CacheCreation1h} {
		b = binary.AppendVarint(b, v)
	}
	return b
}

func appendTotals(b []byte, t *usage.Totals) []byte {
	b = appendString(b, string(t.View))
	return appendTotalsBody(b, t)
}

// appendTotalsBody is appendTotals without the view.
func appendTotalsBody(b []byte, t *usage.Totals) []byte {
	b = appendUsage(b, &t.Usage)
	b = binary.AppendVarint(b, int64(t.Requests))
	if t.ByModel == nil {
		b = append(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(t.ByModel))+1)
		for i := range t.ByModel {
			b = appendString(b, t.ByModel[i].Model)
			b = appendUsage(b, &t.ByModel[i].Usage)
		}
	}
	tb, _ := t.LastActivity.MarshalBinary() // fails only past year 32767 or for odd zones
	b = appendString(b, string(tb))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t.CostUSD))
	if t.Unpriced == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Unpriced))+1)
	models := make([]string, 0, len(t.Unpriced))
	for m := range t.Unpriced {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		b = appendString(b, m)
		b = binary.AppendVarint(b, t.Unpriced[m])
	}
	return b
}

// appendTotalsRef appends t, which may be nil, or a mark when t is same
// in another view (a ccusage view equal to the totals: most sessions).
func appendTotalsRef(b []byte, t, same *usage.Totals) []byte {
	if t == nil {
		return append(b, 0)
	}
	if same != nil {
		n := len(b)
		b = appendTotalsBody(b, t)
		body := b[n:]
		m := len(b)
		b = appendTotalsBody(b, same)
		if string(body) == string(b[m:]) {
			b = append(b[:n], 2)
			return appendString(b, string(t.View))
		}
		b = b[:n]
	}
	b = append(b, 1)
	return appendTotals(b, t)
}

// reader reads what the append functions wrote; past an error it reads
// zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errors.New("truncated")
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// count reads a list's length; nil is -1.
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) { // every element takes a byte at least
		r.fail()
		return -1
	}
	return int(n) - 1
}

func (r *reader) strings() []string {
	n := r.count()
	if n < 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.string()
	}
	return ss
}

func (r *reader) drops() []FileDrop {
	n := r.count()
	if n < 0 {
		return nil
	}
	ds := make([]FileDrop, n)
	for i := range ds {
		ds[i].Path = r.string()
		ds[i].Line = int(r.varint())
		ds[i].Reason = r.string()
	}
	return ds
}

func (r *reader) usage(u *session.Usage) {
	for _, p := range [...]*int64{&u.Input, &u.Output, &u.CacheRead, &u.CacheCreation, &u.Reasoning, &u.CacheCreation1h} {
		*p = r.varint()
	}
}

func (r *reader) totals(t *usage.Totals) {
	t.View = usage.View(r.string())
	r.totalsBody(t)
}

func (r *reader) totalsBody(t *usage.Totals) {
	r.usage(&t.Usage)
	t.Requests = int(r.varint())
	if n := r.count(); n >= 0 {
		t.ByModel = make(usage.ByModel, n)
		for i := range t.ByModel {
			t.ByModel[i].Model = r.string()
			r.usage(&t.ByModel[i].Usage)
		}
	}
	var at time.Time
	if err := at.UnmarshalBinary([]byte(r.string())); err != nil && r.err == nil {
		r.err = err
	}
	t.LastActivity = at
	if len(r.b) < 8 {
		r.fail()
		return
	}
	t.CostUSD = math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	if n := r.count(); n >= 0 {
		t.Unpriced = make(map[string]int64, n)
		for range n {
			m := r.string()
			t.Unpriced[m] = r.varint()
		}
	}
}

func (r *reader) totalsRef(same *usage.Totals) *usage.Totals {
	switch r.byte() {
	case 0:
		return nil
	case 1:
		t := &usage.Totals{}
		r.totals(t)
		return t
	case 2:
		if same != nil {
			// sharing the totals' by-model list and map, as
			// Consumption's does (read only)
			t := *same
			t.View = usage.View(r.string())
			return &t
		}
	}
	r.fail()
	return nil
}
