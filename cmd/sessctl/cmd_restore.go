package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/rewrite"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type restoreOptions struct {
	n      int
	dryRun bool
	force  bool
	json   bool
	fault  func(string) error // tests only
}

func restoreCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "bring rotation K back as the session file (the current file is rotated first)",
		ArgsUsage: "SESSION",
		Description: "Nothing is lost: the current file becomes the next rotation before rotation K is\n" +
			"copied into its place, and rotation K itself stays.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "rotation", Aliases: []string{"r"}, Usage: "restore rotation `K` (required; see `sessctl rotations`)"},
			dryRunFlag(), forceFlag(), rootFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if err := required(c, "rotation", "K"); err != nil {
				return err
			}
			if c.Int("rotation") < 0 {
				return usageErrorf("--rotation must not be negative")
			}
			if c.NArg() != 1 {
				return usageErrorf("restore needs exactly one SESSION")
			}
			s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
			if err != nil {
				return err
			}
			if err := wholeSession(s, c.Args().First()); err != nil {
				return err
			}
			return runRestore(c.Context, env, s, restoreOptions{n: c.Int("rotation"), dryRun: c.Bool("dry-run"), force: c.Bool("force"), json: c.Bool("json")})
		},
	}
}

// restoreOutput is restore --json.
type restoreOutput struct {
	Session  string             `json:"session"`
	DryRun   bool               `json:"dry_run"`
	Restored rotation.Rotation  `json:"restored"`
	Rotation *rotation.Rotation `json:"rotation"` // where the replaced file is kept
	OldSize  int64              `json:"old_size"`
	NewSize  int64              `json:"new_size"`
}

func runRestore(ctx context.Context, env *appEnv, s *session.Session, opt restoreOptions) error {
	path := s.Main
	rs, err := rotation.List(path, s.Agent)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var from *rotation.Rotation
	for i := range rs {
		if rs[i].N == opt.n {
			from = &rs[i]
		}
	}
	if from == nil {
		return usageErrorf("%s: no rotation %d", path, opt.n).withHint("sessctl rotations %s lists them", shellQuote(path))
	}
	if from.Size == 0 && !opt.force {
		return usageErrorf("%s: rotation %d is empty (a placeholder left by an interrupted rotation?)", path, opt.n).
			withHint("use --force to restore an empty file anyway")
	}
	out := restoreOutput{Session: path, DryRun: opt.dryRun, Restored: *from, OldSize: fileSize(path), NewSize: from.Size}
	if opt.dryRun {
		return renderRestore(env, out, opt)
	}
	tx, err := rewrite.Begin(ctx, path, s.Agent, rewrite.Options{Force: opt.force, Now: env.now, Fault: opt.fault})
	if err != nil {
		return err
	}
	defer tx.Close()
	res, err := tx.Replace(ctx, func(_ io.Reader, dst io.Writer) error {
		f, err := jsonl.Open(from.Path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(dst, f)
		return err
	})
	if err != nil {
		return fmt.Errorf("%w (the session file was not replaced)", inPath(path, err))
	}
	out.Rotation = res.Rotation
	out.OldSize, out.NewSize = res.OldSize, res.NewSize
	for _, w := range tx.Notes(res) {
		warn(env.stderr, "%s", w)
	}
	return renderRestore(env, out, opt)
}

func renderRestore(env *appEnv, out restoreOutput, opt restoreOptions) error {
	if opt.json {
		return writeJSON(env.stdout, out)
	}
	w := env.stdout
	if out.DryRun {
		fmt.Fprintf(w, "would restore %s from %s (%s, now %s)\n", line(out.Session), line(out.Restored.Path), humanBytes(out.Restored.Size), humanBytes(out.OldSize))
		return nil
	}
	fmt.Fprintf(w, "restored %s from %s (%s)\n", line(out.Session), line(out.Restored.Path), humanBytes(out.NewSize))
	if out.Rotation != nil {
		fmt.Fprintf(w, "  the replaced file is kept as %s\n", line(out.Rotation.Path))
	}
	switch {
	case jsonl.IsCompressedName(out.Restored.Path):
		fmt.Fprintf(w, "  the rotation is compressed: its content was restored as the plain file\n")
	case out.NewSize != out.Restored.Size:
		fmt.Fprintf(w, "  a final newline was added (the rotation ended without one)\n")
	}
	return nil
}
