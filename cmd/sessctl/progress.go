package main

import (
	"context"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progressDelay is how long work runs before a progress display appears:
// what ends sooner never draws one (tests set it to 0).
var progressDelay = time.Second

func noProgressFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-progress", Usage: "never draw a progress bar on stderr"}
}

// progressWanted decides whether a command draws progress on stderr: only
// when stderr is a terminal (never into a file or a pipe, never under
// TERM=dumb), not with --no-progress, and not when --json goes to a pipe or
// a file (a script is reading; its stderr may still be a terminal). NO_COLOR
// has no say: the display has no colour.
func progressWanted(env *appEnv, c *cli.Context) bool {
	return wantProgress(env, c.Bool("no-progress"), c.Bool("json"))
}

func wantProgress(env *appEnv, noProgress, json bool) bool {
	if noProgress || env.getenv("TERM") == "dumb" || !isTerminal(env.stderr) {
		return false
	}
	return !json || isTerminal(env.stdout)
}

// progress is a progress bar (or, when the amount of work is not known in
// advance, a spinner with the time spent) drawn on stderr by mpb. A nil
// *progress does nothing, so callers need not check whether it is on.
type progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	delay *time.Timer
	once  sync.Once
}

// progressUnit says what a bar counts.
type progressUnit int

const (
	unitBytes progressUnit = iota // sizes: "84.0 MiB / 200.0 MiB"
	unitItems                     // counts: "42 / 300"
	unitNone                      // a spinner: the amount of work is not known
)

// newProgress starts a display labelled label (a verb: "checking") for
// total units of work; nothing is drawn before progressDelay.
func newProgress(ctx context.Context, env *appEnv, on bool, label string, total int64, unit progressUnit) *progress {
	if !on {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	start := make(chan any)
	pr := &progress{}
	pr.delay = time.AfterFunc(progressDelay, func() { close(start) })
	pr.p = mpb.NewWithContext(ctx, mpb.WithOutput(env.stderr), mpb.WithWidth(60),
		mpb.WithRenderDelay(start), mpb.WithRefreshRate(120*time.Millisecond))
	name := decor.Name(label + " ")
	percent := decor.NewPercentage("%d", decor.WC{W: 5})
	switch unit {
	case unitNone:
		pr.bar = pr.p.New(0, mpb.SpinnerStyle(), mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(name), mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	case unitItems:
		pr.bar = pr.p.New(total, mpb.BarStyle(), mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(name, percent),
			mpb.AppendDecorators(decor.CountersNoUnit("%d / %d")))
	default:
		pr.bar = pr.p.New(total, mpb.BarStyle(), mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(name, percent),
			mpb.AppendDecorators(decor.Counters(decor.SizeB1024(0), "% .1f / % .1f")))
	}
	return pr
}

// set reports done of total (total may grow as work is found); safe from
// several goroutines. Its signature is stats.Progress.
func (pr *progress) set(done, total int64) {
	if pr == nil {
		return
	}
	if total > 0 {
		pr.bar.SetTotal(total, false)
	}
	pr.bar.SetCurrent(done)
}

// add reports n more units done; safe from several goroutines.
func (pr *progress) add(n int64) {
	if pr != nil {
		pr.bar.IncrInt64(n)
	}
}

// done removes the display and waits until it is gone from the terminal, so
// that what the command prints next starts on a clean line. It may be
// called more than once.
func (pr *progress) done() {
	if pr == nil {
		return
	}
	pr.once.Do(func() {
		pr.delay.Stop()
		pr.bar.Abort(true) // drop it, finished or not
		pr.p.Wait()
	})
}
