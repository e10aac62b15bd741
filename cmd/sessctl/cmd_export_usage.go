package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/internal/resident"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/stats"
	"github.com/sessctl/sessctl/pkg/termtext"
	"github.com/sessctl/sessctl/pkg/usageexport"
	"github.com/urfave/cli/v2"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
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
	otlp    string // --otlp URL: push metrics instead of writing a file
	state   string // --state FILE (otlp)
	index   bool   // read through the index (not --no-index)
}

// usageExportFlags are the flags only export --usage takes.
func usageExportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "usage", Usage: "export the recorded usage of many sessions, one row per counted request (--format parquet or ndjson)"},
		agentFlag(),
		&cli.StringFlag{Name: "since", Usage: "--usage: only sessions updated since `AGE|DATE` (7d, 12h, 2026-11-01)"},
		&cli.StringFlag{Name: "machine", Usage: "--usage: the `NAME` of this machine in every row (default: the hostname)"},
		&cli.StringFlag{Name: "prices", Usage: "--usage: price the tokens by the table in `FILE` instead of the embedded one (docs/cost.md)"},
		&cli.StringFlag{Name: "otlp", Usage: "--usage: push the requests not sent before as OpenTelemetry metrics to the OTLP/HTTP `URL` (http://collector:4318)"},
		&cli.StringFlag{Name: "state", Usage: "--otlp: the `FILE` that records the requests sent (default $XDG_STATE_HOME/sessctl/otlp-<url hash>.keys)"},
	}
}

// usageExportAction reads the flags of export --usage.
func usageExportAction(env *appEnv, c *cli.Context) error {
	if c.NArg() != 0 {
		return usageErrorf("export --usage takes no SESSION").withHint("sessctl export --usage --format parquet -o usage.parquet")
	}
	opt := usageExportOptions{roots: c.StringSlice("root"), out: c.String("output"), machine: c.String("machine"),
		otlp: c.String("otlp"), state: c.String("state"), index: indexWanted(env, c)}
	var err error
	if opt.agent, err = agentOpt(c); err != nil {
		return err
	}
	if opt.since, err = sinceOpt(env, c); err != nil {
		return err
	}
	if opt.otlp != "" {
		if c.IsSet("format") || c.IsSet("output") {
			return usageErrorf("--otlp pushes metrics: it takes no --format or -o").withHint("sessctl export --usage --otlp http://localhost:4318")
		}
		u, err := url.Parse(opt.otlp)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErrorf("--otlp %q is not an http:// or https:// URL", opt.otlp).withHint("sessctl export --usage --otlp http://localhost:4318")
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/metrics" // the OTLP/HTTP path, as OTEL_EXPORTER_OTLP_ENDPOINT adds it
		}
		opt.otlp = u.String()
		if opt.state == "" {
			opt.state = defaultOTLPState(env, opt.otlp)
		}
	} else if c.IsSet("state") {
		return usageErrorf("--state is for --otlp")
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

// countedRequests are the requests stats --all counts for the sessions of
// roots: the same selection, scan and de-duplication, without the
// sessions' totals, with each session's project its real working
// directory where the files say it. With index, discovery, the working
// directories and each file's requests come through the index as stats'
// do (the same entries: a run of either serves the other), and it is
// closed once the files are read.
func countedRequests(ctx context.Context, env *appEnv, roots []string, agent session.Agent, since time.Time, index bool) (*stats.Requests, error) {
	// the executable's pages each phase touched, as stats gives them back
	// (internal/resident)
	resident.ShedExecutable()
	ix := openIndex(env, index)
	ss, err := usageSessions(env, roots, nil, agent, since, ix)
	if err != nil {
		closeIndex(ix)
		return nil, err
	}
	// boundMemory's limit (512 bytes a session), and through the index
	// 768 with room for its writes once it fills (readRoomy): export holds
	// discovery's sessions to its end, and with the index's pending
	// entries a first run over 100,000 sessions collected without a pause
	// at 512 (33–44 s against 19 without the index; 23 s at 768, peaking at
	// 140 MB against 128)
	perSession := int64(512)
	if ix != nil {
		perSession = 768
	}
	grow, restore := boundGrowing(session.Slice(ss), perSession)
	defer restore()
	cwds := projectPaths(ss, ix)
	// its room after limitMisses misses, however many sessions: waiting for
	// a quarter of them (as stats does over many) took a first export over
	// 100,000 sessions from 125.7 to 138.6 MiB (paired)
	rq, err := stats.CountedRequests(ctx, ss, nil, readRoomy(ix, grow, limitMisses))
	closeIndex(ix)
	resident.ShedExecutable() // the scan's
	if err != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, err
	}
	for i, s := range ss {
		if cwd := cwds[s]; cwd != "" {
			rq.Sessions[i].CWD = cwd
		}
	}
	// a file that could not be read is not in the rows: say so, as stats
	// does in its notes
	for _, e := range rq.Errors {
		warn(env.stderr, "%s (its requests are not exported)", e)
	}
	if n := rq.Unread - len(rq.Errors); n > 0 {
		warn(env.stderr, "%d more files could not be read", n)
	}
	return rq, nil
}

// defaultOTLPState is the state file of pushes to endpoint: one for each
// endpoint, so that two collectors each get every request.
func defaultOTLPState(env *appEnv, endpoint string) string {
	dir := env.getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		dir = filepath.Join(env.home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(endpoint))
	return filepath.Join(dir, "sessctl", "otlp-"+hex.EncodeToString(sum[:6])+".keys")
}

func runUsageExport(ctx context.Context, env *appEnv, opt usageExportOptions) error {
	// for the scan and for the rows after it (stats.EachRequest sorts)
	defer usageBudget(env)()
	if opt.otlp != "" {
		// a bad state file stops the run before the scan
		if _, err := usageexport.LoadState(opt.state); err != nil {
			return err
		}
	}
	// the output is opened before the scan, so that a path that cannot be
	// written fails at once, not after minutes of reading
	var out *jsonl.AtomicFile
	var dev *os.File // a device or a pipe, written as it is
	if opt.otlp == "" && opt.out != "" && opt.out != "-" {
		var err error
		if out, dev, err = openUsageOut(opt.out); err != nil {
			return err
		}
		defer func() {
			if out != nil {
				out.Abort() // not committed: an error stopped the run
			}
			if dev != nil {
				dev.Close()
			}
		}()
	}
	rq, err := countedRequests(ctx, env, opt.roots, opt.agent, opt.since, opt.index)
	if err != nil {
		return err
	}
	defer rq.Close()
	if opt.otlp != "" {
		return runUsagePush(ctx, env, rq, opt)
	}
	write := func(w func(*usageexport.Row) error) error {
		return usageexport.Each(rq, opt.machine, w)
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
	if dev != nil {
		uw, err := usageexport.NewWriter(dev, opt.format)
		if err == nil {
			err = write(uw.Write)
		}
		if err == nil {
			err = uw.Close()
		}
		return err
	}
	f := out
	f.Binary() // NDJSON ends with its newline; Parquet must end with its magic
	uw, err := usageexport.NewWriter(f, opt.format)
	if err == nil {
		err = write(uw.Write)
	}
	if err == nil {
		err = uw.Close()
	}
	if err != nil {
		return err // the deferred Abort removes the temporary file
	}
	out = nil
	return f.Commit(nil)
}

// openUsageOut opens export's -o PATH: a regular file (new or not) is
// written atomically (a temporary file renamed over it at the end); a
// character device or a named pipe that exists (/dev/null, a FIFO) is
// written as it is; anything else is refused with its reason.
func openUsageOut(path string) (*jsonl.AtomicFile, *os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		switch t := fi.Mode().Type(); {
		case t&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			return nil, f, err
		case t&fs.ModeDir != 0:
			return nil, nil, fmt.Errorf("-o %s: is a directory: give the name of the file to write", path)
		case t&fs.ModeSymlink != 0:
			return nil, nil, fmt.Errorf("-o %s: is a symbolic link: export does not write through one; give the file it points to", path)
		default:
			return nil, nil, fmt.Errorf("-o %s: not a regular file, a device or a pipe", path)
		}
	}
	f, err := jsonl.CreateAtomic(path, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("-o %s: %w", path, err)
	}
	return f, nil, nil
}

// runUsagePush is export --usage --otlp: the requests the state file does
// not hold, pushed through the OpenTelemetry SDK's OTLP/HTTP exporter
// (OTEL_EXPORTER_OTLP_HEADERS and the other OTEL_EXPORTER_OTLP_* settings
// apply), the state saved as batches are accepted.
func runUsagePush(ctx context.Context, env *appEnv, rq *stats.Requests, opt usageExportOptions) error {
	st, err := usageexport.LoadState(opt.state)
	if err != nil {
		return err
	}
	exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(opt.otlp))
	if err != nil {
		return fmt.Errorf("otlp exporter: %w", err)
	}
	defer exp.Shutdown(context.WithoutCancel(ctx))
	res, err := usageexport.Push(ctx, rq, usageexport.OTLPOptions{Exporter: exp, State: st, Machine: opt.machine, Now: env.now})
	fmt.Fprintf(env.stdout, "sent %d requests in %d batches to %s; %d sent before (state %s)\n",
		res.Sent, res.Batches, termtext.Line(opt.otlp), res.AlreadySent, termtext.Line(opt.state))
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}
