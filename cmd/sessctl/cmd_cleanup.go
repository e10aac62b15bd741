package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/cleanup"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/trash"
	"github.com/urfave/cli/v2"
)

type cleanupOptions struct {
	roots     []string
	agent     session.Agent
	olderThan time.Duration
	ageSet    bool
	keep      int
	maxSize   int64
	rotations bool
	apply     bool
	trash     bool
	quiet     bool
	json      bool
	color     bool
	lockPath  string
	progress  bool
}

func cleanupCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove old sessions (whole sessions, with their side files); dry run unless --apply",
		Description: "A session expires when the newest of its files (transcript, rotations, subagent and\n" +
			"side files) is older than --older-than (default 30d; for Claude Code, cleanupPeriodDays from\n" +
			"<root>/settings.json unless --older-than is given). Without --apply it only prints the plan.\n" +
			"Live sessions, symlinks and anything outside the roots are never removed. See docs/cleanup.md.\n" +
			"Exit status: 0 done, 2 an error (unreadable directory, failed removal), 3 refused for safety\n" +
			"(another cleanup running, a session changed or became live after planning).",
		Flags: []cli.Flag{
			rootFlag(), agentFlag(),
			&cli.StringFlag{Name: "older-than", Value: "30d", Usage: "expire sessions whose newest file is older than `AGE` (30d, 12h, 2w)"},
			&cli.IntFlag{Name: "keep", Usage: "always keep the `N` newest sessions of each project"},
			&cli.StringFlag{Name: "max-size", Usage: "also remove the oldest sessions until all take at most `SIZE` (20G, 500M)"},
			&cli.BoolFlag{Name: "rotations", Usage: "also remove rotated files older than the cutoff from sessions that stay"},
			&cli.BoolFlag{Name: "apply", Usage: "remove what the plan lists (default: dry run)"},
			trashFlag("the sessions and rotated files"),
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors and a one-line summary (for cron)"},
			jsonFlag(), noColorFlag(), noProgressFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("cleanup takes no arguments (got %q)", c.Args().First()).withHint("use --root DIR to clean up another store")
			}
			opt := cleanupOptions{roots: c.StringSlice("root"), keep: c.Int("keep"), rotations: c.Bool("rotations"),
				apply: c.Bool("apply"), trash: c.Bool("trash"), quiet: c.Bool("quiet"), json: c.Bool("json"),
				color: useColor(env.stdout, env, c.Bool("no-color")), ageSet: c.IsSet("older-than"),
				lockPath: cleanup.LockPath(env.getenv, env.home), progress: progressWanted(env, c) && !c.Bool("quiet")}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			d, err := parseAge(c.String("older-than"))
			if err != nil {
				return usageErrorf("--older-than: %v", err)
			}
			opt.olderThan = d
			if opt.keep < 0 {
				return usageErrorf("--keep must be 0 or more")
			}
			if s := c.String("max-size"); s != "" {
				n, err := cleanup.ParseSize(s)
				if err != nil || n == 0 {
					return usageErrorf("--max-size: invalid size %q (use e.g. 20G, 500M)", s)
				}
				opt.maxSize = n
			}
			return runCleanup(c.Context, env, opt)
		},
	}
}

// cleanupReport is cleanup --json.
type cleanupReport struct {
	DryRun bool `json:"dry_run"`
	*cleanup.Plan
	Summary cleanupSummary `json:"summary"`
}

type cleanupSummary struct {
	Sessions      int   `json:"sessions"`
	Files         int   `json:"files"`
	Bytes         int64 `json:"bytes"`
	RotationFiles int   `json:"rotation_files"`
	RotationBytes int64 `json:"rotation_bytes"`
	Skipped       int   `json:"skipped"`
	StoreBytes    int64 `json:"store_bytes"`
	// after --apply
	Result *cleanup.Result `json:"result,omitempty"`
}

func runCleanup(ctx context.Context, env *appEnv, opt cleanupOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	lock, err := cleanup.Lock(opt.lockPath)
	switch {
	case errors.Is(err, safety.ErrLocked):
		return (&cliError{code: exitRefused, err: err}).withHint("only one cleanup runs at a time; try again when the other one has finished")
	case err != nil && opt.apply:
		return err
	case err != nil:
		// a dry run changes nothing: it may go on without the lock (a
		// read-only home), but says so
		warn(env.stderr, "%v (dry run goes on without it)", err)
	default:
		defer lock.Unlock()
	}

	po := cleanup.Options{OlderThan: opt.olderThan, OlderThanSet: opt.ageSet, Keep: opt.keep, MaxSize: opt.maxSize,
		Rotations: opt.rotations, Agent: opt.agent, Now: env.now()}
	po.Roots, po.MissingOK = scopeRoots(env, opt.roots)
	// planning reads every session's files (a spinner: how many there are
	// is only known at the end)
	pr := newProgress(ctx, env, opt.progress, "planning", 0, unitNone)
	type planned struct {
		plan *cleanup.Plan
		err  error
	}
	pl, err := interruptible(ctx, func() planned {
		p, err := cleanup.MakePlan(po)
		return planned{p, err}
	})
	pr.done()
	if err != nil {
		return err // Ctrl-C while planning: nothing was removed
	}
	plan, err := pl.plan, pl.err
	if err != nil {
		return err
	}
	var res *cleanup.Result
	if opt.apply {
		ao := cleanup.ApplyOptions{Now: env.now}
		if opt.trash {
			tr, err := trash.Open(trashDir(env), true)
			if err != nil {
				return fmt.Errorf("trash: %w", err) // nothing was removed
			}
			defer tr.Close()
			ao.Trash = tr
		}
		pr := newProgress(ctx, env, opt.progress, "removing", 0, unitNone)
		r := cleanup.Apply(ctx, plan, ao)
		pr.done()
		res = &r
	}
	nf, nb := cleanup.Files(plan.Sessions)
	rf, rb := cleanup.Files(plan.Rotations)
	sum := cleanupSummary{Sessions: len(plan.Sessions), Files: nf, Bytes: nb, RotationFiles: rf, RotationBytes: rb,
		Skipped: len(plan.Skipped), StoreBytes: plan.StoreBytes, Result: res}

	switch {
	case opt.json:
		if err := writeCleanupJSON(env.stdout, cleanupReport{DryRun: !opt.apply, Plan: plan, Summary: sum}); err != nil {
			return err
		}
	case opt.quiet:
		for _, w := range plan.Warnings {
			warn(env.stderr, "%s", w)
		}
		printCleanupErrors(env.stderr, plan)
		fmt.Fprintln(env.stdout, cleanupSummaryLine(plan, sum, res))
	default:
		for _, w := range plan.Warnings {
			warn(env.stderr, "%s", w)
		}
		renderCleanup(env.stdout, plan, res, colorer{opt.color})
		fmt.Fprintln(env.stdout, cleanupSummaryLine(plan, sum, res))
		if n, _ := plan.PlannedLeftovers(); res == nil && (len(plan.Sessions) > 0 || len(plan.Rotations) > 0 || n > 0) {
			if opt.trash {
				fmt.Fprintln(env.stdout, "dry run: nothing was moved; run again with --apply --trash to move the above into the trash")
			} else {
				fmt.Fprintln(env.stdout, "dry run: nothing was removed; run again with --apply to remove the above")
			}
		}
		if res != nil && res.TrashDir != "" && res.RemovedFiles > 0 {
			fmt.Fprintf(env.stdout, "moved into the trash %s: sessctl trash ls lists it, sessctl trash restore ID puts a session back\n", line(res.TrashDir))
		}
	}
	return cleanupExit(plan, res)
}

// writeCleanupJSON writes the report as writeJSON does, the plan's long
// lists element by element (writeJSONStream): the report of a store of
// 100,000 sessions is not built whole in memory, twice, besides the plan.
func writeCleanupJSON(w io.Writer, rep cleanupReport) error {
	p := *rep.Plan
	var arrays []jsonArray
	// a nil list stays null in the output, as writeJSON writes it
	if p.Sessions != nil {
		arrays = append(arrays, jsonArray{"sessions", len(p.Sessions), func(i int) (any, error) { return rep.Plan.Sessions[i], nil }})
		p.Sessions = []*cleanup.Item{}
	}
	if p.Rotations != nil {
		arrays = append(arrays, jsonArray{"rotations", len(p.Rotations), func(i int) (any, error) { return rep.Plan.Rotations[i], nil }})
		p.Rotations = []*cleanup.Item{}
	}
	if p.Skipped != nil {
		arrays = append(arrays, jsonArray{"skipped", len(p.Skipped), func(i int) (any, error) { return &rep.Plan.Skipped[i], nil }})
		p.Skipped = []cleanup.Skip{}
	}
	if p.Side != nil {
		arrays = append(arrays, jsonArray{"side_refs", len(p.Side), func(i int) (any, error) { return rep.Plan.Side[i], nil }})
		p.Side = []*cleanup.SideRef{}
	}
	head := rep
	head.Plan = &p
	return writeJSONStream(w, head, arrays...)
}

// cleanupExit: 2 when something could not be read or removed, 3 when a
// planned removal was refused for safety, else 0.
func cleanupExit(plan *cleanup.Plan, res *cleanup.Result) error {
	ioProblems := 0
	for _, w := range plan.Warnings {
		if !strings.HasPrefix(w, "cannot get under --max-size") {
			ioProblems++
		}
	}
	if res != nil && res.Failed > 0 {
		return &cliError{code: exitError, err: errSilent}
	}
	if res != nil && res.Refused > 0 {
		return &cliError{code: exitRefused, err: errSilent}
	}
	if ioProblems > 0 {
		return &cliError{code: exitError, err: errSilent}
	}
	return nil
}

// planIDs shortens the ids of a plan against each other (the plan does not
// list the sessions that stay).
func planIDs(plan *cleanup.Plan) func(string) string {
	var ids []string
	for _, it := range plan.Sessions {
		ids = append(ids, it.ID)
	}
	for _, it := range plan.Rotations {
		ids = append(ids, it.ID)
	}
	for _, s := range plan.Skipped {
		ids = append(ids, s.ID)
	}
	return shortIDs(ids)
}

func printCleanupErrors(w io.Writer, plan *cleanup.Plan) {
	short := planIDs(plan)
	for _, it := range append(append([]*cleanup.Item{}, plan.Sessions...), plan.Rotations...) {
		if it.Status == cleanup.StatusRefused || it.Status == cleanup.StatusFailed {
			fmt.Fprintf(w, "sessctl: error: %s %s %s: %s\n", it.Status, it.Agent, line(short(it.ID)), line(it.Error))
		}
	}
	for _, ref := range plan.Side {
		if ref.Status == cleanup.StatusFailed {
			fmt.Fprintf(w, "sessctl: error: %s: %s\n", line(ref.Path), line(ref.Error))
		}
	}
	for _, l := range plan.Leftovers {
		if l.Status == cleanup.StatusRefused || l.Status == cleanup.StatusFailed {
			fmt.Fprintf(w, "sessctl: error: %s leftover %s: %s\n", l.Status, line(l.Path), line(l.Error))
		}
	}
}

func cleanupSummaryLine(plan *cleanup.Plan, sum cleanupSummary, res *cleanup.Result) string {
	if res == nil {
		s := fmt.Sprintf("would remove %s of %s (%s, %s)", thousands(int64(sum.Sessions)), plural(plan.AllSessions, "session"), plural(sum.Files, "file"), humanBytes(sum.Bytes))
		if sum.RotationFiles > 0 {
			s += fmt.Sprintf(" and %s (%s)", plural(sum.RotationFiles, "rotated file"), humanBytes(sum.RotationBytes))
		}
		if n, b := plan.PlannedLeftovers(); n > 0 {
			s += fmt.Sprintf(" and %s of interrupted rewrites (%s)", plural(n, "leftover"), humanBytes(b))
		}
		if sum.Skipped > 0 {
			s += fmt.Sprintf("; %d skipped", sum.Skipped)
		}
		return s + fmt.Sprintf("; store %s → %s", humanBytes(plan.StoreBytes), humanBytes(plan.StoreBytes-sum.Bytes-sum.RotationBytes))
	}
	verb := "removed"
	if res.TrashDir != "" {
		verb = "moved into the trash"
	}
	s := fmt.Sprintf("%s %s of %s and %s (%s in all, %s)", verb, thousands(int64(res.RemovedSessions)), plural(plan.AllSessions, "session"),
		plural(res.RemovedRotations, "rotated file"), plural(res.RemovedFiles, "file"), humanBytes(res.RemovedBytes))
	if res.RemovedLeftovers > 0 {
		s += fmt.Sprintf("; %s of interrupted rewrites removed (%s)", plural(res.RemovedLeftovers, "leftover"), humanBytes(res.RemovedLeftoverBytes))
	}
	if res.Refused > 0 {
		s += fmt.Sprintf("; %d refused", res.Refused)
	}
	if res.Failed > 0 {
		s += fmt.Sprintf("; %d failed", res.Failed)
	}
	if sum.Skipped > 0 {
		s += fmt.Sprintf("; %d skipped", sum.Skipped)
	}
	return s + fmt.Sprintf("; store %s → %s", humanBytes(plan.StoreBytes), humanBytes(plan.StoreBytes-res.RemovedBytes))
}

func renderCleanup(w io.Writer, plan *cleanup.Plan, res *cleanup.Result, col colorer) {
	short := planIDs(plan)
	verb := func(it *cleanup.Item, planned string) string {
		switch it.Status {
		case cleanup.StatusRemoved:
			if it.Trash != "" {
				return col.green("trashed")
			}
			return col.green("removed")
		case cleanup.StatusRefused:
			return col.yellow("refused")
		case cleanup.StatusFailed:
			return col.red("FAILED")
		}
		return planned
	}
	for _, it := range plan.Sessions {
		fmt.Fprintf(w, "%s %s %s  %s  updated %s  %s  %s  (%s)\n", verb(it, "remove"), it.Agent, line(short(it.ID)),
			projectLabel(it.Project), it.Updated.Local().Format("2006-01-02 15:04"), plural(len(it.Files), "file"), humanBytes(it.Bytes), line(it.Reason))
		if it.Error != "" {
			fmt.Fprintf(w, "  %s\n", col.red(line(it.Error)))
		}
		if it.Trash != "" {
			fmt.Fprintf(w, "  %s\n", col.dim("trash entry "+it.Trash))
		}
		for _, f := range it.Files {
			fmt.Fprintf(w, "  %s  %s\n", line(f.Path), col.dim(humanBytes(f.Size)))
		}
		for _, d := range it.Dirs {
			fmt.Fprintf(w, "  %s/  %s\n", line(d), col.dim("(directory, when empty)"))
		}
	}
	for _, it := range plan.Rotations {
		fmt.Fprintf(w, "%s rotated files of %s %s  %s  (%s)\n", verb(it, "remove"), it.Agent, line(short(it.ID)), projectLabel(it.Project), line(it.Reason))
		if it.Error != "" {
			fmt.Fprintf(w, "  %s\n", col.red(line(it.Error)))
		}
		if it.Trash != "" {
			fmt.Fprintf(w, "  %s\n", col.dim("trash entry "+it.Trash))
		}
		for _, f := range it.Files {
			fmt.Fprintf(w, "  %s  %s  %s\n", line(f.Path), col.dim(humanBytes(f.Size)), col.dim(f.ModTime.Local().Format("2006-01-02")))
		}
	}
	for _, l := range plan.Leftovers {
		v := "remove"
		switch l.Status {
		case cleanup.StatusRemoved:
			v = col.green("removed")
		case cleanup.StatusRefused:
			v = col.yellow("refused")
		case cleanup.StatusFailed:
			v = col.red("FAILED")
		case cleanup.StatusSkipped:
			v = col.yellow("skip")
		}
		fmt.Fprintf(w, "%s leftover %s  %s  (%s; %s)\n", v, line(l.Path), col.dim(humanBytes(l.Size)), l.Describe(), line(l.Why))
		if l.Error != "" {
			fmt.Fprintf(w, "  %s\n", col.red(line(l.Error)))
		}
	}
	for _, s := range plan.Skipped {
		fmt.Fprintf(w, "%s %s %s  %s  (%s)\n", col.yellow("skip"), s.Agent, line(short(s.ID)), line(s.Main), line(s.Reason))
	}
	for _, ref := range plan.Side {
		var what string
		switch {
		case ref.Status == cleanup.SideDone:
			what = col.green("cleared")
		case ref.Status == cleanup.StatusFailed:
			what = col.red("FAILED: " + line(ref.Error))
		case ref.Status == cleanup.SideUnchanged:
			what = "unchanged (session kept)"
		case ref.Action == cleanup.ActionClear && res == nil:
			what = "will be cleared with --apply"
		default:
			what = col.yellow("stale, left for you")
		}
		fmt.Fprintf(w, "side %s %s: %s %s — %s\n", ref.Agent, line(short(ref.SessionID)), line(ref.Path), line(ref.What), what)
	}
}

func projectLabel(p string) string {
	if p == "" {
		return "-"
	}
	if strings.ContainsAny(p, " \t") {
		return strconv.Quote(p) // Go quoting escapes every control character too
	}
	return line(p)
}
