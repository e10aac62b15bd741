package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/pkg/trash"
	"github.com/urfave/cli/v2"
)

func trashFlag(what string) cli.Flag {
	return &cli.BoolFlag{Name: "trash", Usage: "move " + what + " into the trash ($XDG_DATA_HOME/sessctl/trash) instead of deleting them; sessctl trash restore puts them back"}
}

// trashDir is where the trash is, for this environment.
func trashDir(env *appEnv) string { return trash.Dir(env.getenv, env.home) }

type trashOptions struct {
	action    string // ls, restore, empty
	id        string
	olderThan time.Duration
	dryRun    bool
	json      bool
}

func trashCommand(env *appEnv) *cli.Command {
	jsonOnly := []cli.Flag{jsonFlag(), noColorFlag()}
	return &cli.Command{
		Name:  "trash",
		Usage: "list, restore and empty what cleanup --trash and prune-rotations --trash moved away",
		Description: "The trash is $XDG_DATA_HOME/sessctl/trash (~/.local/share/sessctl/trash). Each entry is one\n" +
			"session (or the rotations of one session) with a manifest of where every file was.\n" +
			"See docs/trash.md.",
		Subcommands: []*cli.Command{
			{
				Name:  "ls",
				Usage: "list the trash entries, oldest first: when, what, from where, how big",
				Flags: jsonOnly,
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usageErrorf("trash ls takes no arguments (got %q)", c.Args().First())
					}
					return runTrash(c.Context, env, trashOptions{action: "ls", json: c.Bool("json")})
				},
			},
			{
				Name:      "restore",
				Usage:     "put every file of a trash entry back where it was (never over a file that exists now)",
				ArgsUsage: "ID",
				Flags:     jsonOnly,
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf("trash restore needs exactly one ID").withHint("sessctl trash ls lists the entries")
					}
					return runTrash(c.Context, env, trashOptions{action: "restore", id: c.Args().First(), json: c.Bool("json")})
				},
			},
			{
				Name:  "empty",
				Usage: "delete trash entries for good: all, or those trashed more than --older-than ago",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "older-than", Usage: "only entries trashed more than `AGE` ago (30d, 12h, 2w)"},
					dryRunFlag(), jsonFlag(), noColorFlag(),
				},
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return usageErrorf("trash empty takes no arguments (got %q)", c.Args().First())
					}
					opt := trashOptions{action: "empty", dryRun: c.Bool("dry-run"), json: c.Bool("json")}
					if c.IsSet("older-than") {
						d, err := parseAge(c.String("older-than"))
						if err != nil || d <= 0 {
							return usageErrorf("--older-than: invalid age %q (use e.g. 30d, 12h)", c.String("older-than"))
						}
						opt.olderThan = d
					}
					return runTrash(c.Context, env, opt)
				},
			},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("unknown trash command %q (ls, restore, empty)", c.Args().First())
			}
			return usageErrorf("trash needs a command: ls, restore ID or empty")
		},
	}
}

// trashEntry is an entry in trash ls --json and the other outputs.
type trashEntry struct {
	*trash.Manifest
	Bytes int64 `json:"bytes"`
}

type trashBroken struct {
	ID    string `json:"id"`
	Error string `json:"error"`
}

type trashLsOutput struct {
	Trash   string        `json:"trash"`
	Entries []trashEntry  `json:"entries"`
	Broken  []trashBroken `json:"broken"`
	Bytes   int64         `json:"bytes"`
}

type trashEmptyOutput struct {
	Trash   string        `json:"trash"`
	DryRun  bool          `json:"dry_run"`
	Deleted []trashEntry  `json:"deleted"`
	Broken  []trashBroken `json:"deleted_broken"`
	Kept    int           `json:"kept"`
	Bytes   int64         `json:"freed_bytes"`
	Errors  []string      `json:"errors"`
}

func runTrash(ctx context.Context, env *appEnv, opt trashOptions) error {
	dir := trashDir(env)
	tr, err := trash.Open(dir, false)
	if errors.Is(err, fs.ErrNotExist) {
		// no trash yet: nothing in it
		switch opt.action {
		case "ls":
			return renderTrashLs(env, opt, trashLsOutput{Trash: dir, Entries: []trashEntry{}, Broken: []trashBroken{}})
		case "empty":
			return renderTrashEmpty(env, opt, trashEmptyOutput{Trash: dir, DryRun: opt.dryRun, Deleted: []trashEntry{}, Broken: []trashBroken{}, Errors: []string{}}, nil)
		}
		return fmt.Errorf("%s: %w in %s (the trash is empty)", opt.id, trash.ErrNoEntry, dir)
	}
	if err != nil {
		return err
	}
	defer tr.Close()
	switch opt.action {
	case "ls":
		ms, broken, err := tr.List()
		if err != nil {
			return err
		}
		out := trashLsOutput{Trash: dir, Entries: entriesOf(ms), Broken: brokenOf(broken)}
		for _, e := range out.Entries {
			out.Bytes += e.Bytes
		}
		return renderTrashLs(env, opt, out)
	case "restore":
		id, err := tr.Find(opt.id)
		if err != nil {
			return err
		}
		m, err := tr.Restore(id)
		if m == nil {
			return err
		}
		if opt.json {
			if werr := writeJSON(env.stdout, trashEntry{m, m.Bytes()}); werr != nil {
				return werr
			}
		} else {
			fmt.Fprintf(env.stdout, "restored %s %s %s from the trash entry %s (%s, %s)\n", line(m.Kind), line(orDash(m.Agent)), line(m.SessionID), line(m.ID),
				plural(len(m.Files), "file"), humanBytes(m.Bytes()))
			for _, f := range m.Files {
				fmt.Fprintf(env.stdout, "  %s  %s\n", line(f.Path), humanBytes(f.Size))
			}
		}
		return err
	case "empty":
		res, err := tr.Empty(opt.olderThan, env.now(), opt.dryRun)
		if res == nil {
			return err
		}
		out := trashEmptyOutput{Trash: dir, DryRun: opt.dryRun, Deleted: entriesOf(res.Removed), Broken: brokenOf(res.Broken), Kept: res.Kept + len(res.BrokenKept), Errors: []string{}}
		for _, e := range out.Deleted {
			out.Bytes += e.Bytes
		}
		if err != nil {
			out.Errors = append(out.Errors, err.Error())
		}
		return renderTrashEmpty(env, opt, out, err)
	}
	return usageErrorf("unknown trash command %q", opt.action)
}

func entriesOf(ms []*trash.Manifest) []trashEntry {
	out := make([]trashEntry, 0, len(ms))
	for _, m := range ms {
		out = append(out, trashEntry{m, m.Bytes()})
	}
	return out
}

func brokenOf(bs []trash.Broken) []trashBroken {
	out := make([]trashBroken, 0, len(bs))
	for _, b := range bs {
		out = append(out, trashBroken{ID: b.ID, Error: b.Err.Error()})
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func kindOf(e trashEntry) string {
	if !e.Complete {
		return e.Kind + " (incomplete)"
	}
	return e.Kind
}

func renderTrashLs(env *appEnv, opt trashOptions, out trashLsOutput) error {
	var err error
	if len(out.Broken) > 0 {
		err = &cliError{code: exitError, err: errSilent}
	}
	if opt.json {
		if werr := writeJSON(env.stdout, out); werr != nil {
			return werr
		}
		return err
	}
	for _, b := range out.Broken {
		warn(env.stderr, "trash entry %s cannot be read: %s", b.ID, b.Error)
	}
	if len(out.Entries) == 0 {
		fmt.Fprintf(env.stdout, "the trash is empty (%s)\n", line(out.Trash))
		return err
	}
	tw := trimWriter(env.stdout)
	t := newTable(tw, "ID", "TRASHED", "KIND", "AGENT", "SESSION", "FILES", "SIZE", "FROM")
	now := env.now()
	for _, e := range out.Entries {
		t.Append([]string{line(e.ID), relTime(e.TrashedAt, now), line(kindOf(e)), line(orDash(e.Agent)), line(ellipsis(e.SessionID, 36)),
			strconv.Itoa(len(e.Files)), humanBytes(e.Bytes), line(e.Main)})
	}
	t.Render()
	flushTable(tw)
	fmt.Fprintf(env.stdout, "%s, %s in %s\n", entries(len(out.Entries)), humanBytes(out.Bytes), line(out.Trash))
	return err
}

func renderTrashEmpty(env *appEnv, opt trashOptions, out trashEmptyOutput, err error) error {
	if opt.json {
		if werr := writeJSON(env.stdout, out); werr != nil {
			return werr
		}
		if err != nil {
			return &cliError{code: exitCode(err), err: errSilent}
		}
		return nil
	}
	verb := "deleted"
	if opt.dryRun {
		verb = "would delete"
	}
	now := env.now()
	for _, e := range out.Deleted {
		fmt.Fprintf(env.stdout, "%s %s  %s %s %s  %s  %s  (trashed %s)\n", verb, line(e.ID), line(kindOf(e)), line(orDash(e.Agent)), line(e.SessionID),
			plural(len(e.Files), "file"), humanBytes(e.Bytes), relTime(e.TrashedAt, now))
	}
	for _, b := range out.Broken {
		fmt.Fprintf(env.stdout, "%s %s  (unreadable entry: %s)\n", verb, line(b.ID), line(b.Error))
	}
	fmt.Fprintf(env.stdout, "%s %s (%s), kept %s\n", verb, entries(len(out.Deleted)+len(out.Broken)), humanBytes(out.Bytes), thousands(int64(out.Kept)))
	return err
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return thousands(int64(n)) + " entries"
}
