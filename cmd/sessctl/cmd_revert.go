package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/rewrite"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type revertOptions struct {
	n         int
	mechanism checkpoint.Mechanism
	dryRun    bool
	force     bool
	json      bool
	color     bool
	fault     func(step string) error // tests only: rewrite.Options.Fault
}

func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "rewrite even a live session (changed in the last seconds or open for writing); the lock and the changed-under-us checks still apply"}
}

func dryRunFlag() cli.Flag {
	return &cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what would change and change nothing"}
}

func revertCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "revert",
		Usage:     "revert a session to just before a checkpoint (Kimi) or user turn (other agents)",
		ArgsUsage: "SESSION",
		Description: "Kimi: exactly kimi-cli's own revert_to(N). Claude Code, clawdcode: the file is cut\n" +
			"before user turn N. Codex: a thread_rolled_back record is appended (the client's own\n" +
			"rollback), or the file is cut when a compaction follows turn N. The original is\n" +
			"always kept as the next rotation first (see `sessctl rotations`).",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "checkpoint", Aliases: []string{"c"}, Usage: "revert to before checkpoint or turn `N` (required; see `sessctl checkpoints`)"},
			&cli.StringFlag{Name: "mechanism", Value: "auto", Usage: "`HOW` to write a non-Kimi revert: auto, truncate, rollback (Codex only)"},
			dryRunFlag(), forceFlag(), rootFlag(), jsonFlag(), noColorFlag(),
		},
		Action: func(c *cli.Context) error {
			if err := required(c, "checkpoint", "N"); err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageErrorf("revert needs exactly one SESSION").withHint("sessctl revert --checkpoint N SESSION")
			}
			mech, err := checkpoint.ParseMechanism(c.String("mechanism"))
			if err != nil {
				return usageErrorf("%v", err)
			}
			if c.Int("checkpoint") < 0 {
				return usageErrorf("--checkpoint must be 0 or more")
			}
			s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
			if err != nil {
				return err
			}
			if err := wholeSession(s, c.Args().First()); err != nil {
				return err
			}
			return runRevert(c.Context, env, s, revertOptions{n: c.Int("checkpoint"), mechanism: mech, dryRun: c.Bool("dry-run"),
				force: c.Bool("force"), json: c.Bool("json"), color: useColor(env.stdout, env, c.Bool("no-color"))})
		},
	}
}

// revertOutput is revert --json.
type revertOutput struct {
	Session string `json:"session"`
	// NewPath is where the session is after the revert when it moved: a
	// compressed rollout becomes its plain file.
	NewPath  string             `json:"new_path,omitempty"`
	DryRun   bool               `json:"dry_run"`
	Plan     *checkpoint.Plan   `json:"plan"`
	Rotation *rotation.Rotation `json:"rotation"` // where the original is kept (nil on --dry-run)
	// NextRotation is the name the rotation would get (--dry-run).
	NextRotation string `json:"next_rotation,omitempty"`
	OldSize      int64  `json:"old_size"`
	NewSize      int64  `json:"new_size"`
	// CorruptLeftBehind counts the lines before the cut that the new file
	// does not carry (Kimi drops blank, malformed and invalid lines).
	CorruptLeftBehind int      `json:"corrupt_left_behind"`
	Warnings          []string `json:"warnings"`
}

func runRevert(ctx context.Context, env *appEnv, s *session.Session, opt revertOptions) error {
	// the garbage collector keeps the heap near what the longest line needs
	defer boundMemory([]*session.Session{s})()
	path := s.Main
	out := revertOutput{Session: path, DryRun: opt.dryRun, Warnings: []string{}}
	plan := func() error {
		p, err := checkpoint.PlanRevert(ctx, path, s.Agent, opt.n, opt.mechanism)
		if err != nil {
			if errors.Is(err, checkpoint.ErrNoCheckpoint) {
				return usageErrorf("%s: %v", path, err).withHint("sessctl checkpoints %s lists them", shellQuote(path))
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if p.Mechanism == checkpoint.Truncate && p.Cut == 0 {
			return usageErrorf("%s: reverting to before turn %d would leave an empty session", path, opt.n).
				withHint("pick a later turn; to drop the whole session, delete it")
		}
		out.Plan = p
		if p.Copied != nil {
			out.CorruptLeftBehind = p.Copied.Dropped + p.Copied.Blank
		}
		out.Warnings = append(out.Warnings, p.Warnings...)
		return nil
	}
	if opt.dryRun {
		if err := plan(); err != nil {
			return err
		}
		if n, err := rotation.Next(path, s.Agent); err == nil {
			out.NextRotation = rotation.NameFor(path, s.Agent, n)
		}
		out.OldSize = fileSize(path)
		out.NewSize = out.Plan.NewSize(out.OldSize)
		return renderRevert(env, out, opt)
	}
	tx, err := rewrite.Begin(ctx, path, s.Agent, rewrite.Options{Force: opt.force, Now: env.now, Fault: opt.fault})
	if err != nil {
		return err
	}
	defer tx.Close()
	if err := plan(); err != nil { // under the lock, on the file Begin checked
		return err
	}
	res, err := tx.Replace(ctx, func(orig io.Reader, dst io.Writer) error {
		return out.Plan.Write(orig, dst, env.now())
	})
	if err != nil {
		if res != nil && res.Rotation != nil {
			return fmt.Errorf("%w (the new file is in place; the original is in %s)", inPath(path, err), res.Rotation.Path)
		}
		return fmt.Errorf("%w (nothing was changed)", inPath(path, err))
	}
	out.Warnings = append(out.Warnings, tx.Notes(res)...)
	out.NewPath = res.NewPath
	out.Rotation = res.Rotation
	out.OldSize, out.NewSize = res.OldSize, res.NewSize
	return renderRevert(env, out, opt)
}

func renderRevert(env *appEnv, out revertOutput, opt revertOptions) error {
	for _, w := range out.Warnings {
		warn(env.stderr, "%s", w)
	}
	if opt.json {
		return writeJSON(env.stdout, out)
	}
	col := colorer{on: opt.color}
	p := out.Plan
	w := env.stdout
	name := line(filepath.Base(out.Session))
	what := p.Unit
	if out.DryRun {
		// as `git diff --stat` would show it
		switch p.Mechanism {
		case checkpoint.Rollback:
			fmt.Fprintf(w, " %s | 1 %s\n", name, col.green("+"))
			fmt.Fprintf(w, " 1 file changed, 1 insertion(+), 0 deletions(-)\n")
		default:
			fmt.Fprintf(w, " %s | %d %s\n", name, p.RemovedRecords, col.red(strings.Repeat("-", min(p.RemovedRecords, 50))))
			fmt.Fprintf(w, " 1 file changed, 0 insertions(+), %d deletions(-)\n", p.RemovedRecords)
		}
	}
	verb := "reverted"
	if out.DryRun {
		verb = "would revert"
	}
	fmt.Fprintf(w, "%s %s to before %s %d (%s)\n", verb, line(out.Session), what, p.N, mechanismText(p.Mechanism))
	if p.Point.Preview != "" {
		fmt.Fprintf(w, "  %s %d began with: %s\n", what, p.N, ellipsis(line(p.Point.Preview), 70))
	}
	switch p.Mechanism {
	case checkpoint.Rollback:
		fmt.Fprintf(w, "  the model no longer sees %s: %s, %s, ~%s (they stay in the file)\n",
			plural(p.RollbackTurns, "turn"), plural(p.RemovedRecords, "record"), humanBytes(p.RemovedBytes), plural(p.RemovedTokens, "token"))
	default:
		fmt.Fprintf(w, "  removed %s from line %d on: %s, ~%s\n", plural(p.RemovedRecords, "record"), lineOf(p), humanBytes(p.RemovedBytes), plural(p.RemovedTokens, "token"))
	}
	if p.KeptAfterCut > 0 {
		fmt.Fprintf(w, "  kept %s from after the cut (session names, the spend ledger)\n", plural(p.KeptAfterCut, "record"))
	}
	if p.Copied != nil {
		fmt.Fprintf(w, "  kept %s; context tokens at the checkpoint: %s\n", plural(p.Copied.Kept, "record"), tokensText(p.Copied.Tokens))
	}
	rot := ""
	if out.Rotation != nil {
		rot = out.Rotation.Path
		fmt.Fprintf(w, "  original kept as %s\n", line(rot))
	} else if out.NextRotation != "" {
		rot = out.NextRotation
		fmt.Fprintf(w, "  the original would be kept as %s\n", line(rot))
		if jsonl.IsCompressedName(out.Session) {
			fmt.Fprintf(w, "  the session would be written as the plain %s (as Codex does before it appends)\n", line(jsonl.PlainName(out.Session)))
		}
	}
	if out.CorruptLeftBehind > 0 {
		fmt.Fprintf(w, "  %s\n", col.yellow(fmt.Sprintf("%s before the checkpoint %s not carried over (kimi-cli drops them too); they stay in %s",
			plural(out.CorruptLeftBehind, "blank or corrupt line"), isAre(out.CorruptLeftBehind), line(filepath.Base(rot)))))
	}
	return nil
}

func lineOf(p *checkpoint.Plan) int {
	if p.Mechanism == checkpoint.KimiRevertTo {
		return p.Copied.CutLine
	}
	return p.CutLine
}

func mechanismText(m checkpoint.Mechanism) string {
	switch m {
	case checkpoint.KimiRevertTo:
		return "kimi-cli revert_to"
	case checkpoint.Rollback:
		return "codex thread_rolled_back appended"
	}
	return "file cut"
}

func tokensText(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return thousands(n)
}

func shellQuote(s string) string {
	if strings.ContainsAny(s, " '\"$\\`") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}
