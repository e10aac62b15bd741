package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/stats"
	"github.com/sessctl/sessctl/pkg/usageexport"
	"github.com/urfave/cli/v2"
)

// usageExportOptions is export --usage: the recorded usage of many
// sessions as rows (docs/export.md).
type usageExportOptions struct {
	roots   []string
	agent   session.Agent
	since   time.Time
	format  string // parquet or ndjson
	out     string // "" or "-": stdout
	machine string
}

// usageExportFlags are the flags only export --usage takes.
func usageExportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "usage", Usage: "export the recorded usage of many sessions, one row per counted request (--format parquet or ndjson)"},
		agentFlag(),
		&cli.StringFlag{Name: "since", Usage: "--usage: only sessions updated since `AGE|DATE` (7d, 12h, 2026-11-01)"},
		&cli.StringFlag{Name: "machine", Usage: "--usage: the `NAME` of this machine in every row (default: the hostname)"},
		&cli.StringFlag{Name: "prices", Usage: "--usage: price the tokens by the table in `FILE` instead of the embedded one (docs/cost.md)"},
	}
}

// usageExportAction reads the flags of export --usage.
func usageExportAction(env *appEnv, c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErrorf("export --usage takes no SESSION").withHint("sessctl export --usage --format parquet -o usage.parquet")
	}
	opt := usageExportOptions{roots: c.StringSlice("root"), out: c.String("output"), machine: c.String("machine")}
	var err error
	if opt.agent, err = agentOpt(c); err != nil {
		return err
	}
	if opt.since, err = sinceOpt(env, c); err != nil {
		return err
	}
	opt.format = c.String("format")
	if !c.IsSet("format") {
		// the transcript's default (md) means nothing here: the file's
		// name says, else NDJSON
		opt.format = usageexport.NDJSON
		if strings.EqualFold(filepath.Ext(opt.out), ".parquet") {
			opt.format = usageexport.Parquet
		}
	}
	switch opt.format {
	case usageexport.NDJSON, usageexport.Parquet:
	default:
		return usageErrorf("unknown usage format %q", opt.format).withHint("export --usage writes parquet or ndjson")
	}
	if opt.format == usageexport.Parquet && (opt.out == "" || opt.out == "-") && isTerminal(env.stdout) {
		return usageErrorf("will not write Parquet to a terminal").withHint("sessctl export --usage --format parquet -o usage.parquet")
	}
	if opt.machine == "" {
		if opt.machine, err = os.Hostname(); err != nil {
			return usageErrorf("no hostname (%v)", err).withHint("name the machine with --machine NAME")
		}
	}
	if f := c.String("prices"); f != "" {
		if err := loadPrices(f); err != nil {
			return err
		}
	}
	return runUsageExport(c.Context, env, opt)
}

// countedUsage is what stats --all counts for the sessions of roots: the
// same selection, scan and de-duplication, with each session's project its
// real working directory where the files say it.
func countedUsage(ctx context.Context, env *appEnv, roots []string, agent session.Agent, since time.Time) ([]*stats.SessionUsage, error) {
	ss, err := usageSessions(env, roots, nil, agent, since)
	if err != nil {
		return nil, err
	}
	defer boundMemory(ss)()
	cwds := projectPaths(ss)
	sus, err := stats.Consumption(ctx, ss, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, err
	}
	for _, su := range sus {
		if cwd := cwds[su.Session]; cwd != "" {
			su.CWD = cwd
		}
	}
	return sus, nil
}

func runUsageExport(ctx context.Context, env *appEnv, opt usageExportOptions) error {
	sus, err := countedUsage(ctx, env, opt.roots, opt.agent, opt.since)
	if err != nil {
		return err
	}
	write := func(w func(*usageexport.Row) error) error {
		return usageexport.Each(sus, opt.machine, w)
	}
	if opt.out == "" || opt.out == "-" {
		uw, err := usageexport.NewWriter(env.stdout, opt.format)
		if err != nil {
			return err
		}
		if err := write(uw.Write); err != nil {
			return err
		}
		return uw.Close()
	}
	f, err := jsonl.CreateAtomic(opt.out, 0o644)
	if err != nil {
		return err
	}
	f.Binary() // NDJSON ends with its newline; Parquet must end with its magic
	uw, err := usageexport.NewWriter(f, opt.format)
	if err == nil {
		err = write(uw.Write)
	}
	if err == nil {
		err = uw.Close()
	}
	if err != nil {
		f.Abort()
		return err
	}
	return f.Commit(nil)
}
