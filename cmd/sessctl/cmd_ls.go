package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/internal/resident"
	"github.com/sessctl/sessctl/pkg/index"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/termtext"
	"github.com/urfave/cli/v2"
)

type lsOptions struct {
	roots    []string
	paths    []string
	agent    session.Agent
	project  string
	since    time.Time
	limit    int
	json     bool
	color    bool
	progress bool
	index    bool // read through the index (docs/index.md)
}

func lsCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list sessions across agents, newest first",
		ArgsUsage: "[PATH...]",
		Flags: []cli.Flag{
			rootFlag(), agentFlag(),
			&cli.StringFlag{Name: "project", Usage: "only sessions whose project or working directory contains `TEXT`"},
			&cli.StringFlag{Name: "since", Usage: "only sessions updated since `AGE|DATE` (7d, 12h, 2026-11-01)"},
			&cli.IntFlag{Name: "limit", Aliases: []string{"n"}, Usage: "show at most `N` sessions"},
			jsonFlag(), noColorFlag(), noProgressFlag(), noIndexFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.Int("limit") < 0 {
				return usageErrorf("--limit must not be negative (0: no limit)")
			}
			opt := lsOptions{roots: c.StringSlice("root"), paths: c.Args().Slice(), project: c.String("project"),
				limit: c.Int("limit"), json: c.Bool("json"), color: useColor(env.stdout, env, c.Bool("no-color")),
				progress: progressWanted(env, c), index: indexWanted(env, c)}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			if opt.since, err = sinceOpt(env, c); err != nil {
				return err
			}
			return runLs(c.Context, env, opt)
		},
	}
}

// lsRow is one session in ls --json output.
type lsRow struct {
	Agent       session.Agent  `json:"agent"`
	ID          string         `json:"id"`
	Project     string         `json:"project"`
	CWD         string         `json:"cwd,omitempty"`
	Title       string         `json:"title"`
	TitleSource string         `json:"title_source,omitempty"`
	Updated     time.Time      `json:"updated"`
	Started     *time.Time     `json:"started,omitempty"`
	Records     int            `json:"records"`
	Size        int64          `json:"size"`
	Rotations   int            `json:"rotations"`
	Corrupt     int            `json:"corrupt_lines"`
	Main        string         `json:"main"`
	Files       []session.File `json:"files"`
	Error       string         `json:"error,omitempty"`
}

func runLs(ctx context.Context, env *appEnv, opt lsOptions) error {
	// discovery comes before any memory limit (boundLsMemory needs the
	// sessions), and over 100,000 sessions its heap doubled over 57 MB of
	// live data: a peak of 124-127 MiB in a first run, whatever the limit
	// later. Growing the heap by 70 % of what is live, not 100 %, took it to
	// 118-119 MiB; a warm run takes the same time (the limit rules it).
	defer paceGC(env.getenv, lsGCPercent)()
	// the executable's pages its start touched, and discovery's after it
	// (internal/resident)
	resident.ShedExecutable()
	ix := openIndex(env, opt.index)
	defer closeIndex(ix)
	res := discoverIndexed(env, opt.roots, opt.paths, ix)
	if err := discoveryProblems(env, res, len(res.Sessions) == 0 && len(res.Unrecognized) == 0); err != nil {
		return err
	}
	resident.ShedExecutable()
	ss := keep(res.Sessions, opt.agent, opt.since)
	var total, longest int64
	for _, s := range ss {
		n, l := summarized(s)
		total, longest = total+n, max(longest, l)
	}
	pr := newProgress(ctx, env, opt.progress, "reading", total, unitBytes)
	loosen, restore := boundLsMemory(ix, len(res.Sessions), longest)
	defer restore()
	src := lsSource{ix.Summaries(), ix, loosen}
	// the cells of each session's row from the last run over the same
	// roots (session.Memo), loaded while the ids are shortened; kept again
	// when this run goes over every session
	memoc := make(chan *session.Memo, 1)
	memoWhole := opt.agent == "" && opt.since.IsZero()
	if ix != nil && len(opt.paths) == 0 && !opt.json {
		go func() {
			rs, _ := scopeRoots(env, opt.roots)
			memoc <- session.LoadMemo(ix, lsMemoName, rs)
		}()
	} else {
		memoc <- nil
	}
	wanted := func(r *lsRow) bool {
		return opt.project == "" || strings.Contains(r.Project, opt.project) || strings.Contains(r.CWD, opt.project)
	}
	if opt.json {
		// each row is written as soon as it and the rows before it are
		// read: the output of 100,000 sessions is never held
		js := newJSONArrayWriter(env.stdout)
		n := 0
		res = nil // the sessions are let go as they are read (summarizeEach)
		summarizeEach(ctx, ss, pr, func(s *session.Session) lsRow { return lsRowOf(s, src) }, func(r *lsRow) bool {
			if !wanted(r) {
				return true
			}
			js.add(r)
			n++
			return opt.limit <= 0 || n < opt.limit
		})
		pr.done()
		if err := ctx.Err(); err != nil {
			return err
		}
		return js.close()
	}
	// ids are shortened against every session in scope, so that each one
	// shown names one session for the other commands
	ids := make([]string, len(res.Sessions))
	for i, s := range res.Sessions {
		ids[i] = s.ID
	}
	short := shortIDs(ids)
	ids = nil
	unrecognized := res.Unrecognized
	res = nil // the sessions are let go as they are read (summarizeEach)
	now, col := env.now(), colorer{opt.color}
	// each row is made into its cells, measured, by the worker that read
	// it: what is held until the table is drawn is the cells alone
	memo := <-memoc
	rows := make([]lsCells, 0, len(ss))
	summarizeEach(ctx, ss, pr, func(s *session.Session) lsCells {
		if v, ok := memo.Get(s, ""); ok {
			if fx, ok := decodeLsFixed(v); ok {
				if opt.project != "" && !strings.Contains(fx.project, opt.project) && !strings.Contains(fx.cwd, opt.project) {
					return lsCells{skip: true}
				}
				return fx.cells(s.Agent, s.ID, s.Updated(), s.Size(), len(s.FilesWithRole(session.FileRotation)), now, col, short)
			}
		}
		r := lsRowOf(s, src)
		if r.Error == "" {
			fx := lsFixedOf(&r)
			memo.Put(s, "", fx.encode())
		}
		if !wanted(&r) {
			return lsCells{skip: true}
		}
		return lsCellsOf(&r, now, col, short)
	}, func(c *lsCells) bool {
		if !c.skip {
			rows = append(rows, *c)
		}
		return opt.limit <= 0 || len(rows) < opt.limit
	})
	pr.done()
	if err := ctx.Err(); err != nil {
		return err
	}
	if memoWhole && (opt.limit <= 0 || len(rows) < opt.limit) {
		memo.Save(ix)
	}
	if len(rows) == 0 {
		where := searched(env, opt.roots, opt.paths)
		fmt.Fprintf(env.stderr, "sessctl: no sessions found in %s\n", line(where))
		if len(unrecognized) > 0 {
			fmt.Fprintf(env.stderr, "sessctl: %s there of no known format (e.g. %s)\n", plural(len(unrecognized), ".jsonl file"), line(unrecognized[0]))
		}
		return nil
	}
	drawLs(env.stdout, rows)
	return nil
}

// boundLsMemory sets a soft memory limit for an ls over the given number
// of sessions, the largest file it reads longest bytes (unless GOMEMLIMIT
// set one): the warm limit while the index serves the run, the cold one
// once it has missed limitMisses files (loosen) or without an index.
// restore puts back what was set before.
//
// A run the index serves holds about 300 bytes a session (its cells, its
// id) and the few dozen sessions being read; left to GOGC, the heap of a
// warm run over 100,000 sessions grew to twice its peak of live data: a
// peak RSS of 145 MB, against 112 MB under the warm limit for the same CPU
// time.
//
// A run that reads the files holds more: discovery's sessions until each
// is read (about 400 bytes each), the index's entries pending a write,
// and the files' buffers, 61-67 MB live over 100,000 sessions. Left to
// GOGC a first run there peaked at 172-175 MiB, and under the warm limit
// it took 2.5 times the CPU time. The cold limit, 32 MiB and 700 bytes a
// session (at least 64 MiB), and twice the longest line it may meet, keeps
// the heap within about 1.5 times that (with lsGCPercent during discovery,
// a first run peaks at 118-119 MiB; docs/index.md, "Peak memory"). A limit
// 4 MiB higher peaked at 121-127 MiB, too near the 128 MiB ls is held to.
func boundLsMemory(ix *index.Index, sessions int, longest int64) (loosen, restore func()) {
	n := int64(sessions)
	warm := 64<<20 + 256*n
	cold := max(64<<20, 32<<20+700*n) + 2*min(longest, jsonl.DefaultMaxLineSize)
	if ix == nil {
		_, restore := softLimit(cold)
		return func() {}, restore
	}
	set, restore := softLimit(warm)
	if !set {
		return func() {}, restore
	}
	return sync.OnceFunc(func() { debug.SetMemoryLimit(max(warm, cold)) }), restore
}

// lsGCPercent is ls's GOGC, unless the user set one.
const lsGCPercent = 70

// paceGC sets GOGC to percent unless the user set GOGC, and returns what
// puts it back.
func paceGC(getenv func(string) string, percent int) (restore func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}

// limitMisses is how many files the index may miss before the memory limit
// of a run it serves is loosened: a warm run reads only the few sessions
// that changed since the last.
const limitMisses = 500

// filling reports whether ix has missed limitMisses files since it had
// missed base (missed): the run reads files and fills the index, and
// needs more memory than one it serves.
func filling(ix *index.Index, base int) bool { return missed(ix)-base >= limitMisses }

// missed is how many files ix has missed (or read on from where it had
// them) so far in the run.
func missed(ix *index.Index) int {
	st := ix.Stats()
	return st.Misses + st.Grown
}

// lsSource is the index's FileSummaries, which loosens the run's memory
// limit once the index has missed limitMisses files.
type lsSource struct {
	session.FileSummaries
	ix     *index.Index
	loosen func()
}

func (s lsSource) FileSummary(a session.Agent, f session.File, mode session.SummaryMode) (session.FileSummary, error) {
	sum, err := s.FileSummaries.FileSummary(a, f, mode)
	if filling(s.ix, 0) {
		s.loosen()
	}
	return sum, err
}

// summarized is what session.Summarize reads of s, the main and the
// subagent transcripts: their bytes, and the size of the largest.
func summarized(s *session.Session) (bytes, longest int64) {
	for _, f := range s.Files {
		if f.Role == session.FileMain || f.Role == session.FileSubagent {
			bytes, longest = bytes+f.Size, max(longest, f.Size)
		}
	}
	return bytes, longest
}

// summarizeEach reads each session's summary, spread over all cores, and
// hands the rows to fn in the order of ss, each as soon as the rows before
// it are done; fn returns false to stop. At most a few dozen rows are held
// at a time, whatever the number of sessions. Each session is let go
// (ss[i] = nil) once read, so that the caller that holds no other
// reference to it frees it as the reading goes.
func summarizeEach[T any](ctx context.Context, ss []*session.Session, pr *progress, read func(*session.Session) T, fn func(*T) bool) {
	workers := runtime.GOMAXPROCS(0)
	// sessions go to the workers in batches, of 1 at first and twice as
	// many each time up to maxBatch: a row from the memo takes a couple of
	// microseconds, less than handing it over on its own, and a --limit
	// of a few rows still reads only a few sessions ahead
	const maxBatch = 64
	type slot struct {
		rows []T
		done chan struct{}
	}
	slots := make(chan *slot, 4*workers) // batches read ahead of the one fn waits for
	work := make(chan func())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for f := range work {
				f()
			}
		})
	}
	go func() {
		defer close(slots)
		defer close(work)
		size := 1
		for i := 0; i < len(ss); {
			if ctx.Err() != nil {
				return // Ctrl-C: the caller returns the context's error
			}
			batch := ss[i : i+min(size, len(ss)-i)]
			i += len(batch)
			size = min(2*size, maxBatch)
			sl := &slot{rows: make([]T, len(batch)), done: make(chan struct{})}
			select {
			case slots <- sl:
			case <-stop:
				return
			}
			select {
			case work <- func() {
				for j, s := range batch {
					sl.rows[j] = read(s)
					n, _ := summarized(s)
					pr.add(n)
					batch[j] = nil
				}
				close(sl.done)
			}:
			case <-stop:
				return
			}
		}
	}()
	going := true
	for sl := range slots {
		if !going {
			continue
		}
		select {
		case <-sl.done:
		case <-stop:
		}
		for j := range sl.rows {
			if going && !fn(&sl.rows[j]) {
				going = false
				close(stop)
			}
		}
	}
	wg.Wait()
}

func lsRowOf(s *session.Session, src session.FileSummaries) lsRow {
	sum, err := session.SummarizeWith(s, src)
	r := lsRow{Agent: s.Agent, ID: s.ID, Project: s.Project, CWD: sum.CWD, Title: sum.Title,
		TitleSource: sum.TitleSource, Updated: s.Updated(), Records: sum.Records, Size: s.Size(),
		Rotations: len(s.FilesWithRole(session.FileRotation)), Corrupt: sum.Corrupt, Main: s.Main, Files: s.Files}
	if !sum.Started.IsZero() {
		t := sum.Started
		r.Started = &t
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

var lsHeader = []string{"AGENT", "ID", "PROJECT", "TITLE", "UPDATED", "RECORDS", "SIZE", "ROT", "CORRUPT"}

// lsCells is one row of the ls table: its cells, one after another in
// one string, and their widths. Packed so, the rows of 100,000 sessions
// take 6 MB and their text, not 22 MB of string headers and ints.
type lsCells struct {
	text string
	end  [9]uint16 // where each cell ends in text
	w    [9]uint16 // its width (cellWidth)
	skip bool      // not wanted (--project)
}

// lsCellsOf makes r's cells. They hold none of r's strings: a title cut
// from a prompt of many KB is a copy, not a slice of it.
func lsCellsOf(r *lsRow, now time.Time, col colorer, short func(string) string) lsCells {
	fx := lsFixedOf(r)
	if r.Error != "" {
		fx.title = col.red("error: " + lineCut(r.Error, 40))
		fx.titleW = uint16(cellWidth(fx.title))
	}
	return fx.cells(r.Agent, r.ID, r.Updated, r.Size, r.Rotations, now, col, short)
}

// lsFixed is what of a row's cells depends on its session's files alone:
// what ls keeps of each session from one run to the next (session.Memo),
// so that a warm run makes a row of a session that did not change without
// looking it up or measuring its text.
type lsFixed struct {
	project, cwd     string // for --project
	projectCell      string
	title            string // the title's cell
	projectW, titleW uint16
	records, corrupt int64
}

// lsMemoName names ls's memo; a change to lsFixed or its encoding changes
// it.
const lsMemoName = "ls-cells-1"

func lsFixedOf(r *lsRow) lsFixed {
	project := r.CWD
	if project == "" {
		project = r.Project
	}
	fx := lsFixed{project: r.Project, cwd: r.CWD, projectCell: ellipsis(shortenHome(line(project)), 32),
		title: lineCut(r.Title, 48), records: int64(r.Records), corrupt: int64(r.Corrupt)}
	fx.projectW, fx.titleW = uint16(cellWidth(fx.projectCell)), uint16(cellWidth(fx.title))
	return fx
}

func (fx *lsFixed) encode() string {
	var b []byte
	for _, s := range []string{fx.project, fx.cwd, fx.projectCell, fx.title} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, v := range []uint64{uint64(fx.projectW), uint64(fx.titleW), uint64(fx.records), uint64(fx.corrupt)} {
		b = binary.AppendUvarint(b, v)
	}
	return string(b)
}

// decodeLsFixed decodes what encode made; its strings are of b.
func decodeLsFixed(b string) (fx lsFixed, ok bool) {
	var strs [4]string
	for i := range strs {
		n, k := uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return fx, false
		}
		strs[i], b = b[k:k+int(n)], b[k+int(n):]
	}
	var vs [4]uint64
	for i := range vs {
		v, k := uvarint(b)
		if k <= 0 {
			return fx, false
		}
		vs[i], b = v, b[k:]
	}
	if len(b) != 0 || vs[0] > math.MaxUint16 || vs[1] > math.MaxUint16 {
		return fx, false
	}
	// the cells were made safe (line) before they were kept; a memo file
	// changed behind sessctl's back must not reach the terminal either
	if !termtext.Safe(strs[2]) || !termtext.Safe(strs[3]) {
		return fx, false
	}
	return lsFixed{project: strs[0], cwd: strs[1], projectCell: strs[2], title: strs[3],
		projectW: uint16(vs[0]), titleW: uint16(vs[1]), records: int64(vs[2]), corrupt: int64(vs[3])}, true
}

// uvarint is binary.Uvarint of a string: the conversion of at most
// MaxVarintLen64 bytes, which Uvarint does not keep, is made on the stack.
func uvarint(s string) (uint64, int) {
	return binary.Uvarint([]byte(s[:min(len(s), binary.MaxVarintLen64)]))
}

// cells makes the row's cells of fx and what the session's discovery
// gives.
func (fx *lsFixed) cells(agent session.Agent, id string, updated time.Time, size int64, rotations int, now time.Time, col colorer, short func(string) string) lsCells {
	bad := thousands(fx.corrupt)
	if fx.corrupt > 0 {
		bad = col.red(bad)
	}
	cells := [9]string{string(agent), line(short(id)), fx.projectCell,
		fx.title, relTime(updated, now), thousands(fx.records), humanBytes(size),
		thousands(int64(rotations)), bad}
	var out lsCells
	var b strings.Builder
	n := 0
	for _, c := range cells {
		n += len(c)
	}
	b.Grow(n) // the one allocation, of the row's size
	for i, c := range cells {
		if b.Len()+len(c) > math.MaxUint16 {
			c = "" // cannot be: every cell is cut to a few dozen runes
		}
		b.WriteString(c)
		out.end[i] = uint16(b.Len())
		switch i {
		case 2:
			out.w[i] = fx.projectW
		case 3:
			out.w[i] = fx.titleW
		default:
			out.w[i] = uint16(cellWidth(c))
		}
	}
	out.text = b.String()
	return out
}

func drawLs(w io.Writer, rows []lsCells) {
	cells := make([]string, len(lsHeader))
	drawRows(w, lsHeader, len(rows), func(k int, ws []int) []string {
		r := &rows[k]
		start := 0
		for i, end := range r.end {
			cells[i] = r.text[start:end]
			ws[i] = int(r.w[i])
			start = int(end)
		}
		return cells
	})
}

// lineCut is ellipsis(line(s), n) without escaping, or counting the runes
// of, more of s than the n+1 runes that decide it: line maps each rune of
// s (each byte that is not UTF-8) on its own, to one rune or more, so the
// first n+1 of them give the first n+1 of its result, which is all
// ellipsis looks at. A title can be a prompt of many KB.
func lineCut(s string, n int) string {
	i := 0
	for units := 0; i < len(s) && units <= n; units++ {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return ellipsis(line(s[:i]), n)
}

// shortenHome keeps the end of a long path, where the project name is.
func shortenHome(p string) string {
	const max = 32
	if utf8.RuneCountInString(p) <= max {
		return p
	}
	r := []rune(p)
	return "…" + string(r[len(r)-max+1:])
}
