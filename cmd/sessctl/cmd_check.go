package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sessctl/sessctl/pkg/check"
	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type checkOptions struct {
	paths      []string
	json       bool
	color      bool
	maxPerKind int
	progress   bool
}

func checkCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "validate session files and report every problem with file, line and byte offset",
		ArgsUsage: "PATH...",
		Description: "PATH is a session file or a directory (every session below it is checked,\n" +
			"including rotations and subagent transcripts). Exit status: 0 clean, 1 problems found,\n" +
			"2 usage or I/O error.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "max", Value: 20, Usage: "show at most `N` problems of each kind per file (0: all)"},
			jsonFlag(), noColorFlag(), noProgressFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("check needs at least one PATH").withHint("sessctl check ~/.claude/projects")
			}
			if c.Int("max") < 0 {
				return usageErrorf("--max must not be negative (0: all)")
			}
			return runCheck(c.Context, env, checkOptions{paths: c.Args().Slice(), json: c.Bool("json"), maxPerKind: c.Int("max"),
				color: useColor(env.stdout, env, c.Bool("no-color")), progress: progressWanted(env, c)})
		},
	}
}

// checkOutput is check --json.
type checkOutput struct {
	Files    []*check.Report `json:"files"`
	Problems int             `json:"problems"`
	// Repairable is how many of the problems `sessctl repair` would fix.
	Repairable int      `json:"repairable"`
	Errors     []string `json:"errors"`
	// Leftovers are what interrupted sessctl rewrites left beside the
	// sessions (each also counts as a problem).
	Leftovers []rotation.Leftover `json:"leftovers"`
}

func runCheck(ctx context.Context, env *appEnv, opt checkOptions) error {
	out := checkOutput{Files: []*check.Report{}, Errors: []string{}, Leftovers: []rotation.Leftover{}}
	leftovers := map[string]rotation.Bases{} // directory -> session files to look beside
	var ioErr error
	// first every file to check (so that the progress bar knows the total),
	// then the checks
	var all []target
	mains := map[string]bool{} // the files repair rewrites: sessions' live files, and files named
	for _, p := range opt.paths {
		var targets []target
		fi, err := os.Stat(p)
		if err != nil {
			ioErr = firstNonNil(ioErr, err)
			out.Errors = append(out.Errors, err.Error())
			continue
		}
		if !fi.IsDir() {
			// a single file is checked as what it is, even a rotation
			agent, err := session.DetectFile(p)
			if err != nil {
				ioErr = firstNonNil(ioErr, err)
				out.Errors = append(out.Errors, err.Error())
				continue
			}
			targets = append(targets, target{[]string{p}, agent})
			mains[p] = true
			lookBeside(leftovers, p, agent)
		} else {
			res := session.DiscoverPaths([]string{p})
			for _, err := range res.Errors {
				ioErr = firstNonNil(ioErr, err)
				out.Errors = append(out.Errors, err.Error())
			}
			for _, s := range res.Sessions {
				// the live transcript with its subagents as one group; each
				// rotation (an older generation) on its own
				live := target{agent: s.Agent}
				for _, f := range s.Files {
					switch f.Role {
					case session.FileMain, session.FileSubagent:
						live.paths = append(live.paths, f.Path)
					case session.FileRotation:
						targets = append(targets, target{[]string{f.Path}, s.Agent})
					}
				}
				targets = append([]target{live}, targets...)
				mains[s.Main] = true
				lookBeside(leftovers, s.Main, s.Agent)
			}
			for _, u := range res.Unrecognized {
				targets = append(targets, target{[]string{u}, session.Unknown})
			}
			if len(res.Sessions) == 0 && len(res.Unrecognized) == 0 && len(res.Errors) == 0 {
				ioErr = firstNonNil(ioErr, fmt.Errorf("%s: no session files found", p))
				out.Errors = append(out.Errors, fmt.Sprintf("%s: no session files found", p))
			}
		}
		all = append(all, targets...)
	}
	targets := all
	sizes := make([]int64, len(targets))
	var total int64
	for i, t := range targets {
		for _, p := range t.paths {
			sizes[i] += fileSize(p)
		}
		total += sizes[i]
	}
	pr := newProgress(ctx, env, opt.progress, "checking", total, unitBytes)
	for i, t := range targets {
		reps, err := check.Files(t.paths, t.agent, check.Options{MaxPerKind: opt.maxPerKind, Context: ctx})
		pr.add(sizes[i])
		if ctx.Err() != nil {
			pr.done()
			return ctx.Err() // Ctrl-C: no report of a part
		}
		if err != nil {
			ioErr = firstNonNil(ioErr, err)
			out.Errors = append(out.Errors, err.Error())
			continue
		}
		for _, rep := range reps {
			if mains[rep.Path] {
				if err := check.Repairable(ctx, rep, env.now()); err != nil {
					if ctx.Err() != nil {
						pr.done()
						return errInterrupted
					}
					ioErr = firstNonNil(ioErr, err)
					out.Errors = append(out.Errors, err.Error())
				}
			}
			out.Files = append(out.Files, rep)
			out.Problems += len(rep.Problems)
			out.Repairable += rep.Repairable
		}
	}
	pr.done()
	out.Leftovers = append(out.Leftovers, findLeftovers(leftovers, env.now())...)
	out.Problems += len(out.Leftovers)
	if opt.json {
		if err := writeJSON(env.stdout, out); err != nil {
			return err
		}
	} else {
		renderCheck(env, out, colorer{opt.color})
	}
	switch {
	case ioErr != nil:
		// each error was printed once, with the findings (or in the JSON)
		return &cliError{code: exitError, err: errSilent, hint: hintFor(ioErr)}
	case out.Problems > 0:
		return silentFindings
	}
	return nil
}

// lookBeside notes a session file whose directory is searched for the
// leftovers of interrupted rewrites.
func lookBeside(m map[string]rotation.Bases, path string, agent session.Agent) {
	dir := filepath.Dir(path)
	if m[dir] == nil {
		m[dir] = rotation.Bases{}
	}
	m[dir][filepath.Base(path)] = agent
}

// findLeftovers lists the leftovers beside the noted session files, one
// directory listing per directory (read only: a session's lock is looked at,
// not taken).
func findLeftovers(m map[string]rotation.Bases, now time.Time) []rotation.Leftover {
	var out []rotation.Leftover
	dirs := make([]string, 0, len(m))
	for d := range m {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		d, err := fsroot.OpenDir(dir)
		if err != nil {
			continue
		}
		ls, _ := rotation.ScanDir(d, m[dir], func(base string) bool { return !safety.Held(d, base) }, now, safety.DefaultQuiet)
		d.Close()
		for _, l := range ls {
			if l.Base() != "" { // temps of other files are cleanup's business
				out = append(out, l)
			}
		}
	}
	return out
}

type target struct {
	paths []string
	agent session.Agent
}

func renderCheck(env *appEnv, out checkOutput, col colorer) {
	w := env.stdout
	clean := 0
	for _, rep := range out.Files {
		if len(rep.Problems) == 0 {
			clean++
			continue
		}
		fmt.Fprintf(w, "%s  (%s, %s)\n", col.bold(line(rep.Path)), rep.Agent, plural(rep.Records, "record"))
		for _, p := range rep.Problems {
			loc := "-"
			if p.Line > 0 {
				loc = fmt.Sprintf("line %d, byte %d", p.Line, p.Offset)
			}
			fmt.Fprintf(w, "  %s: %s: %s\n", loc, col.yellow(p.Kind), line(p.Message))
		}
		if rep.Repairable > 0 {
			fmt.Fprintf(w, "  sessctl repair would fix %s of these\n", thousands(int64(rep.Repairable)))
		}
	}
	for _, l := range out.Leftovers {
		note := line(l.Why) + "; stale: sessctl cleanup --apply removes it, as does the next sessctl rewrite of the session"
		if !l.Stale {
			note = "left alone: " + line(l.Why)
		}
		fmt.Fprintf(w, "%s  %s: %s, %s (%s)\n", col.bold(line(l.Path)), col.yellow("leftover"), l.Describe(), humanBytes(l.Size), note)
	}
	for _, e := range out.Errors {
		fmt.Fprintf(env.stderr, "sessctl: error: %s\n", line(e))
	}
	summary := fmt.Sprintf("%s checked, %s clean, %s", plural(len(out.Files), "file"), thousands(int64(clean)), plural(out.Problems, "problem"))
	if out.Repairable > 0 {
		summary += fmt.Sprintf(" (sessctl repair would fix %s)", thousands(int64(out.Repairable)))
	}
	if out.Problems == 0 && len(out.Errors) == 0 {
		summary = col.green(summary)
	}
	fmt.Fprintln(w, summary)
}

func firstNonNil(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
