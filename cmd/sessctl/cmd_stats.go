package main

import (
	"context"
	"fmt"
	"github.com/sessctl/sessctl/pkg/usage/price"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessctl/sessctl/internal/resident"
	"github.com/sessctl/sessctl/pkg/index"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/stats"
	"github.com/sessctl/sessctl/pkg/usage"
	"github.com/urfave/cli/v2"
)

type statsOptions struct {
	roots    []string
	bySet    bool // --by was given
	args     []string
	all      bool
	agent    session.Agent
	project  string
	since    time.Time
	by       string
	json     bool
	color    bool
	window   int
	top      int
	loc      *time.Location
	progress bool
	exact    bool
	index    bool // read through the index (docs/index.md)
}

func statsCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "stats",
		Usage:     "token statistics: context now, tokens consumed, and where the tokens are",
		ArgsUsage: "[SESSION|PATH...]",
		Description: "With one SESSION (a file, a Kimi session directory or an id prefix): how full the\n" +
			"context is now, recorded consumption, estimated tokens by role and tool, the largest\n" +
			"records and the growth per turn. With --all, --project, --agent, --since, several\n" +
			"paths or none: recorded consumption of many sessions, grouped with --by.\n" +
			"Recorded numbers come from the API usage in the files; estimates are labelled.",
		Flags: []cli.Flag{
			rootFlag(), agentFlag(),
			&cli.BoolFlag{Name: "all", Usage: "every session found (the default without SESSION)"},
			&cli.StringFlag{Name: "project", Usage: "only sessions whose project or working directory contains `TEXT`"},
			&cli.StringFlag{Name: "since", Usage: "only sessions updated since `AGE|DATE` (7d, 12h, 2026-11-01)"},
			&cli.StringFlag{Name: "by", Value: "session", Usage: "group many sessions by `KEY`: session, project, day, model or agent"},
			&cli.IntFlag{Name: "window", Usage: "context window in `TOKENS` (overrides the model's)"},
			&cli.StringFlag{Name: "prices", Usage: "price the tokens by the table in `FILE` instead of the embedded one (docs/cost.md)"},
			&cli.IntFlag{Name: "top", Value: 10, Usage: "show the `N` largest records"},
			&cli.StringFlag{Name: "tz", Usage: "time zone for --by day (IANA name, e.g. UTC; default local)"},
			&cli.BoolFlag{Name: "heuristic", Usage: "estimate with the bytes/4 heuristic instead of the tokenizer (faster, rougher)"},
			noProgressFlag(), noIndexFlag(),
			jsonFlag(), noColorFlag(),
		},
		Action: func(c *cli.Context) error {
			opt := statsOptions{roots: c.StringSlice("root"), args: c.Args().Slice(), all: c.Bool("all"),
				project: c.String("project"), by: c.String("by"), json: c.Bool("json"), window: c.Int("window"),
				top: c.Int("top"), color: useColor(env.stdout, env, c.Bool("no-color")), exact: !c.Bool("heuristic"),
				progress: progressWanted(env, c), index: indexWanted(env, c)}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			if opt.since, err = sinceOpt(env, c); err != nil {
				return err
			}
			if f := c.String("prices"); f != "" {
				if err := loadPrices(f); err != nil {
					return err
				}
			}
			switch opt.by {
			case stats.BySession, stats.ByProject, stats.ByDay, stats.ByModel, stats.ByAgent:
			default:
				return usageErrorf("unknown --by %q", opt.by).withHint("use session, project, day, model or agent")
			}
			if opt.window < 0 {
				return usageErrorf("--window must be a positive number of tokens")
			}
			if opt.top < 0 {
				return usageErrorf("--top must not be negative")
			}
			opt.loc = time.Local
			if tz := c.String("tz"); tz != "" {
				loc, err := time.LoadLocation(tz)
				if err != nil {
					return usageErrorf("unknown time zone %q", tz).withHint("use an IANA name such as UTC or Europe/Berlin")
				}
				opt.loc = loc
			}
			opt.bySet = c.IsSet("by")
			return runStats(c.Context, env, opt)
		},
	}
}

func runStats(ctx context.Context, env *appEnv, opt statsOptions) error {
	// one SESSION is the one-session report; a grouping asked for, a filter,
	// or a directory that holds several sessions is the many-session one
	// (`stats --by project ~/.claude/projects` is documented)
	filtered := opt.all || opt.agent != "" || opt.project != "" || !opt.since.IsZero() || opt.bySet
	if len(opt.args) == 1 && !filtered && !holdsSeveral(opt.args[0]) {
		s, err := resolveSession(env, opt.roots, opt.args[0])
		if err != nil {
			return err
		}
		defer boundMemory([]*session.Session{s})()
		return runStatsOne(ctx, env, namedFile(s, opt.args[0]), opt)
	}
	// the pages of the executable its start touched (internal/resident),
	// and again at the end of each phase below
	resident.ShedExecutable()
	// the index serves discovery too (its snapshots, docs/index.md); the
	// run closes it once the files are read
	ix := openIndex(env, opt.index)
	// the sessions stay packed (session.Packed) unless the run needs
	// them all as values: to read their heads (--project, --by project)
	// or to keep their requests (--by day, --by model)
	pack := opt.project == "" && (opt.by == stats.BySession || opt.by == stats.ByAgent)
	ss, err := usageList(env, opt.roots, opt.args, opt.agent, opt.since, ix, pack)
	if err != nil {
		closeIndex(ix)
		return err
	}
	grow, restore := boundScanMemory(ss)
	defer restore()
	defer usageBudget(env)()
	if err := runStatsMany(ctx, env, ss, opt, ix, grow); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// discoveryGCPercent is GOGC while stats discovers its sessions, unless
// the user set GOGC.
const discoveryGCPercent = 50

// scanGCPercent is GOGC while the index serves a run of stats over many
// sessions (stats.LargeRun or more), unless the user set GOGC: until the
// index has missed paceMisses files (afterMisses); from then on the run
// fills the index, and is paced as before. Once discovery's sessions are
// let go and their pages given back (stats' consume), what is live is the
// scan's plan and state, and under GOGC=100 the heap grew to twice that:
// over 100,000 sessions 46 MiB of anonymous memory beside the index's and
// the executable's pages (18), the peak of a warm run. A run that reads
// every file (a first one, or one without the index) paced so took 5-7 %
// more time.
const scanGCPercent = 50

// holdLessFrom is how many sessions a run of stats scans from which the
// index holds less of itself between two sheds (Index.HoldLess): where
// the scan's budget (boundScanMemory: 28 MiB and, when this was placed,
// 256 bytes a session), the index's 8 MiB of pages (its residentBytes)
// and the executable's 9 left no room under 64 MB, (64 - 28 - 8 - 9) MiB
// / 256 bytes. The scan's peak of a warm run over 100,000 sessions was
// there: 45 MiB of anonymous memory and 18 of files. The budget is 176
// bytes a session since; the line stays where it was measured, as do
// those of fillingMisses, which depend on it.
const holdLessFrom = 77_824

// paceMisses is how many files the index may miss in a run before the run
// is no longer paced at scanGCPercent: a warm run reads the few files that
// changed since the last (a live session), a first run misses every file.
const paceMisses = 16

// discoveryLimit is the soft memory limit while stats discovers its
// sessions, unless the user set one (GOMEMLIMIT): the run's own limit
// (boundScanMemory) is counted from the sessions, and so comes after.
// Under GOGC=50 alone discovery's heap grew to half as much again as what
// was live, and what is live grows with the store: over 70,000 sessions a
// first run peaked there (39 MB live; 69–73 MiB resident). 48 MiB leaves
// 64 MB room for the executable's pages and the runtime's own. A store
// whose discovery holds less than about 32 MB (some 50,000 sessions) never
// reaches it; over 100,000 sessions what is live passes it, and the
// collector runs often (the runtime gives it at most half the CPU time):
// paired, a first run there peaked at 75 MiB instead of 92, for 9 % more
// wall time and 16 % more CPU time.
const discoveryLimit = 48 << 20

// discoveryShedEvery is how often stats gives back the executable's pages
// while it discovers its sessions (usageSessions).
const discoveryShedEvery = 250 * time.Millisecond

// softLimit sets the runtime's soft memory limit to n unless the user set
// one (GOMEMLIMIT), and returns whether it did and the restore.
func softLimit(n int64) (set bool, restore func()) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return false, func() {}
	}
	old := debug.SetMemoryLimit(n)
	return true, func() { debug.SetMemoryLimit(old) }
}

// usageSessions finds the sessions whose recorded usage stats counts for
// many sessions (and export --usage exports): those of agent (all when
// empty) updated since since, each session stored twice counted once.
//
// ix, when open, gives discovery its snapshot (discoverIndexed).
//
// Discovery comes before the memory limit of the run (boundMemoryAt needs
// the sessions), and most of what it allocates is garbage: left to
// GOGC=100 its heap doubled over what was live, the peak of a first run
// over 100,000 sessions. So it runs at discoveryGCPercent and under
// discoveryLimit, and gives back the executable's pages it touched
// (internal/resident).
func usageSessions(env *appEnv, roots, args []string, agent session.Agent, since time.Time, ix *index.Index) ([]*session.Session, error) {
	l, err := usageList(env, roots, args, agent, since, ix, false)
	if err != nil {
		return nil, err
	}
	return session.Sessions(l), nil
}

// usageList is usageSessions, with pack the sessions packed
// (session.Packed) when no paths are named: over a large store they are
// most of what discovery holds as values.
func usageList(env *appEnv, roots, args []string, agent session.Agent, since time.Time, ix *index.Index, pack bool) (session.List, error) {
	paced := paceGC(env.getenv, discoveryGCPercent)
	_, unlimit := softLimit(discoveryLimit)
	// the walk touches code as it goes (each fault maps 64 KiB around
	// it), 8-10 MB of the executable at its end over 100,000 sessions,
	// where a first run peaks; shed every 250 ms it holds less (paired,
	// medians of 5: a first run 60.0 -> 58.7 MiB, --no-index 57.3 -> 56.4,
	// in the same time; 100 ms did no better)
	stopShed := resident.ShedEvery(discoveryShedEvery)
	var res *session.Result
	if pack {
		res = discoverPacked(env, roots, args, ix)
	} else {
		res = discoverIndexed(env, roots, args, ix)
	}
	stopShed()
	// the limit and pace hold until the sessions are picked, and the
	// caller sets the run's own next (boundScanMemory, boundMemory). Let
	// go as soon as discovery was done, with the limit gone and GOGC back
	// at 100 while the sessions were picked, the heap grew there with
	// hardly a collection: the peak of a run without the index over
	// 100,000 sessions (paired: 62.7 MiB, 57.7 held; 150,000 sessions
	// 87.4 and 80.5; in the same time)
	defer paced()
	defer unlimit()
	resident.ShedExecutable()
	if err := discoveryProblems(env, res, res.List().Len() == 0); err != nil {
		return nil, err
	}
	// a session stored twice (a Codex rollout in sessions/ and in
	// archived_sessions/) is counted once
	if p := res.Packed; p != nil {
		if agent != "" || !since.IsZero() {
			p.Keep(func(i int) bool { return kept(p.At(i), agent, since) })
		}
		usage.DistinctPacked(p)
		return p, nil
	}
	return session.Slice(usage.Distinct(keep(res.Sessions, agent, since))), nil
}

// holdsSeveral reports whether path is a directory with more than one
// session below it (a Kimi session directory holds one).
func holdsSeveral(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	return len(session.DiscoverPaths([]string{path}).Sessions) > 1
}

// boundMemory sets the Go runtime's soft memory limit for a run over ss to
// what the work needs: 28 MiB, twice the longest line it may hold (no line
// is longer than the largest file, nor than the line bound), and 512 bytes
// a session. Stats reads a huge line more than once (usage, turns,
// estimates) and each pass leaves a few copies of it as garbage; left to
// its default pacing the collector lets the heap double over them, and a
// 20 MB line took over 250 MB. The limit is soft: the collector works
// harder near it and never fails an allocation. A limit set by the user
// (GOMEMLIMIT) is kept. It returns the restore.
//
// The limit is what keeps stats under 64 MB: the process holds its binary
// (about 16 MB resident) and some of the index's pages besides, and left to
// its pacing the heap doubles over what is live. 28 MiB covers the rest of
// a run: the requests the ledger holds before it spills (usage.MemoryBudget),
// the files being read and the index's writes. At 1 KiB a session (before
// stats' results went to disk) over 100,000 sessions the heap stayed above
// the limit and the collector ran without a pause, 7.5 s of a 17.6 s run's
// CPU time. 512 bytes a session is for a caller that keeps discovery's
// sessions to its end (export --usage: at 384 it took 25 % more CPU time
// over 40,000 sessions); stats over many sessions lets them go and has a
// limit of its own (boundScanMemory).
func boundMemory(ss []*session.Session) func() {
	_, restore := boundMemoryAt(session.Slice(ss), 512)
	return restore
}

// boundMemoryAt is boundMemory at perSession bytes a session; set says
// whether it set a limit (the user set none).
func boundMemoryAt(ss session.List, perSession int64) (set bool, restore func()) {
	var longest int64
	for i := range ss.Len() {
		for _, f := range ss.At(i).Files {
			if !f.Dir {
				longest = max(longest, f.Size)
			}
		}
	}
	longest = min(longest, jsonl.DefaultMaxLineSize)
	return softLimit(28<<20 + 2*longest + perSession*int64(ss.Len()))
}

// boundScanMemory is boundMemory for stats over many sessions, at 176 bytes
// a session: its scan lets discovery's sessions go and holds about 200
// bytes of each while the files are read and its results are made (its
// plan, about 75 bytes a file with its path front-coded, its accumulator,
// 40, its place in the report; stats.scanPlan), and keeps the results on
// disk (stats.ManyReport). 256 until the accumulator went from 80 bytes to
// 40: paired over 100,000 sessions, 216 took a warm run from 62.1 to 56.1
// MiB and a first run from 61.8 to 59.9, in the same time; 192 lowered
// neither further, for their peaks were in discovery then. Since
// discovery's sessions stay packed until the plan is made, every phase
// after discovery makes garbage up to the limit, and the limit is the
// peak: 176 took a run over 150,000 sessions (paired, medians) from 63.1
// to 58.1 MiB without the index, a first run from 67.6 to 64.5 and a
// warm one from 67.6 to 64.3 (5 % more wall time), and over 100,000
// sessions --no-index from 52.5 to 49.0 (the same time; warm 54.1
// either way). 150 took 8-10 % more CPU time. A session's tally is made only while its
// requests are counted (stats' tallyEach), unless the session is counted
// as its file is merged (Codex's rollouts: 104 bytes more and a list of
// models). At 512 bytes (before the scan's state held no pointers) a
// first run over 100,000 sessions collected 471 times. At 384 (while every
// session had a tally) 288 lowered the peaks, but for 8–18 % more time;
// without the tallies 256 lowered every peak, paired: warm over 70,000
// sessions 58.4 against 65.7 MiB (3.5 % more wall time), a first run 60.0
// against 67.9 (two calls), a first run over 100,000 sessions 73.6
// against 84.4, and over 10,000 to 40,000 sessions 1–4 MiB, in the same
// time. grow adds indexWriteRoom to the limit it set, once, and nothing
// when the user set one: see readRoomy.
func boundScanMemory(ss session.List) (grow, restore func()) {
	return boundGrowing(ss, 176)
}

// boundGrowing is boundMemoryAt with grow, which adds indexWriteRoom to
// the limit it set, once (nothing when the user set one).
func boundGrowing(ss session.List, perSession int64) (grow, restore func()) {
	set, restore := boundMemoryAt(ss, perSession)
	if !set {
		return func() {}, restore
	}
	return sync.OnceFunc(func() { debug.SetMemoryLimit(debug.SetMemoryLimit(-1) + indexWriteRoom) }), restore
}

// indexWriteRoom is what the memory limit of stats over many sessions
// grows by in a run that fills the index: it holds the entries pending a
// spill (up to the index's 1 MiB), 32 bytes for each spilled, and bbolt's
// pages while they are written at the end. A first run over 20,000
// sessions took 11 % more CPU time without it (when the entries were
// written every 8 MiB as the run went).
const indexWriteRoom = 4 << 20

// readRoomy reads a file's usage through ix, and calls grow (from
// boundScanMemory) once the index has missed misses files read so
// (limitMisses, or fillingMisses of it): a warm run reads only the few
// files that changed. What the index missed before (the heads --by
// project reads) does not count.
func readRoomy(ix *index.Index, grow func(), misses int) stats.ReadFile {
	return afterMisses(ix, ix.ReadUsage, misses, grow)
}

// fillingMisses is how many files the index may miss in a run over n
// sessions before the run is taken as one that fills it, and given the
// room and pace of a first run (readRoomy, scanGCPercent): k, and where
// the index holds less of itself (holdLessFrom) a quarter of n. A run that
// finds some thousands of files new among 100,000 (those of the days since
// the last) reads mostly through the index, and with a first run's room
// and pace on top of the index's pages it maps it peaked at 67.5 MiB with
// 2,000 new sessions, 67.8 with 20,000; at 61.7 and 61.5 so, in the same
// time (paired). A first run there is as high and as fast either way; over
// 70,000 sessions it took 9 % more wall time at a quarter.
func fillingMisses(n, k int) int {
	if n < holdLessFrom {
		return k
	}
	return max(k, n/4)
}

// afterMisses is read, calling fn once ix has missed n files in it (what
// it missed before does not count); read itself without the index.
func afterMisses(ix *index.Index, read stats.ReadFile, n int, fn func()) stats.ReadFile {
	if ix == nil {
		return read
	}
	base := missed(ix)
	var done atomic.Bool
	return func(ctx context.Context, rd *usage.Reader, path string, a session.Agent, sc usage.Scanner, class usage.FileClass) (*usage.FileUsage, error) {
		fu, err := read(ctx, rd, path, a, sc, class)
		if !done.Load() && missed(ix)-base >= n {
			done.Store(true)
			fn()
		}
		return fu, err
	}
}

// usageBudget applies SESSCTL_USAGE_BUDGET, how many requests the usage
// ledger holds in memory before it spills to disk (usage.MemoryBudget;
// docs/export.md): a knob for tests and measurements, unset in use. It
// returns the restore.
func usageBudget(env *appEnv) func() {
	n, err := strconv.Atoi(env.getenv("SESSCTL_USAGE_BUDGET"))
	if err != nil || n <= 0 {
		return func() {}
	}
	old := usage.SetMemoryBudget(n)
	return func() { usage.SetMemoryBudget(old) }
}

// bar renders a fraction as [#####     ].
func bar(frac float64, width int) string {
	if frac < 0 {
		frac = 0
	}
	n := int(frac*float64(width) + 0.5)
	if n > width {
		n = width
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(" ", width-n) + "]"
}

// statsManyJSON is stats --json for many sessions.
type statsManyJSON struct {
	By string `json:"by"`
	// Totals is sessctl's count, AsCCUsage ccusage's (each says so in its
	// "view"); InRotations the part of Totals only rotations hold.
	Totals      usage.Totals  `json:"recorded"`
	AsCCUsage   usage.Totals  `json:"as_ccusage"`
	InRotations *usage.Totals `json:"in_rotations,omitempty"`
	// Groups and Sessions are written element by element
	// (writeJSONStream): Groups from stats.Groups, row by row
	Groups   []stats.GroupRow      `json:"groups"`
	Sessions []*stats.SessionUsage `json:"sessions"`
	Rejected int                   `json:"rejected_lines"`
	Corrupt  int                   `json:"corrupt_lines"`
	// CountedNotByCCUsage counts lines sessctl counts that ccusage drops
	// silently (spaced JSON and the other cases in docs/stats.md).
	CountedNotByCCUsage int `json:"counted_not_by_ccusage"`
}

// runStatsMany closes ix (nil: no index) once it has read the files.
// grow (boundScanMemory) gives the memory limit room for the index's
// writes.
func runStatsMany(ctx context.Context, env *appEnv, list session.List, opt statsOptions, ix *index.Index, grow func()) error {
	// a project is its real working directory, as ls shows it: Claude Code's
	// and clawdcode's folder names are escaped paths (one directory would
	// be two projects beside Codex's cwd), so their transcripts' head says
	var cwds map[*session.Session]string
	if opt.project != "" || opt.by == stats.ByProject {
		// these runs have their sessions as values (runStats packs none)
		ss := session.Sessions(list)
		cwds = projectPaths(ss, ix)
		if opt.project != "" {
			// a session whose path names no project (a Codex rollout) has
			// its working directory in the file, known only once read; the
			// others are filtered before the scan
			in := ss[:0:0]
			for _, s := range ss {
				if s.Project == "" || strings.Contains(s.Project, opt.project) || strings.Contains(cwds[s], opt.project) {
					in = append(in, s)
				}
			}
			ss = in
		}
		list = session.Slice(ss)
	}
	// each result's working directory, by its place (the result of the
	// scan is in the order of ss, and keeps none of discovery's sessions,
	// which go once their files are read)
	var cwdOf []string
	if cwds != nil {
		cwdOf = make([]string, list.Len())
		for i := range cwdOf {
			cwdOf[i] = cwds[list.At(i)]
		}
		cwds = nil
	}
	n := list.Len()
	pr := newProgress(ctx, env, opt.progress, "scanning", 0, unitBytes)
	// the report keeps the results on disk as they come
	// (stats.ManyReport), and holds a few bytes of each; the rows by day
	// or by model are made of the requests themselves, which the index's
	// memo of whole runs does not keep: those runs are worked out whole
	byRequests := opt.by == stats.ByDay || opt.by == stats.ByModel
	read := readRoomy(ix, grow, fillingMisses(n, limitMisses))
	if n >= holdLessFrom {
		ix.HoldLess()
	}
	if ix != nil && n >= stats.LargeRun {
		unpace := sync.OnceFunc(paceGC(env.getenv, scanGCPercent))
		defer unpace()
		read = afterMisses(ix, read, fillingMisses(n, paceMisses), unpace)
	}
	rep, err := stats.NewManyReport(opt.by, n)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer rep.Close()
	// once the scan has read every byte, the index writes its new entries
	// and gives back the pages its look-ups mapped (Index.Flush), rather
	// than when it closes after the last result: the merge of the requests
	// and the results in between are the peak of the run. (An error drops
	// the entries: the next run reads those files again. Files of no bytes
	// may still be looked up after it: their entries wait for the close.)
	flush := sync.OnceFunc(func() {
		ix.Flush()
		resident.ShedExecutable() // the scan's
	})
	scanned := func(done, total int64) {
		pr.set(done, total)
		if done >= total {
			flush()
		}
	}
	// add gives the result of the session at place i its working
	// directory, and counts it when its project is the one asked for
	add := func(i int, su *stats.SessionUsage) error {
		if cwdOf != nil && cwdOf[i] != "" {
			su.CWD = cwdOf[i]
		}
		if opt.project != "" && !strings.Contains(su.Project, opt.project) && !strings.Contains(su.CWD, opt.project) {
			return nil
		}
		return rep.Add(i, su)
	}
	var groups *stats.Groups
	if byRequests {
		// each result kept on disk as it comes, and the requests kept
		// (on disk past the ledger's budget) for the rows
		rq, err := stats.ConsumptionRequests(ctx, session.Sessions(list), scanned, read, add)
		closeIndex(ix)
		pr.done()
		if err != nil {
			return err
		}
		defer rq.Close()
		if groups, err = stats.GroupRequests(ctx, rq, opt.by, opt.loc, rep.Counted); err != nil {
			return err
		}
	} else {
		// the result of the whole run comes from the index when no file
		// changed since the same run before
		var memo stats.Memo
		if ix != nil {
			memo = ix
		}
		err = stats.ConsumptionEach(ctx, list, scanned, read, memo, add)
		closeIndex(ix)
		pr.done()
		if err != nil {
			return err
		}
	}
	own, err := rep.Finish() // the totals are final from here
	if err != nil {
		return err
	}
	if groups == nil {
		groups = own
	}
	out := statsManyJSON{By: opt.by, Totals: rep.Totals, AsCCUsage: rep.AsCCUsage, InRotations: rep.InRotations,
		Rejected: rep.Rejected, Corrupt: rep.Corrupt, CountedNotByCCUsage: rep.SessctlOnly}
	if opt.json {
		out.Groups, out.Sessions = []stats.GroupRow{}, []*stats.SessionUsage{}
		// a row or session that cannot be read back stops the output
		return writeJSONStream(env.stdout, out,
			jsonArray{"groups", groups.Len(), func(i int) (any, error) {
				r := groups.Row(i)
				return r, groups.Err()
			}},
			jsonArray{"sessions", rep.Len(), func(k int) (any, error) { return rep.Session(k) }})
	}
	if rep.Len() == 0 {
		fmt.Fprintf(env.stderr, "sessctl: no sessions found in %s\n", line(searched(env, opt.roots, opt.args)))
		return nil
	}
	renderGroups(env.stdout, out, rep, groups, colorer{opt.color})
	return groups.Err()
}

// projectPaths returns the real working directory of the sessions among
// ss where their path does not say it: an absolute Project is one (Kimi's
// kimi.json names it); otherwise the transcript's head does (Claude Code's
// and clawdcode's folder names are escaped paths; Codex's comes with its
// usage scan as well).
//
// The heads are read by a few readers side by side: a store of 100,000
// Claude Code sessions is 100,000 files to open.
func projectPaths(ss []*session.Session, ix *index.Index) map[*session.Session]string {
	return headCWDs(ss, false, ix)
}

// headCWDs is projectPaths; keyless also reads the heads of the sessions
// whose path names no project (Codex: the rollout's session_meta).
func headCWDs(ss []*session.Session, keyless bool, ix *index.Index) map[*session.Session]string {
	cwds := session.ReadHeads(context.Background(), ss, func(s *session.Session) string {
		switch {
		case filepath.IsAbs(s.Project):
			return s.Project
		case s.Project != "" || keyless:
			return ix.HeadOf(s, "cwd", session.HeadCWD)
		}
		return ""
	})
	out := make(map[*session.Session]string, len(ss))
	for i, s := range ss {
		if cwds[i] != "" {
			out[s] = cwds[i]
		}
	}
	return out
}

// sessctlView and ccusageView say, in the text output, which count a
// number is (the JSON says it in each totals object's "view").
const (
	sessctlView = "sessctl's count: every file of each session, rotations and subagents included, each request once"
	ccusageView = "ccusage 20.0.24's count: the *.jsonl files only, no rotations, by its rules"
)

// renderGroups draws the table of groups; out holds the totals (its
// Groups and Sessions are not used), rep the sessions.
func renderGroups(w io.Writer, out statsManyJSON, rep *stats.ManyReport, groups *stats.Groups, col colorer) {
	fmt.Fprintf(w, "Recorded usage by %s (tokens the APIs reported; cache read/write counted apart)\n", out.By)
	fmt.Fprintf(w, "%s\n\n", sessctlView)
	var short func(string) string
	if out.By == stats.BySession {
		short = shortIDs(rep.IDs())
	}
	head := []string{strings.ToUpper(out.By), "AGENT", "SESSIONS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL", "COST", "MODELS"}
	byAgent := out.By == stats.ByAgent // the key is the agent: one AGENT column
	if byAgent {
		head = append(head[:1], head[2:]...)
	}
	// one row at a time, measured then written (drawRows): 100,000
	// sessions are 100,000 rows, which tablewriter held several times over
	cells := func(g *stats.GroupRow) []string {
		key := g.Key
		if out.By == stats.BySession {
			if _, id, ok := strings.Cut(key, ":"); ok {
				key = short(id)
			}
		}
		models := g.Totals.Models()
		if len(models) > 2 {
			models = append(models[:2], fmt.Sprintf("+%d", len(models)-2))
		}
		for i := range models {
			models[i] = line(models[i])
		}
		row := []string{ellipsis(line(key), 40), strings.Join(g.Agents, ","), thousands(int64(g.Sessions)),
			thousands(g.Totals.Input), thousands(g.Totals.Output), thousands(g.Totals.CacheRead), thousands(g.Totals.CacheCreation),
			col.bold(thousands(g.Totals.Total())), dollars(g.Totals), strings.Join(models, ",")}
		if byAgent {
			row = append(row[:1], row[2:]...)
		}
		return row
	}
	total := []string{"TOTAL", "", thousands(int64(rep.Len())), thousands(out.Totals.Input), thousands(out.Totals.Output),
		thousands(out.Totals.CacheRead), thousands(out.Totals.CacheCreation), col.bold(thousands(out.Totals.Total())), dollars(out.Totals), ""}
	if byAgent {
		total = append(total[:1], total[2:]...)
	}
	drawRows(w, head, groups.Len()+1, func(k int, ws []int) []string {
		row := total
		if k < groups.Len() {
			g := groups.Row(k)
			row = cells(&g)
		}
		for i, c := range row {
			ws[i] = cellWidth(c)
		}
		return row
	})
	var notes []string
	if out.Rejected > 0 {
		notes = append(notes, fmt.Sprintf("%s could not be counted", plural(out.Rejected, "usage line")))
	}
	if out.Corrupt > 0 {
		// not the CORRUPT of ls: the usage scan validates only the lines
		// that can carry usage (docs/stats.md)
		notes = append(notes, fmt.Sprintf("%s that could carry usage %s unreadable", plural(out.Corrupt, "line"), isAre(out.Corrupt)))
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s %s (--json has them per session; sessctl check shows every damaged line)\n",
			col.yellow("note:"), strings.Join(notes, ", "))
	}
	renderUnpriced(w, out.Totals, col, "")
	if out.InRotations != nil {
		fmt.Fprintf(w, "note: %s of these tokens are only in rotations (turns a revert removed); ccusage does not count them\n",
			thousands(out.InRotations.Total()))
	}
	if rep.CCUsageView && out.AsCCUsage.Total() != out.Totals.Total() {
		fmt.Fprintf(w, "%s: %s tokens (%s)\n", col.dim("ccusage"), thousands(out.AsCCUsage.Total()), ccusageView)
	}
	if differ := rep.ViewsDiffer; differ > 0 {
		fmt.Fprintf(w, "note: in %s the per-response usage records and the cumulative counters ccusage reads disagree; sessctl counts the records (stats SESSION says why)\n",
			plural(differ, "session"))
	}
	if out.CountedNotByCCUsage > 0 {
		fmt.Fprintf(w, "note: %s counted here %s dropped silently by ccusage (e.g. JSON with spaces after colons); see docs/stats.md\n",
			plural(out.CountedNotByCCUsage, "usage line"), isAre(out.CountedNotByCCUsage))
	}
}

// statsNotYet is stats --json of an empty file whose agent is not known
// yet (docs/stats.md).
type statsNotYet struct {
	Agent   session.Agent `json:"agent"`
	ID      string        `json:"id"`
	Main    string        `json:"main"`
	Records int           `json:"records"`
}

func runStatsOne(ctx context.Context, env *appEnv, s *session.Session, opt statsOptions) error {
	if s.Agent == session.Unknown { // an empty file: nothing yet
		if opt.json {
			return writeJSON(env.stdout, statsNotYet{Agent: s.Agent, ID: s.ID, Main: s.Main})
		}
		notYet(env, s)
		return nil
	}
	pr := newProgress(ctx, env, opt.progress, "reading", 0, unitBytes)
	rep, err := stats.Analyze(ctx, s, stats.Options{Window: opt.window, Top: opt.top, Heuristic: !opt.exact, Progress: pr.set})
	pr.done()
	if err != nil {
		return err
	}
	if opt.json {
		return writeJSON(env.stdout, rep)
	}
	renderReport(env.stdout, rep, colorer{opt.color})
	return nil
}

func pct(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", float64(part)*100/float64(whole))
}

func renderReport(w io.Writer, rep *stats.Report, col colorer) {
	su := rep.Consumption
	fmt.Fprintf(w, "%s %s %s\n", col.bold("Session"), rep.Agent, line(rep.ID))
	if rep.Project != "" {
		fmt.Fprintf(w, "Project  %s\n", line(rep.Project))
	}
	extra := ""
	if n := len(su.Files) - 1; n > 0 {
		extra = fmt.Sprintf(" (+%s more with usage)", plural(n, "file"))
	}
	fmt.Fprintf(w, "File     %s%s\n", line(rep.Main), extra)
	model := rep.Model
	if model == "" {
		model = "(unknown)"
	}
	win := rep.Window
	fmt.Fprintf(w, "Model    %s, window %s tokens (%s), usable budget %s, compaction at %s\n\n",
		line(model), thousands(int64(win.Tokens)), win.Source, thousands(int64(win.Usable)), thousands(int64(win.CompactAt)))

	c := rep.Context
	est := rep.Estimate
	estLabel := est.Method + ", an estimate for this model"
	if est.Exact {
		estLabel = est.Method + ", exact for this model"
	}
	fmt.Fprintln(w, col.bold("Context now"))
	if c.Recorded >= 0 {
		fmt.Fprintf(w, "  recorded   %s tokens (%s)\n", thousands(c.Recorded), c.RecordedSource)
	} else {
		fmt.Fprintf(w, "  recorded   - (the files record no context size)\n")
	}
	fmt.Fprintf(w, "  estimated  %s tokens of text since the last compaction (%s)\n", thousands(c.Estimated), estLabel)
	frac := c.Percent / 100
	b := bar(frac, 30)
	switch {
	case c.Left < 0:
		b = col.red(b)
	case frac >= 0.6:
		b = col.yellow(b)
	default:
		b = col.green(b)
	}
	left := fmt.Sprintf("%s tokens left before compaction", thousands(c.Left))
	if c.Left < 0 {
		left = col.red(fmt.Sprintf("%s tokens past the compaction threshold", thousands(-c.Left)))
	}
	fmt.Fprintf(w, "  %s %5.1f%% of %s (%s) — %s\n\n", b, c.Percent, thousands(int64(win.Tokens)), c.Basis, left)

	t := su.Totals
	fmt.Fprintf(w, "%s (recorded usage, %s; %s)\n", col.bold("Consumption"), plural(t.Requests, "request"),
		strings.Replace(sessctlView, "each session", "the session", 1))
	if t.Requests == 0 {
		if ex, ok := session.As[usage.Explainer](rep.Agent); ok && len(su.Files) == 0 {
			fmt.Fprintf(w, "  no recorded usage: %s, and this session has none\n", ex.WhereUsage())
		} else {
			fmt.Fprintln(w, "  no recorded usage in this session")
		}
	} else {
		tw := trimWriter(w)
		tb := newTable(tw, "  MODEL", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL")
		for _, m := range t.Models() {
			u := t.ByModel.Get(m)
			tb.Append([]string{"  " + line(m), thousands(u.Input), thousands(u.Output), thousands(u.CacheRead), thousands(u.CacheCreation), thousands(u.Total())})
		}
		tb.Append([]string{"  total", thousands(t.Input), thousands(t.Output), thousands(t.CacheRead), thousands(t.CacheCreation), col.bold(thousands(t.Total()))})
		tb.Render()
		flushTable(tw)
		if t.Reasoning > 0 {
			fmt.Fprintf(w, "  (output includes %s reasoning tokens)\n", thousands(t.Reasoning))
		}
		client := ""
		if cc := rep.ClientCheck; cc != nil && cc.CostUSD != nil {
			client = fmt.Sprintf("; the client's own: %s (%s, line %d)", usd(*cc.CostUSD), line(cc.Source), cc.Line)
		}
		fmt.Fprintf(w, "  cost: %s (%s)%s\n", dollars(t), pricesNote(), client)
		renderUnpriced(w, t, col, "  ")
	}
	if su.InRotations != nil {
		fmt.Fprintf(w, "  note: %s of these tokens are only in rotations (turns a revert removed)\n", thousands(su.InRotations.Total()))
	}
	if cc := su.AsCCUsage; cc != nil && cc.Total() != t.Total() {
		fmt.Fprintf(w, "  ccusage: %s tokens in %s (%s)\n", thousands(cc.Total()), plural(cc.Requests, "request"),
			strings.Replace(ccusageView, "the *.jsonl files", "this session's *.jsonl files", 1))
	}
	if su.ViewsDiffer != "" {
		fmt.Fprintf(w, "  %s %s\n", col.yellow("note:"), line(su.ViewsDiffer))
	}
	renderClientCheck(w, rep.ClientCheck, col)
	if su.Rejected > 0 {
		fmt.Fprintf(w, "  %s %s not counted:", col.yellow("note:"), plural(su.Rejected, "usage line"))
		for i, d := range su.RejectedLines {
			if i == 3 {
				fmt.Fprint(w, " …")
				break
			}
			fmt.Fprintf(w, " line %d (%s)", d.Line, line(d.Reason))
		}
		fmt.Fprintln(w)
	}
	if su.SessctlOnly > 0 {
		fmt.Fprintf(w, "  note: %s counted here %s dropped silently by ccusage (first: line %d, %s)\n",
			plural(su.SessctlOnly, "line"), isAre(su.SessctlOnly), su.SessctlLines[0].Line, line(su.SessctlLines[0].Reason))
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "%s (estimated, %s; main transcript, %s tokens)\n", col.bold("Where the tokens are"), est.Method, thousands(est.Total))
	tw := trimWriter(w)
	tb := newTable(tw, "  ROLE", "RECORDS", "TOKENS", "SHARE")
	for _, r := range rep.ByRole {
		tb.Append([]string{"  " + line(r.Role), thousands(int64(r.Records)), thousands(r.Tokens), pct(r.Tokens, est.Total)})
	}
	tb.Render()
	flushTable(tw)
	if len(rep.ByTool) > 0 {
		fmt.Fprintln(w)
		tw = trimWriter(w)
		tb = newTable(tw, "  TOOL", "CALLS", "CALL TOKENS", "RESULTS", "RESULT TOKENS", "SHARE")
		for i, tt := range rep.ByTool {
			if i == 15 {
				tb.Append([]string{fmt.Sprintf("  … %d more", len(rep.ByTool)-15), "", "", "", "", ""})
				break
			}
			tb.Append([]string{"  " + line(tt.Name), thousands(int64(tt.Calls)), thousands(tt.CallTokens), thousands(int64(tt.Results)),
				thousands(tt.ResultTokens), pct(tt.CallTokens+tt.ResultTokens, est.Total)})
		}
		tb.Render()
		flushTable(tw)
		fmt.Fprintf(w, "  tool calls %s tokens (%s) vs tool results %s tokens (%s)\n", thousands(rep.Tools.CallTokens), thousands(int64(rep.Tools.Calls)),
			thousands(rep.Tools.ResultTokens), thousands(int64(rep.Tools.Results)))
	}
	if len(rep.Largest) > 0 {
		fmt.Fprintf(w, "\n%s\n", col.bold("Largest records"))
		tw = trimWriter(w)
		tb = newTable(tw, "  LINE", "ROLE", "TOKENS", "PREVIEW")
		for _, l := range rep.Largest {
			role := l.Role
			if l.Tool != "" {
				role += " " + l.Tool
			}
			tb.Append([]string{"  " + strconv.Itoa(l.Line), line(role), thousands(l.Tokens), ellipsis(line(l.Preview), 60)})
		}
		tb.Render()
		flushTable(tw)
	}
	if len(rep.Growth) > 0 {
		fmt.Fprintf(w, "\n%s per %s (estimated context at its end; recorded gauge where the file has one)\n", col.bold("Growth"), rep.GrowthUnit)
		rows := rep.Growth
		skipped := 0
		if len(rows) > 20 {
			skipped = len(rows) - 20
			rows = rows[skipped:]
		}
		if skipped > 0 {
			fmt.Fprintf(w, "  (%s not shown; --json has all)\n", plural(skipped, "earlier "+rep.GrowthUnit))
		}
		// a STATE column only when some turn is not live (rolled back,
		// rewound, compacted away): its number is then not what it was
		states := false
		for _, g := range rows {
			states = states || g.State != session.Live.String()
		}
		head := []string{"  " + strings.ToUpper(rep.GrowthUnit), "LINE", "ADDED", "ESTIMATED", "RECORDED"}
		if states {
			head = append(head, "STATE")
		}
		tw = trimWriter(w)
		tb = newTable(tw, head...)
		for _, g := range rows {
			rec := "-"
			if g.Recorded >= 0 {
				rec = thousands(g.Recorded)
			}
			row := []string{"  " + strconv.Itoa(g.N), strconv.Itoa(g.Line), thousands(g.Added), thousands(g.Estimated), rec}
			if states {
				row = append(row, strings.ReplaceAll(g.State, "_", " "))
			}
			tb.Append(row)
		}
		tb.Render()
		flushTable(tw)
	}
	if rep.Corrupt > 0 {
		var ls []string
		for _, n := range rep.CorruptLines {
			ls = append(ls, strconv.Itoa(n))
		}
		fmt.Fprintf(w, "\n%s %s in the main transcript (%s %s); skipped, not fatal\n",
			col.yellow("note:"), plural(rep.Corrupt, "corrupt line"), map[bool]string{true: "line", false: "lines"}[len(ls) == 1], strings.Join(ls, ", "))
	}
}

// clientFields are the names renderClientCheck gives the counts.
var clientFields = map[string]string{
	"input_tokens": "input", "output_tokens": "output", "cache_read_tokens": "cache read", "cache_creation_tokens": "cache write",
}

// renderClientCheck says whether the client's own running totals agree
// with sessctl's count, and where not.
func renderClientCheck(w io.Writer, cc *stats.ClientCheck, col colorer) {
	if cc == nil {
		return
	}
	where := fmt.Sprintf("%s, line %d", cc.Source, cc.Line)
	if cc.Agree {
		fmt.Fprintf(w, "  client: its own totals (%s) agree with this count\n", where)
		return
	}
	fmt.Fprintf(w, "  %s the client's own totals (%s) differ from this count:\n", col.yellow("client:"), where)
	tw := trimWriter(w)
	tb := newTable(tw, "    MODEL", "COUNT", "CLIENT", "SESSCTL", "DIFFERENCE")
	for _, d := range cc.Differences {
		diff := thousands(d.Difference)
		if d.Difference > 0 {
			diff = "+" + diff
		}
		tb.Append([]string{"    " + line(d.Model), clientFields[d.Field], thousands(d.Client), thousands(d.Counted), diff})
	}
	tb.Render()
	flushTable(tw)
}

// dollars is a cost for the tables: "$1.23", marked "+" when some tokens
// are of models the price table does not know (they are listed apart).
func dollars(t usage.Totals) string {
	d := usd(t.CostUSD)
	if len(t.Unpriced) > 0 {
		d += "+"
	}
	return d
}

// pricesNote says which price table the costs come from.
func pricesNote() string {
	return "prices of " + line(usage.Prices().Date) + ", docs/cost.md"
}

// renderUnpriced lists the models whose tokens have no price.
func renderUnpriced(w io.Writer, t usage.Totals, col colorer, indent string) {
	if len(t.Unpriced) == 0 {
		return
	}
	ms := make([]string, 0, len(t.Unpriced))
	for m := range t.Unpriced {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	for i, m := range ms {
		ms[i] = fmt.Sprintf("%s (%s tokens)", line(m), thousands(t.Unpriced[m]))
	}
	fmt.Fprintf(w, "%s%s no price for %s: not in the cost (--prices FILE adds them)\n", indent, col.yellow("note:"), strings.Join(ms, ", "))
}

// loadPrices replaces the embedded price table with the one in file.
func loadPrices(file string) error {
	f, err := jsonl.OpenRaw(file) // a regular file only: a FIFO must not hang stats
	if err != nil {
		return usageErrorf("--prices: %v", err)
	}
	defer f.Close()
	t, err := price.Read(f)
	if err != nil {
		return usageErrorf("--prices %s: %v", file, err)
	}
	usage.SetPrices(t)
	return nil
}

// usd writes dollars with cents, and with four decimals below a cent so
// that a small session does not read as free.
func usd(v float64) string {
	if v > 0 && v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}
