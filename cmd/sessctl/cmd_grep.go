package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/search"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type grepOptions struct {
	search.Options
	roots   []string
	paths   []string
	agent   session.Agent
	project string
	since   time.Time
	json    bool
	color   bool
	index   bool // keep and use the files' live maps in the index (docs/index.md)
}

func grepCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "grep",
		Usage:     "search what every agent's sessions say",
		ArgsUsage: "PATTERN [PATH...]",
		Description: "Searches the live history of each session (what its client sends on resume:\n" +
			"prompts, replies, tool calls and results, compaction summaries); --all also what\n" +
			"it no longer sends (rolled back, compacted away, off the chain, only in a rotation),\n" +
			"marked. Each hit gives the agent, the full session id, the turn (numbered as\n" +
			"`sessctl checkpoints` numbers it), the role, a snippet, and the command that resumes\n" +
			"the session in its own client. PATTERN is literal text unless --regexp.\n" +
			"Exit status: 0 hits found, 1 none, 2 usage or I/O error.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "ignore-case", Aliases: []string{"i"}, Usage: "match upper and lower case alike"},
			&cli.BoolFlag{Name: "regexp", Aliases: []string{"E"}, Usage: "PATTERN is a regular expression (Go RE2 syntax)"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "also search what the client no longer sends, and rotations, marked"},
			&cli.StringFlag{Name: "project", Usage: "only sessions whose project or working directory contains `TEXT`"},
			&cli.StringFlag{Name: "since", Usage: "only sessions updated since `AGE|DATE` (7d, 12h, 2026-11-01)"},
			&cli.IntFlag{Name: "context", Value: search.SnippetContext, Usage: "show `N` characters of text on each side of a match"},
			agentFlag(), rootFlag(), jsonFlag(), noColorFlag(), noIndexFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("grep needs a PATTERN").withHint("sessctl grep -i 'login test'")
			}
			if c.Int("context") < 1 {
				return usageErrorf("--context must be at least 1")
			}
			opt := grepOptions{Options: search.Options{Pattern: c.Args().First(), Regexp: c.Bool("regexp"), IgnoreCase: c.Bool("ignore-case"),
				All: c.Bool("all"), Context: c.Int("context")},
				roots: c.StringSlice("root"), paths: c.Args().Tail(), project: c.String("project"), json: c.Bool("json"),
				color: useColor(env.stdout, env, c.Bool("no-color")), index: indexWanted(env, c)}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			if opt.since, err = sinceOpt(env, c); err != nil {
				return err
			}
			return runGrep(c.Context, env, opt)
		},
	}
}

// grepHit is one line of grep --json: a hit, with how to resume its
// session.
type grepHit struct {
	*search.Hit
	Resume *grepResume `json:"resume,omitempty"`
}

type grepResume struct {
	*search.Resume
	// Command is Argv as one shell command line (with a cd when Dir is
	// known).
	Command string `json:"command"`
}

func runGrep(ctx context.Context, env *appEnv, opt grepOptions) error {
	m, err := search.Compile(opt.Options)
	if err != nil {
		return usageErrorf("%v", err)
	}
	ix := openIndex(env, opt.index)
	defer closeIndex(ix)
	if ix != nil {
		m.WithLiveMaps(ix)
	}
	res := discoverIndexed(env, opt.roots, opt.paths, ix)
	if err := discoveryProblems(env, res, len(res.Sessions) == 0 && len(res.Unrecognized) == 0); err != nil {
		return err
	}
	var ss []*session.Session
	for _, s := range keep(res.Sessions, opt.agent, opt.since) {
		if opt.project == "" || strings.Contains(s.Project, opt.project) || strings.Contains(session.HeadCWD(s), opt.project) {
			ss = append(ss, s)
		}
	}
	w := bufio.NewWriterSize(env.stdout, 64<<10)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	col := colorer{on: opt.color}
	hits, sessions := 0, 0
	var firstErr error
	err = m.All(ctx, ss, opt.All, func(r search.Result) error {
		if r.Err != nil {
			if ctx.Err() != nil {
				return errInterrupted
			}
			if firstErr == nil {
				firstErr = inPath(r.Session.Main, r.Err)
			}
			fmt.Fprintf(env.stderr, "sessctl: error: %s\n", line(message(inPath(r.Session.Main, r.Err))))
			return nil
		}
		if len(r.Hits) == 0 {
			return nil
		}
		sessions++
		hits += len(r.Hits) + r.More
		resume := resumeOf(r.Session)
		if opt.json {
			for i := range r.Hits {
				if err := enc.Encode(grepHit{Hit: &r.Hits[i], Resume: resume}); err != nil {
					return err
				}
			}
			return nil
		}
		renderGrep(w, col, r, resume)
		return w.Flush()
	})
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	if firstErr != nil {
		return &cliError{code: exitError, err: errSilent, hint: hintFor(firstErr)}
	}
	if hits == 0 {
		return silentFindings // grep's convention: 1 when nothing matched
	}
	return nil
}

func resumeOf(s *session.Session) *grepResume {
	r := search.ResumeOf(s)
	if r == nil {
		return nil
	}
	q := make([]string, len(r.Argv))
	for i, a := range r.Argv {
		q[i] = shellQuote(a)
	}
	cmd := strings.Join(q, " ")
	if r.Dir != "" {
		cmd = "cd " + shellQuote(r.Dir) + " && " + cmd
	}
	return &grepResume{Resume: r, Command: cmd}
}

// renderGrep prints one session's hits: a header with the agent, the
// session id and how to resume it, then one line per hit. Session text is
// shown safely (control characters visible); the match is highlighted on
// a terminal.
func renderGrep(w *bufio.Writer, col colorer, r search.Result, resume *grepResume) {
	s := r.Session
	fmt.Fprintf(w, "%s %s\n", col.bold(string(s.Agent)), col.bold(line(s.ID)))
	if resume != nil {
		fmt.Fprintf(w, "  resume: %s\n", line(resume.Command))
	}
	for _, h := range r.Hits {
		what := h.Type
		if h.Name != "" {
			what += " " + h.Name
		}
		mark := ""
		if h.State != session.Live {
			mark = " " + col.yellow("["+h.State.String()+"]")
		}
		before, after := "", ""
		if h.Before {
			before = "…"
		}
		if h.After {
			after = "…"
		}
		snip := before + line(h.Snippet[:h.MatchStart]) + col.red(col.bold(line(h.Snippet[h.MatchStart:h.MatchEnd]))) +
			line(h.Snippet[h.MatchEnd:]) + after
		fmt.Fprintf(w, "  turn %-3d %-9s %s%s: %s\n", h.Turn, h.Role, line(what), mark, snip)
	}
	if r.More > 0 {
		fmt.Fprintf(w, "  … and %s more in this session\n", plural(r.More, "hit"))
	}
}
