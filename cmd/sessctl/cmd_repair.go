package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/rewrite"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type repairOptions struct {
	dryRun bool
	force  bool
	json   bool
}

func repairCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "repair",
		Usage:     "make damaged sessions whole, the way their client would have written them",
		ArgsUsage: "SESSION|DIR...",
		Description: "Torn and corrupt lines leave the live file (a complete record glued onto a torn\n" +
			"one stays), exact double writes are written once, invalid UTF-8 becomes what the\n" +
			"client's own reader makes of it, a tool call left unanswered when the client stopped\n" +
			"is answered as the client answers an interrupted call, results whose call is gone\n" +
			"are removed and broken parent links relinked. The original is kept as the next\n" +
			"rotation first. A directory stands for every session below it.\n" +
			"Exit 0: repaired, or nothing to repair; 1: damage repair cannot mend (each with\n" +
			"the reason). See docs/repair.md.",
		Flags: []cli.Flag{dryRunFlag(), forceFlag(), rootFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("repair needs at least one SESSION").withHint("sessctl repair --dry-run SESSION")
			}
			var ss []*session.Session
			for _, arg := range c.Args().Slice() {
				if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
					// a directory: every session below it, as check finds them
					res := session.DiscoverPaths([]string{arg})
					if len(res.Errors) > 0 {
						return res.Errors[0]
					}
					if len(res.Sessions) == 0 {
						return usageErrorf("%s: no session files found", arg)
					}
					ss = append(ss, res.Sessions...)
					continue
				}
				s, err := resolveSession(env, c.StringSlice("root"), arg)
				if err != nil {
					return err
				}
				if err := wholeSession(s, arg); err != nil {
					return err
				}
				ss = append(ss, s)
			}
			return runRepair(c.Context, env, ss, repairOptions{dryRun: c.Bool("dry-run"), force: c.Bool("force"), json: c.Bool("json")})
		},
	}
}

// repairOutput is one session's entry of repair --json.
type repairOutput struct {
	*repair.Plan
	DryRun   bool               `json:"dry_run"`
	Repaired bool               `json:"repaired"`
	Rotation *rotation.Rotation `json:"rotation,omitempty"`
	OldSize  int64              `json:"old_size,omitempty"`
	NewSize  int64              `json:"new_size,omitempty"`
	Warnings []string           `json:"warnings"`
}

func runRepair(ctx context.Context, env *appEnv, ss []*session.Session, opt repairOptions) error {
	return eachSession(ctx, env, ss, opt.json, func(s *session.Session) (repairOutput, error) { return repairOne(ctx, env, s, opt) },
		func(out repairOutput) { renderRepair(env.stdout, out) }, func(out repairOutput) int { return len(out.Unrepairable) })
}

func repairOne(ctx context.Context, env *appEnv, s *session.Session, opt repairOptions) (repairOutput, error) {
	path := s.Main
	plan, err := repair.Scan(ctx, path, s.Agent, env.now())
	if err != nil {
		return repairOutput{}, inPath(path, err)
	}
	out := repairOutput{Plan: plan, DryRun: opt.dryRun, Warnings: []string{}}
	if opt.dryRun || !plan.Changed() || len(plan.Unrepairable) > 0 {
		// a file with damage repair cannot copy through is left whole
		return out, nil
	}
	tx, err := rewrite.Begin(ctx, path, s.Agent, rewrite.Options{Force: opt.force, Now: env.now})
	if err != nil {
		return out, err
	}
	defer tx.Close()
	// plan again under the lock, on the file Begin checked
	if plan, err = repair.Scan(ctx, path, s.Agent, env.now()); err != nil {
		return out, inPath(path, err)
	}
	out.Plan = plan
	if !plan.Changed() || len(plan.Unrepairable) > 0 {
		return out, nil
	}
	res, err := tx.Replace(ctx, func(orig io.Reader, dst io.Writer) error { return plan.Write(orig, dst) })
	if err != nil {
		if res != nil && res.Rotation != nil {
			return out, fmt.Errorf("%w (the new file is in place; the original is in %s)", inPath(path, err), res.Rotation.Path)
		}
		return out, fmt.Errorf("%w (nothing was changed)", inPath(path, err))
	}
	out.Repaired = true
	out.Warnings = append(out.Warnings, tx.Notes(res)...)
	out.Rotation = res.Rotation
	out.OldSize, out.NewSize = res.OldSize, res.NewSize
	return out, nil
}

// wroteLimit is how much of a written line the text output shows.
const wroteLimit = 160

func renderRepair(w io.Writer, out repairOutput) {
	p := out.Plan
	switch {
	case len(p.Fixes) == 0 && len(p.Unrepairable) == 0:
		fmt.Fprintf(w, "%s: nothing to repair\n", line(p.Path))
		return
	case out.DryRun:
		fmt.Fprintf(w, "%s: would repair %s (dry run, nothing written)\n", line(p.Path), plural(len(p.Fixes), "problem"))
	case out.Repaired:
		fmt.Fprintf(w, "%s: repaired %s\n", line(p.Path), plural(len(p.Fixes), "problem"))
	default:
		fmt.Fprintf(w, "%s: not repaired: %s repair cannot mend\n", line(p.Path), plural(len(p.Unrepairable), "problem"))
	}
	for _, f := range p.Fixes {
		fmt.Fprintf(w, "  line %d (byte %d): %s: %s", f.Line, f.Offset, f.Kind, line(f.Reason))
		switch {
		case f.RemovedBytes > 0 && len(f.Wrote) > 0 && f.Line > 0:
			fmt.Fprintf(w, "; the line (%s) replaced", plural(f.RemovedBytes, "byte"))
		case f.RemovedBytes > 0:
			fmt.Fprintf(w, "; %s removed", plural(f.RemovedBytes, "byte"))
		}
		fmt.Fprintln(w)
		for _, b := range f.Wrote {
			fmt.Fprintf(w, "    wrote: %s\n", line(cut(b, wroteLimit)))
		}
	}
	for _, f := range p.Unrepairable {
		fmt.Fprintf(w, "  line %d (byte %d): %s: %s\n", f.Line, f.Offset, f.Kind, line(f.Reason))
	}
	for _, wn := range out.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", line(wn))
	}
	if out.Rotation != nil {
		fmt.Fprintf(w, "  original kept as %s\n", line(out.Rotation.Path))
	}
}

// cut shortens s to at most n runes, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
