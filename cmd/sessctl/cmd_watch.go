package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/watch"
	"github.com/urfave/cli/v2"
)

// minPoll is the shortest --poll interval: shorter only burns a core (1µs
// spun) for nothing a person watching could see.
const minPoll = 50 * time.Millisecond

type watchOptions struct {
	session *session.Session // the session to follow (nil with --latest)
	latest  bool
	roots   []string
	agent   session.Agent
	project string
	tail    int
	poll    time.Duration
	window  int
	json    bool
	color   bool
}

func watchCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "follow a live session: each record as it is appended, and the context filling up",
		ArgsUsage: "[SESSION | --latest]",
		Description: "SESSION is a session file, a Kimi session directory or a session id (prefix). With --latest,\n" +
			"follows the newest session (of --agent, of a --project) and switches when a newer one starts.\n" +
			"Stops with Ctrl-C, or when the session file is deleted (exit 0). See docs/watch.md.",
		Flags: []cli.Flag{
			rootFlag(), agentFlag(),
			&cli.BoolFlag{Name: "latest", Usage: "follow the newest session, and the next one when a newer one starts"},
			&cli.StringFlag{Name: "project", Usage: "with --latest: only sessions whose project contains `TEXT`"},
			&cli.IntFlag{Name: "tail", Aliases: []string{"n"}, Value: 10, Usage: "first print the last `N` records already in the file"},
			&cli.DurationFlag{Name: "poll", Usage: "poll every `DURATION` (e.g. 1s) instead of using file notifications (network filesystems)"},
			&cli.IntFlag{Name: "window", Usage: "context window in `TOKENS` (default: the model's, or what the file records)"},
			jsonFlag(), noColorFlag(),
		},
		Action: func(c *cli.Context) error {
			opt := watchOptions{latest: c.Bool("latest"), roots: c.StringSlice("root"), project: c.String("project"),
				tail: c.Int("tail"), poll: c.Duration("poll"), window: c.Int("window"), json: c.Bool("json"),
				color: useColor(env.stdout, env, c.Bool("no-color"))}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			if opt.tail < 0 || opt.window < 0 {
				return usageErrorf("--tail and --window must not be negative")
			}
			if c.IsSet("poll") && opt.poll < minPoll {
				return usageErrorf("--poll must be at least %s (got %s)", minPoll, opt.poll)
			}
			switch {
			case opt.latest && c.NArg() > 0:
				return usageErrorf("give SESSION or --latest, not both")
			case !opt.latest && c.NArg() == 0:
				return usageErrorf("watch needs a SESSION or --latest").withHint("sessctl watch --latest --agent claude")
			case c.NArg() > 1:
				return usageErrorf("watch follows one session (got %d arguments)", c.NArg())
			case !opt.latest:
				s, err := resolveSession(env, c.StringSlice("root"), c.Args().First())
				if err != nil {
					return err
				}
				opt.session = namedFile(s, c.Args().First())
			}
			return runWatch(c.Context, env, opt)
		},
	}
}

// newestSession finds the newest session in scope (for --latest).
func newestSession(env *appEnv, opt watchOptions) (*session.Session, error) {
	res := discoverScope(env, opt.roots, nil)
	for _, s := range res.Sessions { // newest first
		if opt.agent != "" && s.Agent != opt.agent {
			continue
		}
		if opt.project != "" && !strings.Contains(s.Project, opt.project) {
			continue
		}
		if jsonl.IsCompressedName(s.Main) {
			continue // a compressed rollout is cold: nothing appends to it
		}
		return s, nil
	}
	if err := firstError(res); err != nil {
		return nil, err
	}
	return nil, nil
}

// waitForSession looks for the newest session in scope every poll interval
// (a second by default) until there is one or ctx ends.
func waitForSession(ctx context.Context, env *appEnv, opt watchOptions) (*session.Session, error) {
	every := opt.poll
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, errInterrupted
		case <-t.C:
		}
		s, err := newestSession(env, opt)
		if err != nil {
			return nil, err
		}
		if s != nil {
			return s, nil
		}
	}
}

func runWatch(ctx context.Context, env *appEnv, opt watchOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	wo := watch.Options{Tail: opt.tail, Poll: opt.poll, Window: opt.window, Now: env.now}
	if opt.json {
		wo.Out = &watch.JSONPrinter{W: env.stdout}
	} else {
		wo.Out = &watch.TextPrinter{W: env.stdout, Color: opt.color}
	}
	s := opt.session
	if opt.latest {
		var err error
		s, err = newestSession(env, opt)
		if err != nil {
			return err
		}
		if s == nil {
			// nothing yet: wait for the first session to start, as
			// tail -F waits for its file (Ctrl-C stops, exit 130)
			fmt.Fprintf(env.stderr, "sessctl: waiting for a session to start in %s\n", line(searched(env, opt.roots, nil)))
			if s, err = waitForSession(ctx, env, opt); err != nil {
				return err
			}
		}
		wo.Next = func() (string, session.Agent, error) {
			n, err := newestSession(env, opt)
			if err != nil || n == nil {
				return "", "", err
			}
			return n.Main, n.Agent, nil
		}
	}
	wo.Path, wo.Agent = s.Main, s.Agent
	if err := watch.Follow(ctx, wo); err != nil {
		if errors.Is(err, watch.ErrNotFile) {
			return fmt.Errorf("watch %w", err)
		}
		return err
	}
	return nil
}
