package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func rotationsCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "rotations",
		Usage:     "list the rotated copies of a session file (oldest first)",
		ArgsUsage: "SESSION",
		Description: "Kimi: context_N.jsonl beside context.jsonl (written by Kimi itself on compaction,\n" +
			"and by sessctl). Other agents: <file>.N beside the file, written by sessctl before\n" +
			"every rewrite; the names do not end in .jsonl, so no client or ccusage reads them.",
		Flags: []cli.Flag{rootFlag(), jsonFlag(), noColorFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("rotations needs exactly one SESSION")
			}
			s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
			if err != nil {
				return err
			}
			return runRotations(env, s, c.Bool("json"))
		},
	}
}

// rotationsOutput is rotations --json.
type rotationsOutput struct {
	Session   string              `json:"session"`
	Agent     session.Agent       `json:"agent"`
	Size      int64               `json:"size"`
	Rotations []rotation.Rotation `json:"rotations"`
	Next      int                 `json:"next"` // the number the next rotation gets
}

func runRotations(env *appEnv, s *session.Session, asJSON bool) error {
	rs, err := rotation.List(s.Main, s.Agent)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Main, err)
	}
	next, _ := rotation.Next(s.Main, s.Agent)
	out := rotationsOutput{Session: s.Main, Agent: s.Agent, Size: fileSize(s.Main), Rotations: rs, Next: next}
	if out.Rotations == nil {
		out.Rotations = []rotation.Rotation{}
	}
	if asJSON {
		return writeJSON(env.stdout, out)
	}
	if len(rs) == 0 {
		fmt.Fprintf(env.stdout, "%s: no rotations\n", line(s.Main))
		return nil
	}
	tw := trimWriter(env.stdout)
	t := newTable(tw, "N", "SIZE", "MODIFIED", "PATH")
	for _, r := range rs {
		t.Append([]string{strconv.Itoa(r.N), humanBytes(r.Size), time.Unix(r.ModTime, 0).UTC().Format("2006-01-02 15:04:05"), line(r.Path)})
	}
	t.Render()
	flushTable(tw)
	return nil
}
