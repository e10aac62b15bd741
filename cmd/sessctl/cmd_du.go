package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sessctl/sessctl/pkg/du"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

type duOptions struct {
	roots     []string
	agent     session.Agent
	by        string
	olderThan string
	json      bool
	color     bool
	index     bool // read the transcripts' first record ids through the index (docs/index.md)
}

func duCommand(env *appEnv) *cli.Command {
	return &cli.Command{
		Name:  "du",
		Usage: "disk use of the session stores, by agent, project or session, and what is reclaimable",
		Description: "Every regular file under the stores is counted once (symbolic links are not followed): the\n" +
			"total is the sum of the file sizes. Reclaimable: sessions cleanup would expire (--older-than,\n" +
			"default 30d; Claude Code's cleanupPeriodDays), rotations of the sessions that stay, files\n" +
			"interrupted rewrites left behind, and transcript lines a larger fork of the same conversation\n" +
			"repeats. du changes nothing. See docs/du.md.",
		Flags: []cli.Flag{
			rootFlag(), agentFlag(),
			&cli.StringFlag{Name: "by", Value: "agent", Usage: "group by `KEY`: agent, project or session"},
			&cli.StringFlag{Name: "older-than", Value: "30d", Usage: "count sessions whose newest file is older than `AGE` as expired (as cleanup does)"},
			jsonFlag(), noColorFlag(), noIndexFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("du takes no arguments (got %q)", c.Args().First()).withHint("use --root DIR to measure another store")
			}
			opt := duOptions{roots: c.StringSlice("root"), by: c.String("by"), json: c.Bool("json"),
				color: useColor(env.stdout, env, c.Bool("no-color")), index: indexWanted(env, c)}
			if c.IsSet("older-than") {
				opt.olderThan = c.String("older-than")
			}
			switch opt.by {
			case "agent", "project", "session":
			default:
				return usageErrorf("--by %q: use agent, project or session", opt.by)
			}
			var err error
			if opt.agent, err = agentOpt(c); err != nil {
				return err
			}
			return runDu(c.Context, env, opt)
		},
	}
}

// duRow is one group of du's table.
type duRow struct {
	Key      string `json:"key"`
	Agents   []string
	Sessions int `json:"sessions"`
	Files    int
	Bytes    int64
	Main     int64
	Rot      int64
	Side     int64
	Reclaim  int64
}

func runDu(ctx context.Context, env *appEnv, opt duOptions) error {
	po := du.Options{Agent: opt.agent, Now: env.now()}
	if opt.olderThan != "" {
		d, err := parseAge(opt.olderThan)
		if err != nil {
			return usageErrorf("--older-than: %v", err)
		}
		po.OlderThan, po.OlderThanSet = d, true
	}
	po.Roots, po.MissingOK = scopeRoots(env, opt.roots)
	type measured struct {
		rep *du.Report
		err error
	}
	ix := openIndex(env, opt.index)
	defer closeIndex(ix)
	if ix != nil {
		// du removes nothing: it may take discovery's snapshot, as ls does
		po.Discover = func(rs []session.Root, missingOK bool) *session.Result {
			return session.DiscoverCached(rs, missingOK, ix)
		}
	}
	m, err := interruptible(ctx, func() measured {
		rep, err := du.MeasureWith(ctx, po, ix.HeadOf)
		return measured{rep, err}
	})
	if err != nil {
		return err
	}
	if m.err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return m.err
	}
	rep := m.rep
	if opt.json {
		// the sessions element by element (writeJSONStream): over 100,000
		// sessions the whole text took 200 MB more
		head := *rep
		head.Sessions = []*du.Session{}
		return writeJSONStream(env.stdout, head, jsonArray{"sessions", len(rep.Sessions), func(i int) (any, error) { return rep.Sessions[i], nil }})
	}
	for _, w := range rep.Warnings {
		warn(env.stderr, "%s", w)
	}
	col := colorer{opt.color}
	// a project is its real working directory, as ls and stats show it
	var cwds map[*session.Session]string
	if opt.by == "project" {
		ss := make([]*session.Session, len(rep.Sessions))
		for i, s := range rep.Sessions {
			ss[i] = s.Session
		}
		cwds = headCWDs(ss, true, ix)
	}
	rows := map[string]*duRow{}
	for _, s := range rep.Sessions {
		k := string(s.Agent)
		switch opt.by {
		case "project":
			k = cwds[s.Session]
			if k == "" {
				k = s.Project
			}
			if k == "" {
				k = "(none)"
			}
		case "session":
			k = string(s.Agent) + ":" + s.ID
		}
		r := rows[k]
		if r == nil {
			r = &duRow{Key: k}
			rows[k] = r
		}
		if !slices.Contains(r.Agents, string(s.Agent)) {
			r.Agents = append(r.Agents, string(s.Agent))
		}
		r.Sessions++
		r.Files += s.Total.Files
		r.Bytes += s.Total.Bytes
		r.Main += s.MainFile.Bytes
		r.Rot += s.Rotations.Bytes
		r.Side += s.Side.Bytes
		if s.Expired {
			r.Reclaim += s.Total.Bytes
		} else {
			r.Reclaim += s.Rotations.Bytes + s.ForkCopy
		}
	}
	list := make([]*duRow, 0, len(rows))
	for _, r := range rows {
		sort.Strings(r.Agents)
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Bytes != list[j].Bytes {
			return list[i].Bytes > list[j].Bytes
		}
		return list[i].Key < list[j].Key
	})
	short := func(s string) string { return s }
	if opt.by == "session" {
		ids := make([]string, len(rep.Sessions))
		for i, s := range rep.Sessions {
			ids[i] = s.ID
		}
		short = shortIDs(ids)
	}
	head := []string{strings.ToUpper(opt.by), "AGENT", "SESSIONS", "FILES", "SIZE", "MAIN", "ROTATIONS", "SIDE", "RECLAIMABLE"}
	if opt.by == "agent" {
		head = append(head[:1], head[2:]...)
	}
	cells := func(key, agents string, sessions, files int, size, main, rot, side, reclaim int64) []string {
		row := []string{key, agents, thousands(int64(sessions)), thousands(int64(files)), col.bold(humanBytes(size)),
			humanBytes(main), humanBytes(rot), humanBytes(side), humanBytes(reclaim)}
		if opt.by == "agent" {
			row = append(row[:1], row[2:]...)
		}
		return row
	}
	var sum duRow
	for _, r := range list {
		sum.Sessions += r.Sessions
		sum.Files += r.Files
		sum.Bytes += r.Bytes
		sum.Main += r.Main
		sum.Rot += r.Rot
		sum.Side += r.Side
		sum.Reclaim += r.Reclaim
	}
	extra := [][]string{
		cells("other files", "", 0, rep.Other.Files, rep.Other.Bytes, 0, 0, 0, rep.Reclaimable.Leftovers.Bytes),
		cells("TOTAL", "", sum.Sessions, rep.Total.Files, rep.Total.Bytes, sum.Main, sum.Rot, sum.Side, rep.Reclaimable.Bytes),
	}
	// no sessions in "other files"
	if opt.by == "agent" {
		extra[0][1] = ""
	} else {
		extra[0][2] = ""
	}
	fmt.Fprintf(env.stdout, "Disk use by %s (every regular file under the stores, each once)\n\n", opt.by)
	drawRows(env.stdout, head, len(list)+2, func(k int, ws []int) []string {
		var row []string
		if k < len(list) {
			r := list[k]
			key := r.Key
			if opt.by == "session" {
				if _, id, ok := strings.Cut(key, ":"); ok {
					key = short(id)
				}
			}
			if opt.by == "project" {
				key = shortenHome(line(key))
			}
			row = cells(ellipsis(line(key), 40), strings.Join(r.Agents, ","), r.Sessions, r.Files, r.Bytes, r.Main, r.Rot, r.Side, r.Reclaim)
		} else {
			row = extra[k-len(list)]
		}
		for i, c := range row {
			ws[i] = cellWidth(c)
		}
		return row
	})
	rc := rep.Reclaimable
	fmt.Fprintf(env.stdout, "\nReclaimable: %s\n", col.bold(humanBytes(rc.Bytes)))
	fmt.Fprintf(env.stdout, "  expired sessions  %s in %s (older than %s): sessctl cleanup --apply\n",
		humanBytes(rc.Expired.Bytes), plural(rc.Sessions, "session"), line(rc.OlderThan))
	fmt.Fprintf(env.stdout, "  rotations         %s in %s of sessions that stay: sessctl prune-rotations --keep N, or cleanup --rotations\n",
		humanBytes(rc.Rotations.Bytes), plural(rc.Rotations.Files, "file"))
	fmt.Fprintf(env.stdout, "  crash leftovers   %s in %s of interrupted rewrites: sessctl cleanup --apply\n",
		humanBytes(rc.Leftovers.Bytes), plural(rc.Leftovers.Files, "file"))
	fmt.Fprintf(env.stdout, "  fork copies       %s in %s: lines a larger transcript of the same conversation repeats (du --json names it)\n",
		humanBytes(rc.ForkCopies.Bytes), plural(rc.ForkCopies.Files, "transcript"))
	return nil
}
