package stats

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"os"
	"syscall"

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
const memoVersion = "sessctl-consumption-memo-1"

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
func ConsumptionMemo(ctx context.Context, ss []*session.Session, progress Progress, read ReadFile, memo Memo) ([]*SessionUsage, error) {
	var key []byte
	if memo != nil && !usage.PricesSet() {
		key = memoKey(ss)
	}
	if key != nil {
		if v := memo.LoadRun(key); v != nil {
			if out, ok := fromMemo(ss, v); ok {
				return out, nil
			}
		}
	}
	out, err := ConsumptionWith(ctx, ss, progress, read)
	if err != nil || key == nil {
		return out, err
	}
	if v, ok := toMemo(out); ok && unchanged(ss) {
		memo.StoreRun(key, v)
	}
	return out, nil
}

// memoKey hashes what a Consumption of ss depends on; nil when a file that
// records usage has no identity to know it by.
func memoKey(ss []*session.Session) []byte {
	h := sha256.New()
	var b []byte
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
			num(f.Size)
			num(f.ModTime.UnixNano())
		})
		num(-1)
		if len(b) >= 32<<10 {
			h.Write(b)
			b = b[:0]
		}
	}
	if !ok {
		return nil
	}
	h.Write(b)
	return h.Sum(nil)
}

// unchanged reports whether every file of ss that records usage is still
// what discovery found (the key): a file that grew while the run read it
// may have been read with its new lines, which the key does not name.
func unchanged(ss []*session.Session) bool {
	ok := true
	for _, s := range ss {
		eachUsageFile(s, func(_ int, f UsageFile) {
			if !ok {
				return
			}
			fi, err := os.Lstat(f.Path)
			if err != nil {
				ok = false
				return
			}
			st, isStat := fi.Sys().(*syscall.Stat_t)
			dev, ino, _ := f.Identity()
			ok = isStat && uint64(st.Dev) == dev && st.Ino == ino &&
				fi.Size() == f.Size && fi.ModTime().Equal(f.ModTime)
		})
		if !ok {
			return false
		}
	}
	return ok
}

// toMemo encodes the result of a run; false when it is not to be stored
// (a session had errors).
func toMemo(out []*SessionUsage) ([]byte, bool) {
	ms := make([]memoSession, len(out))
	for i, su := range out {
		if len(su.Errors) > 0 {
			return nil, false
		}
		ms[i] = memoSession{Project: su.Project, CWD: su.CWD, Totals: su.Totals,
			InRotations: su.InRotations, AsCCUsage: su.AsCCUsage, PerResponse: su.PerResponse,
			PerResponseView: su.PerResponseView, CumulativeView: su.CumulativeView,
			ViewsDiffer: su.ViewsDiffer, UsageLines: su.UsageLines, Rejected: su.Rejected,
			RejectedLines: su.RejectedLines, SessctlOnly: su.SessctlOnly, SessctlLines: su.SessctlLines,
			CCUsageOnly: su.CCUsageOnly, Corrupt: su.Corrupt, Context: su.Context,
			ContextSource: su.ContextSource, Window: su.Window, CCUsageView: su.ccusageView}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(ms); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// fromMemo decodes a stored result for the sessions ss; false when it does
// not decode or is not for as many sessions.
func fromMemo(ss []*session.Session, v []byte) ([]*SessionUsage, bool) {
	var ms []memoSession
	if err := gob.NewDecoder(bytes.NewReader(v)).Decode(&ms); err != nil || len(ms) != len(ss) {
		return nil, false
	}
	out := make([]*SessionUsage, len(ss))
	for i, s := range ss {
		m := &ms[i]
		su := &SessionUsage{Session: s, Agent: s.Agent, ID: s.ID, Project: m.Project, CWD: m.CWD,
			Main: s.Main, Files: []string{}, Totals: m.Totals, InRotations: m.InRotations,
			AsCCUsage: m.AsCCUsage, PerResponse: m.PerResponse, PerResponseView: m.PerResponseView,
			CumulativeView: m.CumulativeView, ViewsDiffer: m.ViewsDiffer, UsageLines: m.UsageLines,
			Rejected: m.Rejected, RejectedLines: m.RejectedLines, SessctlOnly: m.SessctlOnly,
			SessctlLines: m.SessctlLines, CCUsageOnly: m.CCUsageOnly, Corrupt: m.Corrupt,
			Context: m.Context, ContextSource: m.ContextSource, Window: m.Window, ccusageView: m.CCUsageView}
		eachUsageFile(s, func(_ int, f UsageFile) { su.Files = append(su.Files, f.Path) })
		out[i] = su
	}
	return out, true
}
