package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type checkpointsOptions struct {
	session string
	json    bool
	color   bool
}

func checkpointsCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "checkpoints",
		Usage:     "list the points a session can be reverted to (Kimi checkpoints, user turns elsewhere)",
		ArgsUsage: "SESSION",
		Description: "SESSION is a session file, a Kimi session directory, or a session id (prefix).\n" +
			"Kimi: every _checkpoint record of the current context.jsonl. Claude Code, Codex,\n" +
			"clawdcode: every real user prompt, numbered from 0. Rotated files are listed by\n" +
			"`sessctl rotations`. Use a number with `sessctl revert --checkpoint N`.",
		Flags: []cli.Flag{rootFlag(), jsonFlag(), noColorFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("checkpoints needs exactly one SESSION").withHint("sessctl ls lists the sessions")
			}
			s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
			if err != nil {
				return err
			}
			return runCheckpoints(c.Context, env, namedFile(s, c.Args().First()), checkpointsOptions{session: c.Args().First(), json: c.Bool("json"),
				color: useColor(env.stdout, env, c.Bool("no-color"))})
		},
	}
}

// checkpointsOutput is checkpoints --json.
type checkpointsOutput struct {
	Session string             `json:"session"`
	Agent   session.Agent      `json:"agent"`
	Kind    string             `json:"kind"` // "checkpoint" (Kimi) or "turn"
	Records int                `json:"records"`
	Points  []checkpoint.Point `json:"points"`
}

func runCheckpoints(ctx context.Context, env *appEnv, s *session.Session, opt checkpointsOptions) error {
	// the garbage collector keeps the heap near what the longest line needs
	defer boundMemory([]*session.Session{s})()
	if s.Agent == session.Unknown { // an empty file: nothing yet
		if opt.json {
			return writeJSON(env.stdout, checkpointsOutput{Session: s.Main, Agent: s.Agent, Kind: "turn", Points: []checkpoint.Point{}})
		}
		notYet(env, s)
		return nil
	}
	l, err := checkpoint.List(ctx, s.Main, s.Agent)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Main, err)
	}
	out := checkpointsOutput{Session: s.Main, Agent: s.Agent, Kind: l.Unit, Records: l.Records, Points: l.Points}
	if out.Points == nil {
		out.Points = []checkpoint.Point{}
	}
	if opt.json {
		return writeJSON(env.stdout, out)
	}
	col := colorer{on: opt.color}
	if len(l.Points) == 0 {
		fmt.Fprintf(env.stdout, "%s: no %ss (%s)\n", line(s.Main), out.Kind, plural(l.Records, "record"))
		return nil
	}
	tw := trimWriter(env.stdout)
	head := "TURN"
	if out.Kind == "checkpoint" {
		head = "CHECKPOINT"
	}
	t := newTable(tw, head, "LINE", "TOKENS", "FOLLOWING", "PREVIEW")
	for _, p := range l.Points {
		n := strconv.Itoa(p.N)
		if p.RolledBack {
			n = col.dim("(rolled back)")
		}
		tok := "-"
		if p.Tokens >= 0 {
			tok = thousands(p.Tokens)
		}
		t.Append([]string{n, strconv.Itoa(p.Line), tok, thousands(int64(p.Following)), ellipsis(line(p.Preview), 60)})
	}
	t.Render()
	flushTable(tw)
	return nil
}
