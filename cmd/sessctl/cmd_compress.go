package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sessctl/sessctl/pkg/compress"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type compressOptions struct {
	roots     []string
	args      []string
	agent     session.Agent
	olderThan time.Duration
	dryRun    bool
	force     bool
	json      bool
	fault     func(step string) error // tests only
}

func compressCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "compress",
		Usage:     "compress cold Codex rollouts to rollout-….jsonl.zst, as Codex 0.169 does itself; --dry-run lists them",
		ArgsUsage: "[SESSION...]",
		Description: "Without SESSION, every session under --root (or the agents' default stores) whose\n" +
			"transcript is older than --older-than (default 7d, Codex's own threshold) is compressed.\n" +
			"Codex reads the compressed rollout as it is and makes it plain again before it appends.\n" +
			"The other agents' clients cannot read compressed files: their sessions are refused.\n" +
			"The .zst keeps the file's mode and mtime; it is verified to hold every byte before the\n" +
			"plain file is removed. See docs/compress.md.\n" +
			"Exit status: 0 done, 1 a named session cannot be compressed (its client would not read it),\n" +
			"2 an error, 3 refused for safety (a live, locked or changed session).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Value: "7d", Usage: "compress transcripts not modified for `AGE` (7d, 12h, 2w; 0: any that is not live)"},
			dryRunFlag(), forceFlag(), rootFlag(), agentFlag(), jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			opt := compressOptions{roots: c.StringSlice("root"), args: c.Args().Slice(), dryRun: c.Bool("dry-run"),
				force: c.Bool("force"), json: c.Bool("json")}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			if a := c.String("older-than"); a == "0" {
				opt.olderThan = 0
			} else if opt.olderThan, err = parseAge(a); err != nil {
				return usageErrorf("--older-than: %v", err)
			}
			return runCompress(c.Context, env, opt)
		},
	}
}

// compressReport is compress --json.
type compressReport struct {
	DryRun    bool             `json:"dry_run"`
	OlderThan string           `json:"older_than"` // as 7d, 12h, 90m
	Sessions  []*compress.Item `json:"sessions"`
	Summary   compressSummary  `json:"summary"`
	Errors    []string         `json:"errors"`
}

type compressSummary struct {
	Compressed      int   `json:"compressed"`
	WouldCompress   int   `json:"would_compress"`
	Skipped         int   `json:"skipped"`
	NotCold         int   `json:"not_cold"`
	Refused         int   `json:"refused"`
	Failed          int   `json:"failed"`
	Bytes           int64 `json:"bytes"`            // plain bytes compressed (or to compress)
	CompressedBytes int64 `json:"compressed_bytes"` // their size compressed
}

// runCompress compresses the sessions named in opt.args, or every session
// found under the roots. A session that cannot be compressed is reported
// and the others go on.
func runCompress(ctx context.Context, env *appEnv, opt compressOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rep := compressReport{DryRun: opt.dryRun, OlderThan: shortAge(opt.olderThan), Sessions: []*compress.Item{}, Errors: []string{}}
	var firstErr error
	fail := func(err error) {
		rep.Errors = append(rep.Errors, err.Error())
		if firstErr == nil {
			firstErr = err
		}
	}
	named := len(opt.args) > 0
	var ss []*session.Session
	if named {
		for _, arg := range opt.args {
			s, err := resolveSession(env, opt.roots, arg)
			if err != nil {
				return err
			}
			ss = append(ss, s)
		}
	} else {
		res, err := interruptible(ctx, func() *session.Result { return discoverScope(env, opt.roots, nil) })
		if err != nil {
			return err // Ctrl-C while looking for sessions: nothing was changed
		}
		ss = res.Sessions
		for _, err := range res.Errors {
			fail(err)
		}
	}
	co := compress.Options{OlderThan: opt.olderThan, DryRun: opt.dryRun, Force: opt.force, Now: env.now, Fault: opt.fault}
	code := exitOK
	worse := func(c int) {
		// the most serious outcome decides the exit status
		rank := map[int]int{exitOK: 0, exitFindings: 1, exitRefused: 2, exitError: 3, exitSignal: 4}
		if rank[c] > rank[code] {
			code = c
		}
	}
	for _, s := range ss {
		if opt.agent != "" && s.Agent != opt.agent {
			continue
		}
		if ctx.Err() != nil {
			// Ctrl-C: what was compressed is reported, the rest is left
			// as it is (and not listed)
			worse(exitSignal)
			break
		}
		it := compress.Session(ctx, s, co)
		sum := &rep.Summary
		switch it.Status {
		case compress.StatusCompressed:
			sum.Compressed++
			sum.Bytes += it.Size
			sum.CompressedBytes += it.CompressedSize
		case compress.StatusWouldCompress:
			sum.WouldCompress++
			sum.Bytes += it.Size
		case compress.StatusSkipped:
			if it.Code == compress.CodeNotCold {
				sum.NotCold++
			} else {
				sum.Skipped++
			}
			if !named && (it.Code == compress.CodeNotCold || it.Code == compress.CodeCompressed) {
				continue // the store's other sessions: counted, not listed
			}
		case compress.StatusRefused:
			sum.Refused++
			switch {
			case it.Code == compress.CodeInterrupted:
				worse(exitSignal)
			case it.Code == compress.CodeUnsupported:
				if named {
					worse(exitFindings)
				}
			case errors.Is(it.Err(), safety.ErrLive), errors.Is(it.Err(), safety.ErrLocked), errors.Is(it.Err(), safety.ErrChanged):
				worse(exitRefused)
				if firstErr == nil {
					firstErr = it.Err()
				}
			default:
				worse(exitError)
			}
		case compress.StatusFailed:
			sum.Failed++
			worse(exitError)
		}
		rep.Sessions = append(rep.Sessions, it)
	}
	if len(rep.Errors) > 0 {
		worse(exitError)
	}
	if ctx.Err() != nil {
		worse(exitSignal)
	}

	if opt.json {
		if err := writeJSON(env.stdout, rep); err != nil {
			return err
		}
	} else {
		renderCompress(env, rep, named)
	}
	switch code {
	case exitOK:
		return nil
	case exitSignal:
		return errInterrupted
	case exitRefused:
		return &cliError{code: code, err: errSilent, hint: hintFor(firstErr)}
	default:
		return &cliError{code: code, err: errSilent}
	}
}

func renderCompress(env *appEnv, rep compressReport, named bool) {
	w := env.stdout
	// the sessions of agents whose client cannot read a compressed file:
	// one line each when named, else one line per agent
	unsupported := map[session.Agent][]*compress.Item{}
	for _, it := range rep.Sessions {
		switch it.Status {
		case compress.StatusCompressed:
			fmt.Fprintf(w, "compressed %s (%s → %s)\n", line(it.Path), humanBytes(it.Size), humanBytes(it.CompressedSize))
		case compress.StatusWouldCompress:
			fmt.Fprintf(w, "would compress %s (%s)\n", line(it.Path), humanBytes(it.Size))
		case compress.StatusSkipped:
			fmt.Fprintf(w, "skipped %s: %s\n", line(it.Path), line(it.Reason))
		case compress.StatusRefused:
			if it.Code == compress.CodeUnsupported && !named {
				unsupported[it.Agent] = append(unsupported[it.Agent], it)
				continue
			}
			fmt.Fprintf(w, "refused %s: %s\n", line(it.Path), line(it.Reason))
		case compress.StatusFailed:
			fmt.Fprintf(env.stderr, "sessctl: error: %s: %s\n", line(it.Path), line(it.Reason))
		}
	}
	agents := make([]session.Agent, 0, len(unsupported))
	for a := range unsupported {
		agents = append(agents, a)
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i] < agents[j] })
	for _, a := range agents {
		its := unsupported[a]
		fmt.Fprintf(w, "refused %s: %s\n", plural(len(its), string(a)+" session"), line(its[0].Reason))
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(env.stderr, "sessctl: error: %s\n", line(e))
	}
	s := rep.Summary
	var head string
	if rep.DryRun {
		head = fmt.Sprintf("would compress %s (%s)", plural(s.WouldCompress, "session"), humanBytes(s.Bytes))
	} else {
		head = fmt.Sprintf("compressed %s (%s → %s)", plural(s.Compressed, "session"), humanBytes(s.Bytes), humanBytes(s.CompressedBytes))
	}
	head += fmt.Sprintf("; %d refused, %d failed, %d skipped, %d not older than %s", s.Refused, s.Failed, s.Skipped, s.NotCold, rep.OlderThan)
	fmt.Fprintln(w, head)
	if rep.DryRun && s.WouldCompress > 0 {
		fmt.Fprintln(w, "dry run: nothing was changed; run again without --dry-run to compress the above")
	}
}

// shortAge shows a --older-than duration the way it is given (7d, 12h).
func shortAge(t time.Duration) string {
	switch {
	case t == 0:
		return "0s"
	case t%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", t/(24*time.Hour))
	case t%time.Hour == 0:
		return fmt.Sprintf("%dh", t/time.Hour)
	}
	return t.String()
}
