package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/stats"
	"github.com/sessctl/sessctl/pkg/tokens"
	"github.com/urfave/cli/v2"
)

type statsOptions struct {
	roots    []string
	args     []string
	all      bool
	agent    session.Agent
	project  string
	since    time.Time
	by       string
	json     bool
	color    bool
	window   int
	top      int
	loc      *time.Location
	progress bool
	exact    bool
}

func statsCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:      "stats",
		Usage:     "token statistics: context now, tokens consumed, and where the tokens are",
		ArgsUsage: "[SESSION|PATH...]",
		Description: "With one SESSION (a file, a Kimi session directory or an id prefix): how full the\n" +
			"context is now, recorded consumption, estimated tokens by role and tool, the largest\n" +
			"records and the growth per turn. With --all, --project, --agent, --since, several\n" +
			"paths or none: recorded consumption of many sessions, grouped with --by.\n" +
			"Recorded numbers come from the API usage in the files; estimates are labelled.",
		Flags: []cli.Flag{
			rootFlag(), agentFlag(),
			&cli.BoolFlag{Name: "all", Usage: "every session found (the default without SESSION)"},
			&cli.StringFlag{Name: "project", Usage: "only sessions whose project or working directory contains `TEXT`"},
			&cli.StringFlag{Name: "since", Usage: "only sessions updated since `AGE|DATE` (7d, 12h, 2026-11-01)"},
			&cli.StringFlag{Name: "by", Value: "session", Usage: "group many sessions by `KEY`: session, project, day, model or agent"},
			&cli.IntFlag{Name: "window", Usage: "context window in `TOKENS` (overrides the model's)"},
			&cli.IntFlag{Name: "top", Value: 10, Usage: "show the `N` largest records"},
			&cli.StringFlag{Name: "tz", Usage: "time zone for --by day (IANA name, e.g. UTC; default local)"},
			&cli.BoolFlag{Name: "heuristic", Usage: "estimate with the bytes/4 heuristic instead of the tokenizer (faster, rougher)"},
			&cli.BoolFlag{Name: "no-progress", Usage: "never draw a progress bar on stderr"},
			jsonFlag(), noColorFlag(),
		},
		Action: func(c *cli.Context) error {
			opt := statsOptions{roots: c.StringSlice("root"), args: c.Args().Slice(), all: c.Bool("all"),
				project: c.String("project"), by: c.String("by"), json: c.Bool("json"), window: c.Int("window"),
				top: c.Int("top"), color: useColor(env.stdout, env, c.Bool("no-color")), exact: !c.Bool("heuristic"),
				progress: !c.Bool("no-progress") && isTerminal(env.stderr)}
			if a := c.String("agent"); a != "" {
				ag, ok := session.ParseAgent(a)
				if !ok {
					return usageErrorf("unknown agent %q", a).withHint("agents are kimi, claude, codex and clawdcode")
				}
				opt.agent = ag
			}
			if s := c.String("since"); s != "" {
				t, err := parseSince(s, env.now())
				if err != nil {
					return usageErrorf("%v", err)
				}
				opt.since = t
			}
			switch opt.by {
			case stats.BySession, stats.ByProject, stats.ByDay, stats.ByModel, stats.ByAgent:
			default:
				return usageErrorf("unknown --by %q", opt.by).withHint("use session, project, day, model or agent")
			}
			if opt.window < 0 {
				return usageErrorf("--window must be a positive number of tokens")
			}
			if opt.top < 0 {
				return usageErrorf("--top must not be negative")
			}
			opt.loc = time.Local
			if tz := c.String("tz"); tz != "" {
				loc, err := time.LoadLocation(tz)
				if err != nil {
					return usageErrorf("unknown time zone %q", tz).withHint("use an IANA name such as UTC or Europe/Berlin")
				}
				opt.loc = loc
			}
			return runStats(env, c, opt)
		},
	}
}

func runStats(env *appEnv, c *cli.Context, opt statsOptions) error {
	filtered := opt.all || opt.agent != "" || opt.project != "" || !opt.since.IsZero()
	if len(opt.args) == 1 && !filtered {
		s, err := resolveSession(env, c, opt.args[0])
		if err != nil {
			return err
		}
		return runStatsOne(env, s, opt)
	}
	res := discoverScope(env, opt.roots, opt.args)
	for _, err := range res.Errors {
		fmt.Fprintf(env.stderr, "sessctl: warning: %v\n", err)
	}
	if len(res.Sessions) == 0 && len(res.Errors) > 0 {
		return res.Errors[0]
	}
	var ss []*session.Session
	for _, s := range res.Sessions {
		if opt.agent != "" && s.Agent != opt.agent {
			continue
		}
		if !opt.since.IsZero() && s.Updated().Before(opt.since) {
			continue
		}
		ss = append(ss, s)
	}
	return runStatsMany(env, ss, opt)
}

// progressBar draws "scanning 42% [####    ] 84 MiB / 200 MiB" on stderr, but
// only once the work has run for a second.
type progressBar struct {
	w       io.Writer
	start   time.Time
	mu      sync.Mutex
	drawn   bool
	lastPct int
}

func newProgress(env *appEnv, on bool) (stats.Progress, func()) {
	if !on {
		return nil, func() {}
	}
	p := &progressBar{w: env.stderr, start: time.Now(), lastPct: -1}
	return p.update, p.finish
}

func (p *progressBar) update(done, total int64) {
	if total <= 0 || time.Since(p.start) < time.Second {
		return
	}
	pct := int(done * 100 / total)
	p.mu.Lock()
	defer p.mu.Unlock()
	if pct == p.lastPct {
		return
	}
	p.lastPct = pct
	p.drawn = true
	fmt.Fprintf(p.w, "\rscanning %3d%% %s %s / %s ", pct, bar(float64(done)/float64(total), 24), humanBytes(done), humanBytes(total))
}

func (p *progressBar) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// bar renders a fraction as [#####     ].
func bar(frac float64, width int) string {
	if frac < 0 {
		frac = 0
	}
	n := int(frac*float64(width) + 0.5)
	if n > width {
		n = width
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(" ", width-n) + "]"
}

// statsManyJSON is stats --json for many sessions.
type statsManyJSON struct {
	By        string                `json:"by"`
	Totals    tokens.Totals         `json:"recorded"`
	AsCCUsage tokens.Totals         `json:"as_ccusage"`
	Groups    []stats.GroupRow      `json:"groups"`
	Sessions  []*stats.SessionUsage `json:"sessions"`
	Rejected  int                   `json:"rejected_lines"`
	Corrupt   int                   `json:"corrupt_lines"`
	// CountedNotByCCUsage counts lines sessctl counts that ccusage drops
	// silently (spaced JSON and the other cases in docs/stats.md).
	CountedNotByCCUsage int `json:"counted_not_by_ccusage"`
}

func runStatsMany(env *appEnv, ss []*session.Session, opt statsOptions) error {
	prog, finish := newProgress(env, opt.progress)
	sus := stats.Consumption(ss, prog)
	finish()
	if opt.project != "" {
		kept := sus[:0]
		for _, su := range sus {
			if strings.Contains(su.Project, opt.project) {
				kept = append(kept, su)
			}
		}
		sus = kept
	}
	groups, err := stats.Group(sus, opt.by, opt.loc)
	if err != nil {
		return usageErrorf("%v", err)
	}
	out := statsManyJSON{By: opt.by, Groups: groups, Sessions: sus}
	for _, su := range sus {
		out.Totals.Merge(su.Totals)
		if su.AsCCUsage != nil {
			out.AsCCUsage.Merge(*su.AsCCUsage)
		}
		out.Rejected += su.Rejected
		out.Corrupt += su.Corrupt
		out.CountedNotByCCUsage += su.SessctlOnly
	}
	if out.Sessions == nil {
		out.Sessions = []*stats.SessionUsage{}
	}
	if opt.json {
		return writeJSON(env.stdout, out)
	}
	if len(sus) == 0 {
		fmt.Fprintln(env.stderr, "sessctl: no sessions found")
		return nil
	}
	renderGroups(env.stdout, out, colorer{opt.color})
	return nil
}

func fmtTok(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func renderGroups(w io.Writer, out statsManyJSON, col colorer) {
	fmt.Fprintf(w, "Recorded usage by %s (tokens the APIs reported; cache read/write counted apart)\n\n", out.By)
	tw := trimWriter(w)
	head := strings.ToUpper(out.By)
	t := newTable(tw, head, "AGENT", "SESSIONS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "TOTAL", "MODELS")
	for _, g := range out.Groups {
		key := g.Key
		if out.By == stats.BySession {
			if _, id, ok := strings.Cut(key, ":"); ok {
				key = session.ShortID(id)
			}
		}
		models := g.Totals.Models()
		if len(models) > 2 {
			models = append(models[:2], fmt.Sprintf("+%d", len(models)-2))
		}
		t.Append([]string{ellipsis(key, 40), strings.Join(g.Agents, ","), strconv.Itoa(g.Sessions),
			fmtTok(g.Totals.Input), fmtTok(g.Totals.Output), fmtTok(g.Totals.CacheRead), fmtTok(g.Totals.CacheCreation),
			col.bold(fmtTok(g.Totals.Total())), strings.Join(models, ",")})
	}
	t.Append([]string{"TOTAL", "", strconv.Itoa(len(out.Sessions)), fmtTok(out.Totals.Input), fmtTok(out.Totals.Output),
		fmtTok(out.Totals.CacheRead), fmtTok(out.Totals.CacheCreation), col.bold(fmtTok(out.Totals.Total())), ""})
	t.Render()
	flushTable(tw)
	if out.Rejected > 0 || out.Corrupt > 0 {
		fmt.Fprintf(w, "\n%s %d usage lines could not be counted, %d corrupt lines (sessctl stats SESSION --json lists them)\n",
			col.yellow("note:"), out.Rejected, out.Corrupt)
	}
	if out.CountedNotByCCUsage > 0 {
		fmt.Fprintf(w, "note: %d usage lines counted here are dropped silently by ccusage (e.g. JSON with spaces after colons); see docs/stats.md\n", out.CountedNotByCCUsage)
	}
}

func runStatsOne(env *appEnv, s *session.Session, opt statsOptions) error {
	return runStatsMany(env, []*session.Session{s}, opt)
}
