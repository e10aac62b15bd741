package main

import (
	"context"
	"fmt"
	"io"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/redact"
	"github.com/sessctl/sessctl/pkg/rewrite"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type redactOptions struct {
	dryRun          bool
	force           bool
	json            bool
	discardOriginal bool
}

func redactCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "redact",
		Usage:     "replace the secrets in sessions with [REDACTED:<rule>], in place",
		ArgsUsage: "SESSION...",
		Description: "Every secret gitleaks' rules (and sessctl's few own: .env assignments, AWS\n" +
			"secret keys, Azure storage keys) find in a string of the session becomes\n" +
			"[REDACTED:<rule id>]; nothing else of a line changes, and a line without a secret\n" +
			"is copied byte for byte. The original is kept as the next rotation first, and it\n" +
			"still holds the secrets: --discard-original deletes it once the redacted file is\n" +
			"safely written. --dry-run lists each secret (rule, line, a masked preview).\n" +
			"Exit 0: redacted, or nothing to redact; 1: a secret could not be replaced (in a\n" +
			"line that is not JSON). See docs/redact.md.",
		Flags: []cli.Flag{dryRunFlag(), forceFlag(),
			&cli.BoolFlag{Name: "discard-original", Usage: "delete the rotation that keeps the original (with its secrets) once the redacted file is written"},
			rootFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("redact needs at least one SESSION").withHint("sessctl redact --dry-run SESSION")
			}
			if c.Bool("dry-run") && c.Bool("discard-original") {
				return usageErrorf("--dry-run and --discard-original do not go together")
			}
			var ss []*session.Session
			for _, arg := range c.Args().Slice() {
				s, err := resolveSession(env, c.StringSlice("root"), arg)
				if err != nil {
					return err
				}
				if err := wholeSession(s, arg); err != nil {
					return err
				}
				ss = append(ss, s)
			}
			return runRedact(c.Context, env, ss, redactOptions{dryRun: c.Bool("dry-run"), force: c.Bool("force"),
				json: c.Bool("json"), discardOriginal: c.Bool("discard-original")})
		},
	}
}

// otherFile is a file of the session that redact does not rewrite (a
// rotation, Kimi's wire.jsonl, a subagent transcript) and the secrets in it.
type otherFile struct {
	Path    string           `json:"path"`
	Role    session.FileRole `json:"role"`
	Secrets int              `json:"secrets"`
}

// redactOutput is one session's entry of redact --json.
type redactOutput struct {
	Path  string        `json:"path"`
	Agent session.Agent `json:"agent"`
	*redact.Report
	Secrets  int                `json:"secrets"`
	DryRun   bool               `json:"dry_run"`
	Redacted bool               `json:"redacted"`
	Rotation *rotation.Rotation `json:"rotation,omitempty"`
	// OriginalDiscarded: the rotation was deleted (--discard-original).
	OriginalDiscarded bool        `json:"original_discarded"`
	OldSize           int64       `json:"old_size,omitempty"`
	NewSize           int64       `json:"new_size,omitempty"`
	OtherFiles        []otherFile `json:"other_files"`
	Warnings          []string    `json:"warnings"`
}

func runRedact(ctx context.Context, env *appEnv, ss []*session.Session, opt redactOptions) error {
	d, err := redact.Default()
	if err != nil {
		return fmt.Errorf("loading the secret rules: %w", err)
	}
	return eachSession(ctx, env, ss, opt.json, func(s *session.Session) (redactOutput, error) { return redactOne(ctx, env, s, d, opt) },
		func(out redactOutput) { renderRedact(env.stdout, out) }, func(out redactOutput) int { return out.Report.Unredacted() })
}

// scanFile runs redact.File over path without writing.
func scanFile(ctx context.Context, path string, agent session.Agent, d *redact.Detector) (*redact.Report, error) {
	// jsonl.Open: regular files only (a FIFO beside the session must not
	// hang the scan), and a compressed rotation read as its content
	f, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := redact.File(ctx, f, nil, agent, d)
	if err != nil {
		return nil, inPath(path, err)
	}
	return rep, nil
}

func redactOne(ctx context.Context, env *appEnv, s *session.Session, d *redact.Detector, opt redactOptions) (redactOutput, error) {
	path := s.Main
	out := redactOutput{Path: path, Agent: s.Agent, DryRun: opt.dryRun, OtherFiles: []otherFile{}, Warnings: []string{}}
	rep, err := scanFile(ctx, path, s.Agent, d)
	if err != nil {
		return out, err
	}
	out.Report, out.Secrets = rep, len(rep.Hits)
	// the session's other files are not rewritten: say which hold secrets
	for _, f := range s.Files {
		if f.Path == path {
			continue
		}
		r, err := scanFile(ctx, f.Path, s.Agent, d)
		if err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s not searched: %v", f.Path, message(err)))
			continue
		}
		if len(r.Hits) > 0 {
			out.OtherFiles = append(out.OtherFiles, otherFile{Path: f.Path, Role: f.Role, Secrets: len(r.Hits)})
		}
	}
	if opt.dryRun || rep.Lines == 0 {
		return out, nil
	}
	tx, err := rewrite.Begin(ctx, path, s.Agent, rewrite.Options{Force: opt.force, Now: env.now})
	if err != nil {
		return out, err
	}
	defer tx.Close()
	var wrote *redact.Report
	res, err := tx.Replace(ctx, func(orig io.Reader, dst io.Writer) error {
		// the file Begin checked, under the lock: this pass is the one
		// reported
		r, err := redact.File(ctx, orig, dst, s.Agent, d)
		wrote = r
		return err
	})
	if err != nil {
		if res != nil && res.Rotation != nil {
			return out, fmt.Errorf("%w (the new file is in place; the original is in %s)", inPath(path, err), res.Rotation.Path)
		}
		return out, fmt.Errorf("%w (nothing was changed)", inPath(path, err))
	}
	out.Report, out.Secrets = wrote, len(wrote.Hits)
	out.Redacted = true
	out.Warnings = append(out.Warnings, tx.Notes(res)...)
	out.Rotation = res.Rotation
	out.OldSize, out.NewSize = res.OldSize, res.NewSize
	if opt.discardOriginal && res.Rotation != nil {
		if err := tx.Discard(res); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the original was not discarded: %s", message(err)))
		} else {
			out.OriginalDiscarded = true
		}
	}
	return out, nil
}

func renderRedact(w io.Writer, out redactOutput) {
	rep := out.Report
	switch {
	case len(rep.Hits) == 0:
		fmt.Fprintf(w, "%s: no secrets found\n", line(out.Path))
	case out.DryRun:
		fmt.Fprintf(w, "%s: would redact %s in %s (dry run, nothing written)\n", line(out.Path), plural(len(rep.Hits)-rep.Unredacted(), "secret"), plural(rep.Lines, "line"))
	case out.Redacted:
		fmt.Fprintf(w, "%s: redacted %s in %s\n", line(out.Path), plural(len(rep.Hits)-rep.Unredacted(), "secret"), plural(rep.Lines, "line"))
	default:
		fmt.Fprintf(w, "%s: not redacted\n", line(out.Path))
	}
	for _, h := range rep.Hits {
		where := ""
		if h.Field != "" {
			where = " (" + h.Field + ")"
		}
		note := ""
		if h.Unredacted {
			note = " [not redacted: the line is not valid JSON and the secret spans an escape]"
		}
		fmt.Fprintf(w, "  line %d: %s%s: %s%s\n", h.Line, h.Rule, line(where), line(h.Preview), note)
	}
	for _, f := range out.OtherFiles {
		fmt.Fprintf(w, "  warning: %s (%s) holds %s and was not redacted\n", line(f.Path), f.Role, plural(f.Secrets, "secret"))
	}
	for _, wn := range out.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", line(wn))
	}
	if out.Rotation != nil {
		if out.OriginalDiscarded {
			fmt.Fprintf(w, "  the original, with the secrets, was kept as %s and is now deleted\n", line(out.Rotation.Path))
		} else {
			fmt.Fprintf(w, "  the original is kept as %s and STILL HOLDS THE SECRETS: delete it (redact --discard-original, or sessctl prune-rotations) once you no longer need it\n", line(out.Rotation.Path))
		}
	}
}
