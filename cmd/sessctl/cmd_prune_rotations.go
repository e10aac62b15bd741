package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/trash"
	"github.com/urfave/cli/v2"
)

type pruneOptions struct {
	keep   int
	agent  session.Agent
	dryRun bool
	json   bool
	trash  bool
}

func pruneRotationsCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "prune-rotations",
		Usage:     "delete all but the newest N rotations of each session file",
		ArgsUsage: "[SESSION...]",
		Description: "Without SESSION, every session under --root (or the agents' default stores) is\n" +
			"pruned. Rotations are the only copies of what a revert or compaction removed:\n" +
			"run with --dry-run first.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "keep", Usage: "keep the newest `N` rotations of each file (required)"},
			dryRunFlag(), trashFlag("the rotations"), rootFlag(), agentFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if err := required(c, "keep", "N"); err != nil {
				return err
			}
			opt := pruneOptions{keep: c.Int("keep"), dryRun: c.Bool("dry-run"), json: c.Bool("json"), trash: c.Bool("trash")}
			if opt.keep < 0 {
				return usageErrorf("--keep must be 0 or more")
			}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			var ss []*session.Session
			var errs []error
			if c.NArg() == 0 {
				res, err := interruptible(c.Context, func() *session.Result { return discoverScope(env, c.StringSlice("root"), nil) })
				if err != nil {
					return err // Ctrl-C while looking for sessions: nothing was deleted
				}
				ss, errs = res.Sessions, res.Errors
			}
			for _, arg := range c.Args().Slice() {
				s, err := resolveSession(env, c.StringSlice("root"), arg)
				if err != nil {
					return err
				}
				ss = append(ss, s)
			}
			return runPrune(c.Context, env, ss, errs, opt)
		},
	}
}

// pruneOutput is prune-rotations --json.
type pruneOutput struct {
	DryRun  bool                `json:"dry_run"`
	Deleted []rotation.Rotation `json:"deleted"`
	Kept    int                 `json:"kept"`
	Freed   int64               `json:"freed_bytes"`
	Errors  []string            `json:"errors"`
	// with --trash: where the rotations went, and the entry of each
	// session's
	TrashDir     string   `json:"trash_dir,omitempty"`
	TrashEntries []string `json:"trash_entries,omitempty"`
}

// runPrune prunes the rotations of ss. errs are what discovery could not
// read: reported, and the exit status is 2, but the sessions that were
// found are pruned.
func runPrune(ctx context.Context, env *appEnv, ss []*session.Session, errs []error, opt pruneOptions) error {
	out := pruneOutput{DryRun: opt.dryRun, Deleted: []rotation.Rotation{}, Errors: []string{}}
	var tr *trash.Trash
	if opt.trash && !opt.dryRun {
		var err error
		if tr, err = trash.Open(trashDir(env), true); err != nil {
			return fmt.Errorf("trash: %w", err) // nothing was deleted
		}
		defer tr.Close()
		out.TrashDir = tr.Path()
	}
	var firstErr error
	fail := func(err error) {
		out.Errors = append(out.Errors, err.Error())
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, err := range errs {
		fail(err)
	}
	// the sessions of one directory are pruned together, from one listing
	// of it (one listing per session made a directory of 1,000 sessions
	// take 11.6 s)
	type dirKey struct{ root, dir string }
	groups := map[dirKey][]*session.Session{}
	var order []dirKey
	for _, s := range ss {
		if opt.agent != "" && s.Agent != opt.agent {
			continue
		}
		k := dirKey{s.Root, filepath.Dir(s.Main)}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
groups:
	for _, k := range order {
		if ctx.Err() != nil {
			// Ctrl-C: what was pruned is reported, the rest is left
			fail(errInterrupted)
			break
		}
		group := groups[k]
		ts := make([]rotation.PruneTarget, len(group))
		for i, s := range group {
			ts[i] = rotation.PruneTarget{Main: s.Main, Agent: s.Agent, ID: s.ID}
		}
		// each session's lock is held while its rotations go: no revert or
		// restore may reserve a name meanwhile
		results, errs := rotation.PruneDirTo(ctx, k.root, ts, opt.keep, opt.dryRun, env.now(), tr)
		for i, s := range group {
			res, err := results[i], errs[i]
			if res != nil {
				for _, l := range res.Leftovers {
					warn(env.stderr, "%s", l.Removed())
				}
				out.Kept += res.Kept
				if res.Trash != "" {
					out.TrashEntries = append(out.TrashEntries, res.Trash)
				}
				for _, r := range res.Deleted {
					out.Deleted = append(out.Deleted, r)
					out.Freed += r.Size
				}
			}
			if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				fail(errInterrupted)
				break groups
			}
			if err != nil {
				if !strings.Contains(err.Error(), s.Main) {
					err = fmt.Errorf("%s: %w", s.Main, err)
				}
				fail(err)
			}
		}
	}
	if opt.json {
		if err := writeJSON(env.stdout, out); err != nil {
			return err
		}
		if firstErr != nil {
			return &cliError{code: exitCode(firstErr), err: errSilent} // the errors are in the JSON
		}
		return nil
	}
	verb := "deleted"
	switch {
	case opt.dryRun && opt.trash:
		verb = "would move into the trash"
	case opt.dryRun:
		verb = "would delete"
	case opt.trash:
		verb = "moved into the trash"
	}
	for _, r := range out.Deleted {
		fmt.Fprintf(env.stdout, "%s %s (%s)\n", verb, line(r.Path), humanBytes(r.Size))
	}
	fmt.Fprintf(env.stdout, "%s %s (%s), kept %s\n", verb, plural(len(out.Deleted), "rotation"), humanBytes(out.Freed), thousands(int64(out.Kept)))
	if len(out.TrashEntries) > 0 {
		fmt.Fprintf(env.stdout, "added %s to the trash %s; sessctl trash restore ID puts them back\n", entries(len(out.TrashEntries)), line(out.TrashDir))
	}
	if firstErr == nil {
		return nil
	}
	for _, e := range out.Errors {
		fmt.Fprintf(env.stderr, "sessctl: error: %s\n", line(e))
	}
	return &cliError{code: exitCode(firstErr), err: errSilent, hint: hintFor(firstErr)}
}
