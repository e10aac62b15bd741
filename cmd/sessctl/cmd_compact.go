package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/compact"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

// minSummarizerTimeout: a summarizer is a model call; less than a second
// would only ever time out.
const minSummarizerTimeout = time.Second

type compactOptions struct {
	session  string
	roots    []string
	opt      compact.Options
	json     bool
	color    bool
	progress bool
}

func compactCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "compact",
		Usage:     "shrink a session offline: summarise the older messages, keep the recent ones",
		ArgsUsage: "SESSION",
		Description: "SESSION is a session file, a Kimi session directory, or a session id (prefix).\n" +
			"The older part of the live context is replaced by a summary (extractive, without a model,\n" +
			"unless --summarizer is given) and the tail from the --keep-th last user/assistant message on\n" +
			"is kept. The result is written the way the agent writes its own compaction, after the\n" +
			"original is kept as a rotation. Exit status: 0 done, 1 nothing to compact, 2 usage or I/O\n" +
			"error, 3 refused (live session, locked, changed while reading). See docs/compact.md.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "keep", Value: compact.DefaultKeep, Usage: "keep the tail from the `N`-th last user/assistant message on"},
			&cli.IntFlag{Name: "summary-tokens", Value: compact.DefaultSummaryTokens, Usage: "bound the extractive summary to `N` tokens"},
			&cli.IntFlag{Name: "max-tool-output", Value: compact.DefaultMaxToolOutput, Usage: "shorten kept tool outputs over `N` tokens to their head and tail (0: never)"},
			&cli.StringFlag{Name: "summarizer", Usage: "summarise with the shell `COMMAND` (history on stdin, summary on stdout) instead of extractively"},
			&cli.DurationFlag{Name: "summarizer-timeout", Value: compact.DefaultSummarizerTimeout, Usage: "give the summarizer at most `DURATION`, then fall back to the extractive summary"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "show the split and the summary; write nothing"},
			&cli.BoolFlag{Name: "force", Usage: "compact even a session that looks live (recently written or open for writing)"},
			rootFlag(), jsonFlag(), noColorFlag(), noProgressFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("compact needs exactly one SESSION").withHint("sessctl compact ~/.claude/projects/<project>/<id>.jsonl --dry-run")
			}
			if c.Int("keep") < 1 {
				return usageErrorf("--keep must be at least 1")
			}
			if c.Int("summary-tokens") < 100 {
				return usageErrorf("--summary-tokens must be at least 100")
			}
			if c.Int("max-tool-output") < 0 {
				return usageErrorf("--max-tool-output must not be negative")
			}
			if d := c.Duration("summarizer-timeout"); d < minSummarizerTimeout {
				return usageErrorf("--summarizer-timeout must be at least %s (got %s)", minSummarizerTimeout, d)
			}
			if c.IsSet("summarizer") && strings.TrimSpace(c.String("summarizer")) == "" {
				return usageErrorf("--summarizer needs a command")
			}
			return runCompact(c.Context, env, compactOptions{
				session: c.Args().First(), roots: c.StringSlice("root"),
				opt: compact.Options{
					Keep: c.Int("keep"), SummaryTokens: c.Int("summary-tokens"), MaxToolOutput: c.Int("max-tool-output"),
					Summarizer: c.String("summarizer"), SummarizerTimeout: c.Duration("summarizer-timeout"),
					DryRun: c.Bool("dry-run"), Force: c.Bool("force"), Now: env.now,
				},
				json:     c.Bool("json"),
				color:    useColor(env.stdout, env, c.Bool("no-color")),
				progress: progressWanted(env, c),
			})
		},
	}
}

func runCompact(ctx context.Context, env *appEnv, o compactOptions) error {
	s, err := resolveSession(env, o.roots, o.session)
	if err != nil {
		return err
	}
	if err := wholeSession(s, o.session); err != nil {
		return err
	}
	// the garbage collector keeps the heap near what the longest line needs
	defer boundMemory([]*session.Session{s})()
	pr := newProgress(ctx, env, o.progress, "compacting", 0, unitNone)
	res, err := compact.Compact(ctx, s.Main, s.Agent, o.opt)
	pr.done()
	if err != nil {
		var short *compact.TooShortError
		if errors.As(err, &short) {
			if o.json {
				// exit 1 still answers in JSON: nothing written, and why
				var v any = compactNotDone{res, message(err)}
				if res == nil {
					v = compactTooShort{Path: s.Main, Agent: s.Agent, DryRun: o.opt.DryRun, Keep: short.Keep,
						Messages: short.Messages, Reason: message(err)}
				}
				if err := writeJSON(env.stdout, v); err != nil {
					return err
				}
				return silentFindings
			}
			return findingsError("%v", err).withHint("a smaller --keep compacts more (it must stay at least 1)")
		}
		if errors.Is(err, compact.ErrNothingToDo) {
			// what it would have been, and why it was not written
			if res != nil && o.json {
				if err := writeJSON(env.stdout, res); err != nil {
					return err
				}
			} else if res != nil {
				renderCompact(env, res, colorer{o.color})
			}
			return findingsError("%v", err)
		}
		if res != nil && res.Original != "" {
			return fmt.Errorf("%w (the original is intact; a copy is at %s)", err, res.Original)
		}
		return err
	}
	for _, w := range res.Warnings {
		warn(env.stderr, "%s", w)
	}
	if o.json {
		return writeJSON(env.stdout, res)
	}
	renderCompact(env, res, colorer{o.color})
	return nil
}

// compactNotDone and compactTooShort are compact --json when there was
// nothing to do (exit 1): the result as far as it got (written false) and
// the reason.
type compactNotDone struct {
	*compact.Result
	Reason string `json:"reason"`
}

type compactTooShort struct {
	Path     string        `json:"path"`
	Agent    session.Agent `json:"agent"`
	DryRun   bool          `json:"dry_run"`
	Written  bool          `json:"written"`
	Keep     int           `json:"keep"`
	Messages int           `json:"messages"`
	Reason   string        `json:"reason"`
}

func renderCompact(env *appEnv, r *compact.Result, col colorer) {
	w := env.stdout
	fmt.Fprintf(w, "%s  (%s)\n", col.bold(line(r.Path)), r.Agent)
	fmt.Fprintf(w, "split:    %s of %s compacted, the last %s kept (tail from line %d)\n",
		thousands(int64(r.CompactedMessages)), plural(r.Messages, "message"), thousands(int64(r.KeptMessages)), r.SplitLine)
	label := "exact"
	if !r.Tokens.Exact {
		label = "estimate"
	}
	change := col.green(fmt.Sprintf("%.1f%% saved", r.Tokens.SavedPercent))
	if r.Tokens.SavedPercent < 0 {
		change = col.yellow(fmt.Sprintf("%.1f%% larger: the summary outweighs what it replaces", -r.Tokens.SavedPercent))
	}
	fmt.Fprintf(w, "tokens:   %s → %s (%s; %s, %s)\n", thousands(int64(r.Tokens.Before)), thousands(int64(r.Tokens.After)),
		change, r.Tokens.Encoding, label)
	if r.Tokens.RecordedBefore != nil || r.Tokens.RecordedAfter != nil {
		fmt.Fprintf(w, "recorded: context %s before", optThousands(r.Tokens.RecordedBefore))
		if r.Tokens.RecordedAfter != nil {
			fmt.Fprintf(w, ", %s written for after", thousands(*r.Tokens.RecordedAfter))
		}
		fmt.Fprintln(w)
	}
	sum := fmt.Sprintf("%s, %d tokens", r.Summarizer.Kind, r.SummaryTokens)
	if r.Summarizer.Kind == "command" {
		sum += fmt.Sprintf(" (%s, %.1fs)", line(r.Summarizer.Command), r.Summarizer.Seconds)
	}
	fmt.Fprintf(w, "summary:  %s\n", sum)
	if r.Summarizer.Fallback {
		fmt.Fprintf(w, "%s the summarizer failed (%s); the extractive summary was used\n", col.yellow("warning:"), line(r.Summarizer.Error))
	}
	files := "none"
	if len(r.FilesIncluded) > 0 {
		files = line(strings.Join(r.FilesIncluded, ", "))
	}
	fmt.Fprintf(w, "files:    %s\n", files)
	fmt.Fprintf(w, "tail:     %s; %s dropped, %s given an aborted result, %s shortened\n",
		plural(r.Tail.Records, "record"), plural(r.Tail.DroppedToolResults, "orphan tool result"), plural(r.Tail.AbortedToolCalls, "call"),
		plural(r.Tail.TruncatedToolOutputs, "tool output"))
	if r.CorruptCompacted > 0 {
		fmt.Fprintf(w, "%s %s in the compacted part stay in the original only\n", col.yellow("warning:"), plural(r.CorruptCompacted, "corrupt line"))
	}
	if r.CorruptTail > 0 {
		fmt.Fprintf(w, "%s %s in the kept tail left out of the new context\n", col.yellow("warning:"), plural(r.CorruptTail, "corrupt line"))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note:     %s\n", n)
	}
	if r.NoUserMessage {
		fmt.Fprintf(w, "%s the session has no user message; the summary lists no request\n", col.yellow("warning:"))
	}
	if r.DryRun {
		fmt.Fprintln(w, "\nkept tail:")
		for _, k := range r.Kept {
			where := fmt.Sprintf("line %d", k.Line)
			if k.Line == 0 {
				where = "added"
			}
			fmt.Fprintf(w, "  %-10s %-9s %s\n", where, line(k.Role), line(k.Text))
		}
		fmt.Fprintf(w, "\n--- summary ---\n%s\n--- end of summary ---\n", block(r.Summary))
		fmt.Fprintln(w, "dry run: nothing was written")
		return
	}
	if !r.Written {
		return // not written: the error says why
	}
	fmt.Fprintf(w, "original: %s (%s)\n", line(r.Original), humanBytes(r.OriginalSize))
	how := "rewritten"
	if r.AppendedLines > 0 {
		how = plural(r.AppendedLines, "line") + " appended"
	}
	written := r.Path
	if r.NewPath != "" {
		written = r.NewPath
	}
	fmt.Fprintf(w, "written:  %s, %s, %s\n", line(written), humanBytes(r.NewSize), how)
}

func optThousands(v *int64) string {
	if v == nil {
		return "unknown"
	}
	return thousands(*v)
}
