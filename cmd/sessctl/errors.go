package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/trash"
)

// Exit codes. Scripts should treat any code they do not know as failure.
const (
	exitOK       = 0   // success; for check: no problems
	exitFindings = 1   // the command worked and found problems (check), or had nothing it could do (compact of a short session, compress of a named session its client could not read)
	exitError    = 2   // usage error, or an I/O error such as a missing or unreadable path
	exitRefused  = 3   // refused for safety: the session is live, locked or changed under us (use --force where offered)
	exitSignal   = 130 // interrupted
)

// cliError carries an exit code and an optional hint.
type cliError struct {
	code  int
	err   error
	hint  string
	usage bool // a usage error: without a hint of its own, it gets "sessctl CMD --help"
}

func (e *cliError) Error() string { return e.err.Error() }
func (e *cliError) Unwrap() error { return e.err }

func (e *cliError) withHint(format string, a ...any) *cliError {
	e.hint = fmt.Sprintf(format, a...)
	return e
}

func usageErrorf(format string, a ...any) *cliError {
	return &cliError{code: exitError, err: fmt.Errorf(format, a...), usage: true}
}

// findingsError makes the command exit 1 after it has printed its findings;
// its message (when not empty) is printed as an error line.
func findingsError(format string, a ...any) *cliError {
	return &cliError{code: exitFindings, err: fmt.Errorf(format, a...)}
}

// silentFindings exits 1 without printing anything more.
var silentFindings = &cliError{code: exitFindings, err: errSilent}

var errSilent = errors.New("")

// refusal is implemented by errors from pkg/ that are safety refusals (live
// session, lock held, file changed under us).
type refusal interface{ Refusal() bool }

// exitCode maps an error to the process exit code. This is the one place
// where that happens.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errInterrupted) {
		return exitSignal
	}
	var ce *cliError
	if errors.As(err, &ce) {
		return ce.code
	}
	var r refusal
	if errors.As(err, &r) && r.Refusal() {
		return exitRefused
	}
	return exitError
}

// report prints err age-style and returns the exit code:
//
//	sessctl: error: <what went wrong>
//	sessctl: hint: <what to do>
//
// An error that wraps errSilent was already printed; only its hint (if it
// has one) is.
func report(w io.Writer, err error) int {
	code := exitCode(err)
	if err == nil {
		return code
	}
	if !errors.Is(err, errSilent) {
		// messages quote paths and session text: shown safely, like all output
		fmt.Fprintf(w, "sessctl: error: %s\n", line(message(err)))
	}
	var ce *cliError
	if errors.As(err, &ce) && ce.hint != "" {
		fmt.Fprintf(w, "sessctl: hint: %s\n", line(ce.hint))
	} else if h := hintFor(err); h != "" {
		fmt.Fprintf(w, "sessctl: hint: %s\n", line(h))
	}
	return code
}

// message makes the error text lowercase-first and without a final period.
func message(err error) string {
	s := strings.TrimSpace(err.Error())
	s = strings.TrimSuffix(s, ".")
	return s
}

func hintFor(err error) string {
	switch {
	case errors.Is(err, session.ErrNoSuchPath), errors.Is(err, fs.ErrNotExist):
		return "check the path; sessctl ls lists the sessions it can find"
	case errors.Is(err, fs.ErrPermission):
		return "sessctl needs read permission on the session files (and write permission to change them)"
	}
	var blocked *trash.BlockedError
	var ambiguous *trash.AmbiguousError
	switch {
	case errors.As(err, &blocked):
		return "move that file out of the way (compare it with the trashed one first) and run sessctl trash restore again"
	case errors.As(err, &ambiguous):
		return "give more of the entry id; sessctl trash ls lists the entries"
	case errors.Is(err, trash.ErrNoEntry):
		return "sessctl trash ls lists the entries"
	}
	switch {
	case errors.Is(err, safety.ErrLocked):
		return "another sessctl run is working on this session; wait until it has finished and try again (--force does not override the lock)"
	case errors.Is(err, safety.ErrChanged):
		return "the file was written to meanwhile; run the command again once the agent has stopped writing"
	case errors.Is(err, safety.ErrLive):
		return "wait until the agent has stopped writing, or pass --force if you are sure"
	}
	var r refusal
	if errors.As(err, &r) && r.Refusal() {
		return "wait until the agent has stopped writing, or pass --force if you are sure"
	}
	return ""
}

// inPath prefixes err with path, unless err already names it (a refusal from
// pkg/safety does), so that a message never shows the path twice.
func inPath(path string, err error) error {
	var re *safety.RefusalError
	if errors.As(err, &re) && re.Path == path || strings.HasPrefix(err.Error(), path+":") {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
