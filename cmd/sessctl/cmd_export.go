package main

import (
	"context"
	"fmt"

	"github.com/sessctl/sessctl/pkg/export"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/redact"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type exportOptions struct {
	export.Options
	out    string // "" or "-": stdout
	redact bool
}

func exportCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a session as a readable transcript (Markdown, HTML or JSON)",
		ArgsUsage: "SESSION | --usage",
		Description: "The conversation the client sends on resume, by turn (numbered as `sessctl\n" +
			"checkpoints` numbers them): prompts, replies, tool calls and results (long ones\n" +
			"folded), compaction summaries marked; --thinking adds the model's reasoning, --all\n" +
			"what the client no longer sends, marked. HTML is one self-contained page: no\n" +
			"external assets, no script, every session text escaped. --redact replaces the\n" +
			"secrets `sessctl redact` finds (docs/redact.md) in every text of the transcript.\n\n" +
			"With --usage and no SESSION: the recorded usage of every session (as `stats --all`\n" +
			"counts it), one row per request, as Parquet or NDJSON (docs/export.md).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: export.Markdown, Usage: "`FORMAT` of the transcript: md, html or json (--usage: parquet or ndjson)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of stdout"},
			&cli.BoolFlag{Name: "thinking", Usage: "include the model's reasoning"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "also what the client no longer sends, marked"},
			&cli.IntFlag{Name: "fold", Value: export.FoldLines, Usage: "fold tool calls and results after `N` lines"},
			&cli.BoolFlag{Name: "redact", Usage: "replace every secret (as `sessctl redact` finds them) with [REDACTED:<rule>]"},
			rootFlag(),
		}, usageExportFlags()...),
		Action: func(c *cli.Context) error {
			if c.Bool("usage") {
				return usageExportAction(env, c)
			}
			if c.NArg() != 1 {
				return usageErrorf("export needs exactly one SESSION").withHint("sessctl export SESSION --format html -o session.html")
			}
			switch c.String("format") {
			case export.Markdown, export.HTML, export.JSON:
			default:
				return usageErrorf("unknown format %q", c.String("format")).withHint("formats are md, html and json")
			}
			if c.Int("fold") < 1 {
				return usageErrorf("--fold must be at least 1")
			}
			s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
			if err != nil {
				return err
			}
			return runExport(c.Context, env, namedFile(s, c.Args().First()), exportOptions{out: c.String("output"),
				redact:  c.Bool("redact"),
				Options: export.Options{Format: c.String("format"), Thinking: c.Bool("thinking"), All: c.Bool("all"), Fold: c.Int("fold")}})
		},
	}
}

func runExport(ctx context.Context, env *appEnv, s *session.Session, opt exportOptions) error {
	opt.Title = s.ID
	if opt.redact {
		d, err := redact.Default()
		if err != nil {
			return fmt.Errorf("loading the secret rules: %w", err)
		}
		opt.Redact = func(text string) string {
			out, _ := d.Redact(text)
			return out
		}
	}
	if sum, err := session.Summarize(s); err == nil && sum.Title != "" {
		opt.Title = sum.Title
	}
	if opt.out == "" || opt.out == "-" {
		return exportErr(ctx, export.Write(ctx, env.stdout, s, opt.Options))
	}
	f, err := jsonl.CreateAtomic(opt.out, 0o644)
	if err != nil {
		return err
	}
	if err := export.Write(ctx, f, s, opt.Options); err != nil {
		f.Abort()
		return exportErr(ctx, err)
	}
	return f.Commit(nil)
}

func exportErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}
