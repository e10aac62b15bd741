package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"
)

// appEnv is everything a command takes from the outside world, so that tests
// can run commands in-process with fakes.
type appEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	home           string
	now            func() time.Time
	// phase is where the command is (see awaitInterrupted): its line not
	// parsed yet, running (reading only, or writing), or stopped by Ctrl-C
	// before it began
	phase atomic.Int32
}

// The phases of a command (appEnv.phase).
const (
	phaseParsing int32 = iota // its action has not begun
	phaseReading              // its action writes nothing
	phaseWriting              // its action may write
	phaseStopped              // Ctrl-C came before its action began: it never will
)

// run is the whole program: it parses args, runs the command and maps its
// error to an exit code (exitCode, in errors.go).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	home, _ := os.UserHomeDir()
	env := &appEnv{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv, home: home, now: time.Now}
	if h := os.Getenv("HOME"); h != "" {
		env.home = h
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	app := newApp(env)
	done := make(chan error, 1)
	go func() { done <- app.RunContext(ctx, interspersed(app, args)) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = awaitInterrupted(env, done)
	}
	// after Ctrl-C, a command that only reads is interrupted even when it
	// ended by itself in the meantime; one that writes and finished its
	// writing says so
	if ctx.Err() != nil && exitCode(err) != exitSignal && (err != nil || env.phase.Load() != phaseWriting) {
		err = errInterrupted
	}
	return report(env.stderr, err)
}

// interruptible runs f, a pass that only reads (a directory walk, a plan),
// and returns ctx.Err() as soon as ctx is done (Ctrl-C), when f may not
// look at ctx for seconds. f then goes on in the background and its result
// is dropped; the program exits at once.
func interruptible[T any](ctx context.Context, f func() T) (T, error) {
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// interruptGrace is how long a command that only reads is given to stop
// by itself after Ctrl-C before the program exits without it. Issue 11
// asks for an exit within 200 ms of SIGINT.
const interruptGrace = 100 * time.Millisecond

// awaitInterrupted waits for the command after Ctrl-C. A command that
// changes files is always waited for: it rolls back to the untouched
// original and removes its temp files before it returns. A command that only
// reads (phaseReading) has nothing to undo, so when one of its passes does
// not look at the context (a directory walk, one long line) the program
// exits after interruptGrace and leaves it behind. A command whose action
// has not begun (its line is still being parsed, on a slow start) never
// begins, and is not waited for: it was, as one that may write, and ran to
// its end and exited 0.
func awaitInterrupted(env *appEnv, done <-chan error) error {
	if env.phase.CompareAndSwap(phaseParsing, phaseStopped) {
		return errInterrupted
	}
	if env.phase.Load() == phaseWriting {
		return <-done
	}
	select {
	case err := <-done:
		return err
	case <-time.After(interruptGrace):
		return errInterrupted
	}
}

// readOnlyCommands write nothing, whatever their flags; cleanup writes only
// with --apply.
var readOnlyCommands = map[string]bool{"ls": true, "check": true, "stats": true, "checkpoints": true, "rotations": true,
	"diff": true, "show": true, "watch": true, "completion": true, "du": true}

func readOnly(c *cli.Context) bool {
	name := c.Command.Name
	return readOnlyCommands[name] || name == "cleanup" && !c.Bool("apply")
}

func newApp(env *appEnv) *cli.App {
	cli.VersionPrinter = nil // replaced below; cli's default would print to os.Stdout
	app := &cli.App{
		Name:                 "sessctl",
		Usage:                "inspect and maintain the session files of coding agents",
		Description:          "sessctl reads the JSONL session files of Kimi CLI, Claude Code, Codex and clawdcode:\nlist them, check them, count their tokens, rewind and compact them safely.",
		Version:              versionString(),
		HideVersion:          true,
		EnableBashCompletion: true,
		Reader:               env.stdin,
		Writer:               env.stdout,
		ErrWriter:            env.stderr,
		// errors are reported and mapped to exit codes in one place (run)
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%v", err).withHint("sessctl --help lists the commands and global flags")
		},
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version and exit"},
			noIndexFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				fmt.Fprintln(env.stdout, "sessctl", versionString())
				return nil
			}
			if c.Args().Len() > 0 {
				return usageErrorf("unknown command %q", c.Args().First()).withHint("sessctl --help lists the commands")
			}
			return cli.ShowAppHelp(c)
		},
		CommandNotFound: func(c *cli.Context, name string) {},
		Commands:        commands(env),
	}
	return app
}

// commands lists every command, one constructor per cmd_*.go file, with
// what they all share: usage errors are one line on stderr with a hint
// (never the whole help text on stdout), and shell completion offers flags,
// never a "help" subcommand (arguments are left to the shell: paths).
func commands(env *appEnv) []*cli.Command {
	cmds := allCommands(env)
	for _, cmd := range cmds {
		name := cmd.Name
		cmd.HideHelpCommand = true
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageErrorf("%s: %v", name, err).withHint("sessctl %s --help lists the arguments and flags", name)
		}
		if !hasFlag(cmd, "no-color") {
			cmd.Flags = append(cmd.Flags, noColorFlag())
		}
		action := cmd.Action
		cmd.Action = func(c *cli.Context) error {
			phase := phaseWriting
			if readOnly(c) {
				phase = phaseReading
			}
			if !env.phase.CompareAndSwap(phaseParsing, phase) {
				return errInterrupted // Ctrl-C came first (awaitInterrupted)
			}
			err := action(c)
			var ce *cliError
			if errors.As(err, &ce) && ce.usage && ce.hint == "" {
				ce.hint = fmt.Sprintf("sessctl %s --help lists the arguments and flags", name)
			}
			return err
		}
	}
	return cmds
}

func hasFlag(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

// required is the check of a flag that must be given (urfave/cli's own
// Required prints the whole help text to stdout).
func required(c *cli.Context, flag, value string) error {
	if c.IsSet(flag) {
		return nil
	}
	return usageErrorf("%s needs --%s %s", c.Command.Name, flag, value)
}

// extraCommands are commands that only some builds have (gen_man.go).
var extraCommands []func(*appEnv) *cli.Command

func allCommands(env *appEnv) []*cli.Command {
	cmds := []*cli.Command{
		lsCommand(env),
		checkCommand(env),
		compactCommand(env),
		completionCommand(env),
		statsCommand(env),
		checkpointsCommand(env), grepCommand(env), exportCommand(env), revertCommand(env), repairCommand(env), redactCommand(env), rotationsCommand(env), restoreCommand(env), pruneRotationsCommand(env), diffCommand(env),
		cleanupCommand(env), duCommand(env), trashCommand(env),
		compressCommand(env),
		watchCommand(env),
		showCommand(env),
		// more commands: add one line each
	}
	for _, c := range extraCommands {
		cmds = append(cmds, c(env))
	}
	return cmds
}

// buildCommit is stamped by `make build` (-X main.buildCommit=…) for builds
// where the VCS information is not embedded.
var buildCommit string

// versionString is the module version and VCS commit from the build info.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified, when string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		case "vcs.time":
			when = s.Value
		}
	}
	parts := []string{v}
	if rev == "" {
		rev = buildCommit
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		parts = append(parts, "commit "+rev+modified)
	}
	if when != "" {
		parts = append(parts, when)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, ", ")
}

// errInterrupted is returned when the user pressed Ctrl-C.
var errInterrupted = errors.New("interrupted")
