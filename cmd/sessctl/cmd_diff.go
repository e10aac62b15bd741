package main

import (
	"context"
	"fmt"

	"github.com/sessctl/sessctl/pkg/diff"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type diffOptions struct {
	a, b           string
	agentA, agentB session.Agent
	stat           bool
	json           bool
	color          bool
	progress       bool
}

func diffCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "compare two session files record by record",
		ArgsUsage: "SESSION | FILE_A FILE_B",
		Description: "With one SESSION: its newest rotation (or --rotation K) against the current file.\n" +
			"With two files: FILE_A against FILE_B. Records are aligned by uuid where the format\n" +
			"has one, by the exact line otherwise; changed messages get a text diff.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "rotation", Aliases: []string{"r"}, Value: -1, Usage: "compare rotation `K` with the current file"},
			&cli.BoolFlag{Name: "stat", Usage: "only counts and estimated tokens removed and added"},
			rootFlag(), jsonFlag(), noColorFlag(), noProgressFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.IsSet("rotation") && c.Int("rotation") < 0 {
				return usageErrorf("--rotation must not be negative")
			}
			opt := diffOptions{stat: c.Bool("stat"), json: c.Bool("json"), color: useColor(env.stdout, env, c.Bool("no-color")),
				progress: progressWanted(env, c)}
			switch c.NArg() {
			case 1:
				s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
				if err != nil {
					return err
				}
				rs, err := rotation.List(s.Main, s.Agent)
				if err != nil {
					return fmt.Errorf("%s: %w", s.Main, err)
				}
				if len(rs) == 0 {
					return usageErrorf("%s has no rotations to compare with", s.Main).withHint("give two files: sessctl diff FILE_A FILE_B")
				}
				from := &rs[len(rs)-1]
				if k := c.Int("rotation"); k >= 0 {
					from = nil
					for i := range rs {
						if rs[i].N == k {
							from = &rs[i]
						}
					}
					if from == nil {
						return usageErrorf("%s: no rotation %d", s.Main, k).withHint("sessctl rotations %s lists them", shellQuote(s.Main))
					}
				}
				opt.a, opt.agentA, opt.b, opt.agentB = from.Path, s.Agent, s.Main, s.Agent
			case 2:
				if c.IsSet("rotation") {
					return usageErrorf("--rotation takes one SESSION, not two files")
				}
				opt.a, opt.b = c.Args().Get(0), c.Args().Get(1)
				var err error
				if opt.agentA, err = session.DetectFile(opt.a); err != nil {
					return err
				}
				if opt.agentB, err = session.DetectFile(opt.b); err != nil {
					return err
				}
			default:
				return usageErrorf("diff needs one SESSION or two files").withHint("sessctl diff SESSION, or sessctl diff FILE_A FILE_B")
			}
			return runDiff(c.Context, env, opt)
		},
	}
}

func runDiff(ctx context.Context, env *appEnv, opt diffOptions) error {
	// the alignment is the long part; the printing that follows streams
	// (a display beside it would mix with the diff on the terminal)
	pr := newProgress(ctx, env, opt.progress, "comparing", 0, unitNone)
	res, err := diff.Compare(opt.a, opt.agentA, opt.b, opt.agentB)
	if err == nil {
		err = res.LineNumbers()
	}
	pr.done()
	if err != nil {
		return err
	}
	dopt := diff.Options{Stat: opt.stat, Color: opt.color}
	switch {
	case opt.json:
		return diff.WriteJSON(env.stdout, res, dopt)
	case opt.stat:
		_, err = diff.WriteStatOnly(env.stdout, res, dopt)
	default:
		_, err = diff.WriteText(env.stdout, res, dopt)
	}
	return err
}
