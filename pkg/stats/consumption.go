// Package stats answers three questions about agent sessions: how full is
// the context now, how many tokens were consumed, and where the tokens are.
// Recorded usage (what the API reported) comes from pkg/usage and the
// agents' scanners; estimates come from a tokenizer (pkg/tokens) and are
// labelled as such.
package stats

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/internal/intern"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Progress receives the bytes scanned so far and the total to scan. It is
// called from several goroutines.
type Progress func(done, total int64)

// LargeRun is the number of sessions from which a run's scan gives back
// the pages of discovery's sessions once it has let them go (consume), and
// stats paces its scan closer: fewer hold too little to give back for the
// cost of a collection (a store of 300 Codex rollouts took 5 % more time).
const LargeRun = 10000

// SessionUsage is the recorded usage of one session.
//
// It does not point to its session.Session: a run over many sessions lets
// discovery's go once their files are read (the result of Consumption is
// in the order of its sessions).
type SessionUsage struct {
	Agent   session.Agent `json:"agent"`
	ID      string        `json:"id"`
	Project string        `json:"project"`
	// CWD is the session's real working directory when known (set by the
	// caller from the transcript; for Codex, the rollout's session_meta).
	// Group by project uses it before Project, which for Claude Code is the
	// escaped folder name.
	CWD   string   `json:"cwd,omitempty"`
	Main  string   `json:"main"`
	Files []string `json:"files"`
	// Totals is what sessctl counts (usage.ViewSessctl): every file of the
	// session that records usage, rotated copies and subagents included,
	// each request once, by the format's own rules.
	Totals usage.Totals `json:"recorded"`
	// InRotations is the part of Totals that only rotated copies hold now
	// (the turns a revert removed), nil when none.
	InRotations *usage.Totals `json:"in_rotations,omitempty"`
	// AsCCUsage is what ccusage 20.0.24 reports for the same session
	// (usage.ViewCCUsage; for the agents whose ccusage rules sessctl
	// reproduces: Claude Code and Codex): it reads no rotations, drops
	// some lines silently and keeps some sessctl rejects (docs/stats.md).
	AsCCUsage *usage.Totals `json:"as_ccusage,omitempty"`
	// PerResponse counts the requests of Totals that come from per-response
	// usage records (Codex 0.169's token_usage_record) rather than from
	// cumulative counters. PerResponseView and CumulativeView are the live
	// files' totals (rotations aside) by each method; ViewsDiffer says, when
	// they differ, by how much and why.
	PerResponse     int    `json:"per_response_records,omitempty"`
	PerResponseView int64  `json:"per_response_view_tokens,omitempty"`
	CumulativeView  int64  `json:"cumulative_view_tokens,omitempty"`
	ViewsDiffer     string `json:"views_differ,omitempty"`
	// UsageLines counts lines that carried usage; Rejected those sessctl
	// could not count (listed in RejectedLines, at most 20 per file).
	UsageLines    int        `json:"usage_lines"`
	Rejected      int        `json:"rejected_lines"`
	RejectedLines []FileDrop `json:"rejected,omitempty"`
	SessctlOnly   int        `json:"counted_not_by_ccusage"`
	SessctlLines  []FileDrop `json:"counted_not_by_ccusage_lines,omitempty"`
	CCUsageOnly   int        `json:"counted_only_by_ccusage"`
	Corrupt       int        `json:"corrupt_lines"`
	Errors        []string   `json:"errors,omitempty"`
	// Context is the context gauge of the session's gauge file (-1: none),
	// from ContextSource; Window the window it records (0: none).
	Context       int64         `json:"-"`
	ContextSource string        `json:"-"`
	Window        int64         `json:"-"`
	src           *source       // the session's counted requests
	ledger        *usage.Ledger // names the models of requests
	ccusageView   bool          // a file of the session is in the ccusage view
}

// FileDrop is a line of a file that was not counted, and why.
type FileDrop struct {
	Path string `json:"path"`
	usage.Drop
}

// source holds the counted requests of the sessions of one Consumption,
// session by session and by time: in memory, or past the memory budget in
// sorted runs on disk (usage.Sorter).
type source struct {
	ledger   *usage.Ledger
	sorted   *usage.Sorter
	sessions []*SessionUsage // of a Consumption
	fileSess []int32         // file number (usage.Request.File) -> session
	fileCopy []bool          // file number -> a rotated copy
	sorting  bool            // the ledger's winners were given to sorted
}

// adopt gives the sorter the ledger's list when it did not spill: sorted
// in place, it is the requests by session.
func (src *source) adopt() {
	if !src.ledger.Spilled() {
		src.sorted.Adopt(src.ledger.TakeRequests())
	}
}

// each calls fn with the counted requests, by session number and time.
func (src *source) each(fn func(sess int, r *usage.Request) error) error {
	if src.ledger.Spilled() && !src.sorting {
		// sorted on the first call only: --by session never asks
		src.sorting = true
		if err := src.ledger.Each(src.sorted.Add); err != nil {
			return err
		}
	}
	return src.sorted.Each(func(r *usage.Request) error { return fn(int(src.fileSess[r.File]), r) })
}

func (src *source) close() error {
	return errors.Join(src.sorted.Close(), src.ledger.Close())
}

// EachRequest calls fn with the counted requests (after de-duplication)
// of the sessions sus, session by session in the order Consumption
// returned them, each session's requests by time (in the order of the
// ledger among equal times). fn may keep nothing of r. The requests are
// read from memory or, past the memory budget, from disk: nothing holds
// them all.
func EachRequest(sus []*SessionUsage, fn func(su *SessionUsage, r *usage.Request) error) error {
	in := make(map[*SessionUsage]bool, len(sus))
	var srcs []*source
	for _, su := range sus {
		in[su] = true
		if su.src != nil && !slices.Contains(srcs, su.src) {
			srcs = append(srcs, su.src)
		}
	}
	for _, src := range srcs {
		err := src.each(func(sess int, r *usage.Request) error {
			su := src.sessions[sess]
			if !in[su] {
				return nil
			}
			return fn(su, r)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Close frees what holds the requests of sus (the files of a Consumption
// that spilled to disk). The totals stay; EachRequest gives nothing more.
func Close(sus []*SessionUsage) error {
	var errs []error
	var done []*source
	for _, su := range sus {
		if su.src != nil && !slices.Contains(done, su.src) {
			done = append(done, su.src)
			errs = append(errs, su.src.close())
		}
	}
	for _, su := range sus {
		su.src = nil
	}
	return errors.Join(errs...)
}

// Model returns the model name of one of su's requests.
func (su *SessionUsage) Model(r *usage.Request) string {
	if su.ledger == nil {
		return ""
	}
	return su.ledger.Model(r)
}

// UsageFile is a file of a session that records usage, and what it is to
// usage accounting.
type UsageFile struct {
	session.File
	Class usage.FileClass
}

// UsageFiles lists the files of a session that record usage, as the
// agent's home classifies them (usage.Scanner): for example every
// transcript of a Claude Code session, and only the wires of a Kimi
// session (its context files hold only a gauge).
func UsageFiles(s *session.Session) []UsageFile {
	var out []UsageFile
	eachUsageFile(s, func(_ int, f UsageFile) { out = append(out, f) })
	return out
}

// eachUsageFile calls fn with each file of s that records usage and its
// number in s.Files.
func eachUsageFile(s *session.Session, fn func(k int, f UsageFile)) {
	sc, ok := session.As[usage.Scanner](s.Agent)
	if !ok {
		return
	}
	for k, f := range s.Files {
		if c := sc.Classify(s, f); c&usage.Carries != 0 {
			fn(k, UsageFile{f, c})
		}
	}
}

// fileJob is a file to scan, of session sess. It is small and holds no
// pointer, for a store holds one for each of its files; it names its file
// by its path in the scanPlan's table, so that the scan needs no session
// once the jobs are made.
type fileJob struct {
	sess  int32
	class usage.FileClass
	size  int64
	path  strRef
}

// scannedFile is what a worker read of a file, handed to the merge.
type scannedFile struct {
	fu  *usage.FileUsage
	err error
}

// StreamFile is the size from which a file's usage is read streaming into
// the ledger rather than held whole (ConsumptionWith), and read without
// the index's cache. A variable for tests.
var StreamFile int64 = 128 << 20

// Consumption scans the recorded usage of many sessions, spreading files
// over all cores. Claude Code requests are de-duplicated across all files
// of all sessions (as ccusage does), each counted in the session whose file
// held the winning line; a request that a rotated copy repeats is counted
// once (usage.Ledger). When ctx is done it stops within a buffer's read of
// each file being scanned and returns ctx.Err().
func Consumption(ctx context.Context, ss []*session.Session, progress Progress) ([]*SessionUsage, error) {
	return ConsumptionWith(ctx, ss, progress, nil)
}

// ReadFile reads the recorded usage of one file of a session of agent a,
// as rd.ReadFile does; an on-disk cache (pkg/index) gives one that does
// not read a file it has read before.
type ReadFile func(ctx context.Context, rd *usage.Reader, path string, a session.Agent, sc usage.Scanner, class usage.FileClass) (*usage.FileUsage, error)

// ConsumptionWith is Consumption reading each file with read (nil:
// usage.Reader.ReadFile).
func ConsumptionWith(ctx context.Context, ss []*session.Session, progress Progress, read ReadFile) ([]*SessionUsage, error) {
	return consumption(ctx, ss, progress, read, nil, false)
}

// consumption is ConsumptionWith, calling seen (when not nil) with each
// file's requests before the ledger takes them (see scanUsage). With
// release, ss is the caller's own copy of its list, which is cleared as
// the scan's jobs are made (planScan): the scan names the files by path,
// and over 100,000 sessions discovery's hold 25 MB (the frames above kept
// them to the end of the run). Its results hold the requests (EachRequest)
// until Close.
func consumption(ctx context.Context, ss []*session.Session, progress Progress, read ReadFile, seen func(sess int, fu *usage.FileUsage), release bool) ([]*SessionUsage, error) {
	out := make([]*SessionUsage, len(ss))
	sc, err := consume(ctx, session.Slice(ss), progress, read, seen, release, false, func(i int, su *SessionUsage) error {
		out[i] = su
		return nil
	})
	if err != nil {
		return nil, err
	}
	sc.sessions = out
	sc.adopt()
	for _, su := range out {
		su.ledger, su.src = sc.ledger, sc
	}
	return out, nil
}

// sessAcc is what the scan gathers of one session as its files are
// merged, until its result is made: small, and with no pointers for the
// collector to follow (see scanPlan), for the scan holds one for each
// session of the store (a SessionUsage is 464 bytes, most of them its
// totals, which only the end of the scan knows). What most sessions never
// have (lines rejected or counted apart from ccusage, damaged lines,
// errors, Codex's per-response records) is in a sessRare of its own: 40
// bytes a session instead of 80, 4 MB over 100,000 sessions.
type sessAcc struct {
	context, window             int64
	project, cwd, contextSource uint32 // the scan's intern.Table
	usageLines                  int32
	rare                        uint32 // 1 + its place in the scan's sessRare, 0: none
	ccusageView                 bool
	direct                      bool // its requests counted as its file was merged (TallyFile)
}

// sessRare is what the scan gathers of a session that few have: the
// counts of lines it could not count, counted apart from ccusage or found
// damaged, and of its per-response records; those lines themselves, and
// the errors that stopped the reading of its files.
type sessRare struct {
	perResponseView, cumulativeView int64
	rejected, sessctlOnly           int32
	ccusageOnly, corrupt            int32
	perResponse                     int32
	rejectedLines, sessctlLines     []FileDrop
	errors                          []string
}

// rareIn reports whether fu says anything a sessRare holds.
func rareIn(fu *usage.FileUsage, err error) bool {
	return err != nil || fu.RejectedCount != 0 || fu.SessctlOnly != 0 || fu.CCUsageOnly != 0 || fu.Corrupt != 0 ||
		len(fu.Rejected) > 0 || len(fu.SessctlOnlyLines) > 0 || fu.Class&usage.Copy == 0 && fu.PerResponse > 0
}

// consume is the scan under Consumption: once every file of ss is read and
// merged, it calls emit with each session's result (i: its place in ss),
// from one goroutine: in the order of ss, or with release in the order the
// sessions' requests are counted (tallyEach). emit may keep su; its
// requests are not attached (see consumption). On success the caller owns
// the returned source (close); on an error, emit's included, it is closed.
//
// Until the results are made, the scan holds a small sessAcc per session
// and the files' paths (its jobs name them), not a SessionUsage: a caller
// that lets each result go as it comes (ConsumptionEach) holds no more than
// that over 100,000 sessions. With release, ss is the caller's own copy of
// its list, which is cleared as the jobs are made (planScan), and the
// results may come in any order.
//
// With direct, the requests of a session of one file that the ledger
// could only count as they come (usage.Ledger.TallyFile) are counted as
// the file is merged, and the source holds none of them: for a caller
// that wants the results alone.
func consume(ctx context.Context, ss session.List, progress Progress, read ReadFile, seen func(sess int, fu *usage.FileUsage), release, direct bool,
	emit func(i int, su *SessionUsage) error) (*source, error) {
	type sessMeta struct{ id, main strRef }
	n := ss.Len()
	meta := make([]sessMeta, n)
	project := make([]uint32, n)
	var names intern.Table[uint32] // projects, working directories, gauge sources
	count := make([]int32, n)      // each session's files
	plan := planScan(ss, release, func(i int, s *session.Session, p *scanPlan, first int) {
		main := p.mainOf(s, first)
		meta[i] = sessMeta{p.tab.within(main, s.Main, s.ID), main}
		project[i] = names.ID(s.Project)
		count[i] = int32(len(p.jobs) - first)
	})
	// made once discovery's sessions may go, which are most of the heap
	// until then
	acc := make([]sessAcc, n)
	for i := range acc {
		acc[i] = sessAcc{project: project[i], context: -1}
	}
	project = nil
	if release && n >= LargeRun {
		// the sessions just let go were most of the heap, and their pages
		// stay with the process until given back: the scan's heap and the
		// index's pages it maps came on top of them, the peak of a warm
		// run over 100,000 sessions (49 MiB of anonymous memory beside 18
		// of files, against 23 MB live)
		debug.FreeOSMemory()
	}
	// each session's files, one after another in session order (the jobs'
	// before the scan sorts them): session i's come after those of the
	// sessions before it, count[i] of them
	files := make([]strRef, len(plan.jobs))
	for k, j := range plan.jobs {
		files[k] = j.path
	}
	var rare []*sessRare
	more := func(a *sessAcc) *sessRare {
		if a.rare == 0 {
			rare = append(rare, &sessRare{})
			a.rare = uint32(len(rare))
		}
		return rare[a.rare-1]
	}
	// each session's tally: made only once a session is counted as its
	// file is merged (direct), or for a merge that tallies every session
	// at once (tallyAll)
	var own []usage.Tally
	var tally func(sess int, lg *usage.Ledger, fu *usage.FileUsage) ([]usage.Request, bool)
	if direct {
		tally = func(sess int, lg *usage.Ledger, fu *usage.FileUsage) ([]usage.Request, bool) {
			if count[sess] != 1 {
				return nil, false
			}
			var t usage.Tally
			reqs, ok := lg.TallyFile(&t, fu)
			if ok {
				if own == nil {
					own = make([]usage.Tally, n)
				}
				own[sess] = t
			}
			acc[sess].direct = ok
			return reqs, ok
		}
	}
	sc, err := scanUsage(ctx, plan, progress, read, seen, tally, func(sess int, fu *usage.FileUsage, err error) {
		a := &acc[sess]
		a.usageLines += int32(fu.UsageLines)
		if rareIn(fu, err) {
			r := more(a)
			if err != nil {
				r.errors = append(r.errors, fmt.Sprintf("%s: %v", fu.Path, err))
			}
			r.rejected += int32(fu.RejectedCount)
			r.sessctlOnly += int32(fu.SessctlOnly)
			r.ccusageOnly += int32(fu.CCUsageOnly)
			r.corrupt += int32(fu.Corrupt)
			if fu.Class&usage.Copy == 0 && fu.PerResponse > 0 {
				r.perResponse += int32(fu.PerResponse)
				r.perResponseView += fu.PerResponseView
				r.cumulativeView += fu.CumulativeView
			}
			for _, d := range fu.Rejected {
				r.rejectedLines = append(r.rejectedLines, FileDrop{fu.Path, d})
			}
			for _, d := range fu.SessctlOnlyLines {
				r.sessctlLines = append(r.sessctlLines, FileDrop{fu.Path, d})
			}
		}
		if fu.Class&usage.CCUsage != 0 {
			a.ccusageView = true
		}
		if fu.Class&usage.Gauge != 0 {
			if fu.Context >= 0 {
				a.context, a.contextSource = fu.Context, names.ID(fu.ContextSource)
			}
			if fu.Window > 0 {
				a.window = fu.Window
			}
			project, cwd := names.Name(a.project), names.Name(a.cwd)
			gaugeCWD(&project, &cwd, fu)
			a.project, a.cwd = names.ID(project), names.ID(cwd)
		}
	})
	if err != nil {
		return nil, err
	}
	lg, fileSess, fileCopy := sc.ledger, sc.fileSess, sc.fileCopy
	// where each session's files start in files
	start := make([]int32, n)
	for i, at := 0, int32(0); i < n; i++ {
		start[i] = at
		at += count[i]
	}
	// result makes and gives the result of the session at place i from its
	// tallies: own, in rotations (nil: none) and ccusage's (own while the
	// views agree)
	result := func(i int, own, rot, ccu *usage.Tally) error {
		a, m := &acc[i], meta[i]
		su := &SessionUsage{Agent: plan.agentOf(i), ID: plan.tab.str(m.id), Project: names.Name(a.project), CWD: names.Name(a.cwd), Main: plan.tab.str(m.main),
			Files: make([]string, count[i]), Context: a.context, ContextSource: names.Name(a.contextSource), Window: a.window,
			UsageLines: int(a.usageLines), ccusageView: a.ccusageView}
		for k := range su.Files {
			su.Files[k] = plan.tab.str(files[start[i]+int32(k)])
		}
		if a.rare != 0 {
			r := rare[a.rare-1]
			su.PerResponse, su.PerResponseView, su.CumulativeView = int(r.perResponse), r.perResponseView, r.cumulativeView
			su.Rejected, su.SessctlOnly, su.CCUsageOnly, su.Corrupt = int(r.rejected), int(r.sessctlOnly), int(r.ccusageOnly), int(r.corrupt)
			su.RejectedLines, su.SessctlLines, su.Errors = r.rejectedLines, r.sessctlLines, r.errors
			rare[a.rare-1] = nil
		}
		su.Totals = lg.Total(own)
		su.Totals.View = usage.ViewSessctl
		if rot != nil {
			rt := lg.Total(rot)
			rt.View = usage.ViewSessctl
			su.InRotations = &rt
		}
		if su.ccusageView {
			// while the views agree the ccusage totals are sessctl's: the
			// same values, sharing their maps (read only from here on),
			// which halves what 100,000 sessions hold in by-model maps
			t := su.Totals
			if ccu != own {
				t = lg.Total(ccu)
			}
			t.View = usage.ViewCCUsage
			su.AsCCUsage = &t
		}
		if ex, ok := session.As[usage.ViewsExplainer](su.Agent); ok && su.PerResponse > 0 && su.PerResponseView != su.CumulativeView {
			su.ViewsDiffer = ex.ExplainViews(su.PerResponse, su.PerResponseView, su.CumulativeView)
		}
		return emit(i, su)
	}
	if release && !lg.Diverged() {
		eachRuns.Add(1)
		err = tallyEach(ctx, n, lg, fileSess, fileCopy, own, result)
	} else {
		err = tallyAll(ctx, n, lg, fileSess, fileCopy, own, func(i int) bool { return acc[i].direct }, result)
	}
	if err != nil {
		sc.close()
		return nil, err
	}
	return sc, nil
}

// tallyAll tallies every session's requests in one pass over the
// winners, in the ledger's order (each session's totals add its requests
// in that order, as Ledger.Totals of the session's list would), then
// gives each session's result in the order of its place. own holds the
// tallies of the sessions counted as their file was merged (direct; nil:
// none).
func tallyAll(ctx context.Context, n int, lg *usage.Ledger, fileSess []int32, fileCopy []bool, own []usage.Tally, direct func(i int) bool,
	result func(i int, own, rot, ccu *usage.Tally) error) error {
	if own == nil {
		own = make([]usage.Tally, n)
	}
	rotated := make(map[int32]*usage.Tally)
	stop := stopper(ctx)
	err := lg.Each(func(r *usage.Request) error {
		s := fileSess[r.File]
		lg.Tally(&own[s], r)
		if fileCopy[r.File] {
			t := rotated[s]
			if t == nil {
				t = &usage.Tally{}
				rotated[s] = t
			}
			lg.Tally(t, r)
		}
		return stop()
	})
	ccu := own // ccusage counts the same requests, until the views diverge
	if err == nil && lg.Diverged() {
		ccu = make([]usage.Tally, n)
		for i := range ccu {
			if direct(i) {
				// counted alike in both views, and by no request of
				// the ledger's
				ccu[i] = own[i]
			}
		}
		err = lg.EachCCUsage(func(r *usage.Request) error {
			lg.Tally(&ccu[fileSess[r.File]], r)
			return stop()
		})
	}
	if err == nil {
		err = ctx.Err()
	}
	for i := 0; err == nil && i < n; i++ {
		if i%1024 == 0 {
			if err = ctx.Err(); err != nil {
				break
			}
		}
		err = result(i, &own[i], rotated[int32(i)], &ccu[i])
		// the tallies' lists go as the result is made
		own[i], ccu[i] = usage.Tally{}, usage.Tally{}
	}
	return err
}

// eachRuns counts the scans whose results came from tallyEach (for tests:
// which way a scan went depends on what its files hold).
var eachRuns atomic.Int64

// tallyEach is tallyAll holding the tallies of only the sessions whose
// requests are being counted, while the views agree: a first pass over the
// winners counts each session's requests, and a second tallies them and
// gives a session's result as soon as its last request is counted. The
// merge gives the files' requests in the order of the files (by path, a
// session's files one after another, rotated copies last), so few
// sessions are open at once, instead of a tally for each of them all
// (about 170 bytes a session with its list of models: 17 MB over 100,000
// sessions). Each session's requests are tallied in the same order as in
// tallyAll, so its sums are the same. The results come in the order their
// sessions complete, not of their places: for a caller that takes them in
// any order.
func tallyEach(ctx context.Context, n int, lg *usage.Ledger, fileSess []int32, fileCopy []bool, own []usage.Tally,
	result func(i int, own, rot, ccu *usage.Tally) error) error {
	stop := stopper(ctx)
	left := make([]int32, n) // each session's requests not yet tallied
	err := lg.Each(func(r *usage.Request) error {
		left[fileSess[r.File]]++
		return stop()
	})
	if err == nil {
		err = ctx.Err()
	}
	// a session with none of the ledger's requests (none at all, or counted
	// as its file was merged) is complete before the second pass
	var none usage.Tally
	for i := 0; err == nil && i < n; i++ {
		if i%1024 == 0 {
			if err = ctx.Err(); err != nil {
				break
			}
		}
		if left[i] != 0 {
			continue
		}
		t := &none
		if own != nil {
			t = &own[i]
		}
		err = result(i, t, nil, t)
		if own != nil {
			own[i] = usage.Tally{}
		}
	}
	type tallies struct {
		own, rot usage.Tally
		rotated  bool
	}
	open := map[int32]*tallies{}
	if err == nil {
		err = lg.Each(func(r *usage.Request) error {
			s := fileSess[r.File]
			t := open[s]
			if t == nil {
				t = &tallies{}
				open[s] = t
			}
			lg.Tally(&t.own, r)
			if fileCopy[r.File] {
				t.rotated = true
				lg.Tally(&t.rot, r)
			}
			if left[s]--; left[s] == 0 {
				delete(open, s)
				var rot *usage.Tally
				if t.rotated {
					rot = &t.rot
				}
				if err := result(int(s), &t.own, rot, &t.own); err != nil {
					return err
				}
			}
			return stop()
		})
	}
	if err == nil && len(open) > 0 {
		// the two passes gave other requests
		return fmt.Errorf("the usage of %d sessions was not all read back", len(open))
	}
	return err
}

// stopper returns a check of ctx for a loop over many requests, which
// looks at ctx every 4,096 calls: merging a ledger spilled to disk takes
// seconds over a large store, and Ctrl-C is to stop it.
func stopper(ctx context.Context) func() error {
	n := 0
	return func() error {
		if n++; n%4096 == 0 {
			return ctx.Err()
		}
		return nil
	}
}

// gaugeCWD sets a session's project and working directory from what its
// gauge file fu records, where they are not known yet.
func gaugeCWD(project, cwd *string, fu *usage.FileUsage) {
	if *project == "" && fu.CWD != "" {
		*project = fu.CWD
	}
	if *cwd == "" {
		*cwd = fu.CWD
	}
}

// scanUsage is the scan under Consumption and CountedRequests: every file
// of the plan (sorted in place) read by workers on all cores and merged, in ccusage's order, into one
// ledger. merged is called in that order, from one goroutine, with each
// file's session, what the file says (its requests owned by the ledger by
// then, and what a rotated copy says of its lines cleared: its
// original's) and the error that stopped its reading, if any. On success
// the ledger is finished; the caller owns the source's files (close).
// seen, when not nil, is called in the same order just before the ledger
// takes a file's requests, with the file's session and what it says (nil
// for a file so large that its requests went to the ledger as it was
// read).
//
// direct, when not nil, is offered each file that is not streamed before
// the ledger takes it: it may count the file's requests itself
// (usage.Ledger.TallyFile) and return their list and true; on false the
// ledger takes them.
func scanUsage(ctx context.Context, plan *scanPlan, progress Progress, read ReadFile,
	seen func(sess int, fu *usage.FileUsage),
	direct func(sess int, lg *usage.Ledger, fu *usage.FileUsage) ([]usage.Request, bool),
	merged func(sess int, fu *usage.FileUsage, err error)) (*source, error) {
	if read == nil {
		read = func(ctx context.Context, rd *usage.Reader, path string, _ session.Agent, sc usage.Scanner, class usage.FileClass) (*usage.FileUsage, error) {
			return rd.ReadFile(ctx, path, sc, class)
		}
	}
	jobs, total := plan.jobs, plan.total
	// ccusage's order: by path, for deterministic winners among
	// duplicates; rotated copies after every file they may copy
	slices.SortStableFunc(jobs, func(a, b fileJob) int {
		ca, cb := a.class&usage.Copy != 0, b.class&usage.Copy != 0
		if ca != cb {
			if ca {
				return 1
			}
			return -1
		}
		return cmp.Compare(plan.tab.order(a.path), plan.tab.order(b.path))
	})

	var scanned atomic.Int64
	next := atomic.Int64{}
	// more readers than cores: a reader waiting for the disk leaves its core
	// to another
	workers := min(runtime.GOMAXPROCS(0)+2, max(1, len(jobs)))
	// bound how far scanning may run ahead of the in-order merge, so that
	// memory holds a few files' requests, not all of them: a reader takes
	// a token before it takes a job, the merge gives one back after each
	// file
	window := make(chan struct{}, workers*4)
	// so when job i is taken, job i-cap(window) has been merged, and slot
	// i%cap(window) of the ring is free: what a file gives goes there, and
	// nothing is held per file of the store
	ring := make([]chan scannedFile, cap(window))
	for i := range ring {
		ring[i] = make(chan scannedFile, 1)
	}
	// request lists the ledger has copied go back to the scanners
	spare := make(chan []usage.Request, workers*4)
	// one long line at a time in memory, whichever reader meets it
	var big usage.BigLines
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := usage.Reader{Big: &big}
			for {
				select {
				case window <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				j := jobs[i]
				select {
				case reqs := <-spare:
					rd.Reuse(reqs)
				default:
				}
				if j.size >= StreamFile {
					// the merge reads it, streaming (see there)
					ring[i%len(ring)] <- scannedFile{}
					continue
				}
				fu, err := read(ctx, &rd, plan.tab.str(j.path), plan.agentOf(int(j.sess)), plan.scannerOf(int(j.sess)), j.class)
				if progress != nil {
					progress(scanned.Add(j.size), total)
				}
				ring[i%len(ring)] <- scannedFile{fu, err}
			}
		}()
	}
	lg := &usage.Ledger{NoCopies: true}
	for _, j := range jobs {
		if j.class&usage.Copy != 0 {
			lg.NoCopies = false
			break
		}
	}
	// the ledger's files (if it spills) go with an error or a cancel; on
	// success they go with the source's close
	kept := false
	defer func() {
		if !kept {
			lg.Close()
		}
	}()
	// real transcripts hold about one distinct request per 8 KiB; allow for
	// twice as many (up to the memory budget)
	lg.Grow(int(min(total/4096, 1<<22)))
	fileSess := make([]int32, 0, len(jobs))
	fileCopy := make([]bool, 0, len(jobs))
	for i, j := range jobs {
		var got scannedFile
		select {
		case got = <-ring[i%len(ring)]:
		case <-ctx.Done():
			wg.Wait()
			return nil, ctx.Err()
		}
		fu, err := got.fu, got.err
		// a large file's requests go into the ledger a part at a time as
		// it is read, here in the merge's order, so that memory does not
		// grow with one file's requests (a 1 GB transcript holds about
		// 130,000); the index is not used for it
		streamed := j.size >= StreamFile
		if streamed {
			lg.BeginFile()
			rd := usage.Reader{Big: &big, Stream: lg.AddPart}
			fu, err = rd.ReadFile(ctx, plan.tab.str(j.path), plan.scannerOf(int(j.sess)), j.class)
			if err == nil {
				lg.AddPart(fu)
				fu.Requests = nil
			}
			if progress != nil {
				progress(scanned.Add(j.size), total)
			}
		}
		if err != nil {
			fu = &usage.FileUsage{Path: plan.tab.str(j.path), Class: j.class, Context: -1}
		}
		fileSess = append(fileSess, j.sess)
		fileCopy = append(fileCopy, fu.Class&usage.Copy != 0)
		if seen != nil {
			// a streamed file's requests went to the ledger as it was read
			if streamed {
				seen(int(j.sess), nil)
			} else {
				seen(int(j.sess), fu)
			}
		}
		if !streamed {
			var reqs []usage.Request
			ok := false
			if direct != nil {
				reqs, ok = direct(int(j.sess), lg, fu)
			}
			if !ok {
				reqs = lg.Add(fu)
			}
			select {
			case spare <- reqs:
			default:
			}
		}
		if fu.Class&usage.Copy != 0 {
			// what a copy says of its lines (rejected, damaged, dropped
			// by ccusage) it says of its original's: not counted twice
			fu.Rejected, fu.RejectedCount, fu.Corrupt, fu.UsageLines = nil, 0, 0, 0
			fu.SessctlOnly, fu.SessctlOnlyLines, fu.CCUsageOnly = 0, nil, 0
		}
		merged(int(j.sess), fu, err)
		<-window
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := lg.Finish(); err != nil {
		return nil, err
	}
	kept = true
	return &source{ledger: lg, fileSess: fileSess, fileCopy: fileCopy,
		sorted: &usage.Sorter{Less: func(a, b *usage.Request) bool {
			if sa, sb := fileSess[a.File], fileSess[b.File]; sa != sb {
				return sa < sb
			}
			return a.Time < b.Time
		}}}, nil
}

// Grouping keys for Group.
const (
	BySession = "session"
	ByProject = "project"
	ByDay     = "day"
	ByModel   = "model"
	ByAgent   = "agent"
)

// GroupRow is one line of a grouped report.
type GroupRow struct {
	Key      string       `json:"key"`
	Agents   []string     `json:"agents"`
	Sessions int          `json:"sessions"`
	Totals   usage.Totals `json:"recorded"`
}

// ErrBadGroup is returned for an unknown grouping.
var ErrBadGroup = errors.New("unknown grouping")

// Groups are the rows of a grouped report, in order. Grouped by session,
// a row is made from its session when asked for (Row): 100,000 sessions
// are 100,000 rows, and holding them beside the sessions took about 40 MB.
type Groups struct {
	rows []GroupRow // every grouping but by session
	// by session: the sessions, and in row order each row's session or,
	// for a row of several (an id found twice), -1-k for rows[k]
	sus   []*SessionUsage
	order []int32
	// or the sessions on disk (Spool.Groups), each read back for its row
	sp  *Spool
	err error
}

// Len is the number of rows.
func (g *Groups) Len() int {
	if g.sus != nil || g.sp != nil {
		return len(g.order)
	}
	return len(g.rows)
}

// Row returns row i; its Totals share the maps of a session's (read only).
// A row that cannot be read back from disk is a zero row, and Err says
// why.
func (g *Groups) Row(i int) GroupRow {
	if g.sus == nil && g.sp == nil {
		return g.rows[i]
	}
	k := g.order[i]
	if k < 0 {
		return g.rows[-1-k]
	}
	if g.sp != nil {
		t, err := g.sp.Totals(int(k))
		if err != nil {
			g.err = cmp.Or(g.err, err)
			return GroupRow{}
		}
		return GroupRow{Key: g.sp.key(int(k)), Agents: []string{g.sp.agentOf(int(k))}, Sessions: 1, Totals: t}
	}
	su := g.sus[k]
	return GroupRow{Key: sessionKey(su), Agents: []string{string(su.Agent)}, Sessions: 1, Totals: su.Totals}
}

// Err is the first error of reading a row back from disk.
func (g *Groups) Err() error { return g.err }

// sessionKey is a session's key in a report by session.
func sessionKey(su *SessionUsage) string { return string(su.Agent) + ":" + su.ID }

// Group totals sessions by session, project, day (of each request, in loc)
// or model, largest total first (days: oldest first).
func Group(sus []*SessionUsage, by string, loc *time.Location) (*Groups, error) {
	switch by {
	case BySession:
		return bySession(sus), nil
	case ByProject, ByAgent:
		g := newGrouper(by)
		for _, su := range sus {
			g.add(su)
		}
		return g.Groups(), nil
	case ByDay, ByModel:
	default:
		return nil, fmt.Errorf("%w %q (use session, project, day, model or agent)", ErrBadGroup, by)
	}
	g := newGrouper(by)
	// request by request
	// the requests come session by session: a session is one ref
	var last *SessionUsage
	var ref *SessionRef
	err := EachRequest(sus, func(su *SessionUsage, r *usage.Request) error {
		if su != last {
			last, ref = su, &SessionRef{Agent: su.Agent, ID: su.ID}
		}
		g.addRequest(ref, su.Agent, su.Model(r), r, loc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g.Groups(), nil
}

// GroupRequests is Group by day or by model of the requests of rq, of the
// sessions kept says (by their place in rq.Sessions): the rows Group gives
// of the results of those sessions, without them.
func GroupRequests(ctx context.Context, rq *Requests, by string, loc *time.Location, kept func(sess int) bool) (*Groups, error) {
	if by != ByDay && by != ByModel {
		return nil, fmt.Errorf("%w %q (requests group by day or model)", ErrBadGroup, by)
	}
	g := newGrouper(by)
	if rq.src != nil {
		stop := stopper(ctx)
		err := rq.src.each(func(sess int, r *usage.Request) error {
			if s := &rq.Sessions[sess]; kept(sess) {
				g.addRequest(s, s.Agent, rq.Model(r), r, loc)
			}
			return stop()
		})
		if err != nil {
			return nil, err
		}
	}
	return g.Groups(), nil
}

// addRequest counts request r (of model m) of session who (compared to
// the last session counted in its row) and agent a in its row by day (in
// loc) or by model.
func (g *grouper) addRequest(who *SessionRef, a session.Agent, m string, r *usage.Request, loc *time.Location) {
	if r.Usage.Total() == 0 {
		return // synthetic replies: no row of zeros
	}
	k := m
	switch {
	case g.by == ByDay && r.Time > 0:
		k = time.UnixMilli(r.Time).In(loc).Format("2006-01-02")
	case g.by == ByDay || k == "":
		k = "(unknown)"
	}
	if g.by == ByModel {
		m = k // an unknown model is priced as "(unknown)"
	}
	g.get(k, who, a).row.Totals.Add(r, m)
}

// grouper groups whole sessions by project or agent as they come (add),
// holding their groups, not them.
type grouper struct {
	by   string
	rows map[string]*groupAcc
}

// a group's sessions come one after another (in Group, sus in order and
// EachRequest session by session), so counting them needs only the last;
// its agents are a few
type groupAcc struct {
	row    GroupRow
	last   *SessionRef // the last session whose requests were counted
	merged int         // whole sessions' totals merged into row (1: row.Totals shares that one's maps)
}

func newGrouper(by string) *grouper { return &grouper{by: by, rows: map[string]*groupAcc{}} }

// get returns row k, counting in it the session who, unless its last
// session was who; a nil who is a whole session (Add), always one more.
// A row keeps no session's result: one held in it would hold all the
// paths of its scan (SessionUsage.Files shares one list).
func (g *grouper) get(k string, who *SessionRef, agent session.Agent) *groupAcc {
	a, ok := g.rows[k]
	if !ok {
		a = &groupAcc{row: GroupRow{Key: k}}
		g.rows[k] = a
	}
	if who == nil || a.last != who {
		a.last = who
		a.row.Sessions++
	}
	if ag := string(agent); !slices.Contains(a.row.Agents, ag) {
		a.row.Agents = append(a.row.Agents, ag)
	}
	return a
}

// add counts session su in its group and returns the group.
func (g *grouper) add(su *SessionUsage) *groupAcc {
	k := string(su.Agent)
	if g.by == ByProject {
		k = cmp.Or(su.CWD, su.Project, "(none)")
	}
	a := g.get(k, nil, su.Agent)
	// a group's first totals are taken as they are, their maps shared
	// (read only from here on), so that grouping 100,000 sessions by
	// session copies none of their by-model maps
	a.merged++
	switch {
	case a.merged == 1:
		a.row.Totals = su.Totals
	case a.merged == 2: // the first one's maps are not the row's to change
		own := usage.Totals{}
		own.Merge(a.row.Totals)
		own.Merge(su.Totals)
		a.row.Totals = own
	default:
		a.row.Totals.Merge(su.Totals)
	}
	return a
}

// Groups returns the rows, largest total first (by day: oldest first).
func (g *grouper) Groups() *Groups {
	out := make([]GroupRow, 0, len(g.rows))
	for _, a := range g.rows {
		sort.Strings(a.row.Agents)
		out = append(out, a.row)
	}
	sort.Slice(out, func(i, j int) bool {
		if g.by == ByDay {
			return out[i].Key < out[j].Key
		}
		ti, tj := out[i].Totals.Total(), out[j].Totals.Total()
		if ti != tj {
			return ti > tj
		}
		return out[i].Key < out[j].Key
	})
	return &Groups{rows: out}
}

// bySession is Group by session: a row for each session, but for an id
// found twice (one row of both; Distinct leaves none such in a store). The
// rows are sessions in order of their totals, largest first, then of keys.
func bySession(sus []*SessionUsage) *Groups {
	set := susSet{sus: sus, keys: make([]string, len(sus))}
	for i, su := range sus {
		set.keys[i] = sessionKey(su)
	}
	g := &Groups{sus: sus}
	orderSessions(g, set) // no error: the sessions are in memory
	return g
}

// sessionSet is the sessions of a report by session: in memory (susSet)
// or on disk (Spool).
type sessionSet interface {
	len() int
	key(k int) string
	cmpKey(a, b int) int // as strings.Compare of their keys
	place(k int) int     // the session's place among those given
	agent(k int) string
	total(k int) int64
	totals(k int) (usage.Totals, error)
}

type susSet struct {
	sus  []*SessionUsage
	keys []string
}

func (s susSet) len() int                           { return len(s.sus) }
func (s susSet) key(k int) string                   { return s.keys[k] }
func (s susSet) cmpKey(a, b int) int                { return strings.Compare(s.keys[a], s.keys[b]) }
func (s susSet) agent(k int) string                 { return string(s.sus[k].Agent) }
func (s susSet) place(k int) int                    { return k }
func (s susSet) total(k int) int64                  { return s.sus[k].Totals.Total() }
func (s susSet) totals(k int) (usage.Totals, error) { return s.sus[k].Totals, nil }

// orderSessions sets g's rows by session of set: g.order and, for the
// rows of several sessions, g.rows.
func orderSessions(g *Groups, set sessionSet) error {
	order := make([]int32, set.len())
	for i := range order {
		order[i] = int32(i)
	}
	// the sessions of a row of several are merged in the order of their
	// places
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(set.cmpKey(int(a), int(b)), cmp.Compare(set.place(int(a)), set.place(int(b))))
	})
	totals := make(map[int32]int64) // of the rows of several sessions
	kept := order[:0]
	for i := 0; i < len(order); {
		j := i + 1
		for j < len(order) && set.cmpKey(int(order[j]), int(order[i])) == 0 {
			j++
		}
		if j-i == 1 {
			kept = append(kept, order[i])
			i = j
			continue
		}
		k := int(order[i])
		row := GroupRow{Key: set.key(k), Agents: []string{set.agent(k)}, Sessions: j - i}
		for _, k := range order[i:j] {
			t, err := set.totals(int(k))
			if err != nil {
				return err
			}
			row.Totals.Merge(t)
		}
		ref := int32(-1 - len(g.rows))
		g.rows = append(g.rows, row)
		totals[ref] = row.Totals.Total()
		kept = append(kept, ref)
		i = j
	}
	total := func(k int32) int64 {
		if k < 0 {
			return totals[k]
		}
		return set.total(int(k))
	}
	slices.SortFunc(kept, func(a, b int32) int {
		if ta, tb := total(a), total(b); ta != tb {
			return cmp.Compare(tb, ta)
		}
		switch {
		case a >= 0 && b >= 0:
			return set.cmpKey(int(a), int(b))
		case a < 0 && b < 0:
			return strings.Compare(g.rows[-1-a].Key, g.rows[-1-b].Key)
		case a < 0:
			return strings.Compare(g.rows[-1-a].Key, set.key(int(b)))
		}
		return strings.Compare(set.key(int(a)), g.rows[-1-b].Key)
	})
	g.order = kept
	return nil
}
