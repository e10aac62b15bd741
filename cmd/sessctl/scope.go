package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/index"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/urfave/cli/v2"
)

// Flags shared by the commands that find sessions.
func rootFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "root", Usage: "search `DIR` for sessions instead of the agents' default stores (repeatable)"}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON (field names are stable; see docs/)"}
}

func noColorFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-color", Usage: "never colour the output (NO_COLOR in the environment does the same)"}
}

func agentFlag() cli.Flag {
	return &cli.StringFlag{Name: "agent", Usage: "only sessions of `AGENT` (kimi, kimi-code, claude, codex, clawdcode)"}
}

// agentOpt reads --agent: "" when it is not given.
func agentOpt(c *cli.Context) (session.Agent, error) {
	a := c.String("agent")
	if a == "" {
		return "", nil
	}
	ag, ok := session.ParseAgent(a)
	if !ok {
		return "", usageErrorf("unknown agent %q", a).withHint("agents are kimi, kimi-code, claude, codex and clawdcode")
	}
	return ag, nil
}

// sinceOpt reads --since: the zero time when it is not given.
func sinceOpt(env *appEnv, c *cli.Context) (time.Time, error) {
	s := c.String("since")
	if s == "" {
		return time.Time{}, nil
	}
	t, err := parseSince(s, env.now())
	if err != nil {
		return time.Time{}, usageErrorf("%v", err)
	}
	return t, nil
}

// discoverScope finds sessions: in explicit paths when given, else in the
// --root directories, else in every agent's default store.
func discoverScope(env *appEnv, roots, paths []string) *session.Result {
	if len(paths) > 0 {
		return session.DiscoverPaths(paths)
	}
	return session.Discover(scopeRoots(env, roots))
}

// discoverIndexed is discoverScope through the discovery snapshots the
// index keeps (session.DiscoverCached, docs/index.md) when ix is open and
// no paths are named.
func discoverIndexed(env *appEnv, roots, paths []string, ix *index.Index) *session.Result {
	if ix == nil || len(paths) > 0 {
		return discoverScope(env, roots, paths)
	}
	rs, missingOK := scopeRoots(env, roots)
	return session.DiscoverCached(rs, missingOK, ix)
}

// discoverPacked is discoverIndexed with the sessions packed
// (session.DiscoverPacked) when no paths are named.
func discoverPacked(env *appEnv, roots, paths []string, ix *index.Index) *session.Result {
	if len(paths) > 0 {
		return discoverScope(env, roots, paths)
	}
	rs, missingOK := scopeRoots(env, roots)
	if ix == nil {
		return session.DiscoverPacked(rs, missingOK)
	}
	return session.DiscoverCachedPacked(rs, missingOK, ix)
}

// scopeRoots are the --root directories, else every agent's default store;
// missingOK says the stores need not exist (the defaults).
func scopeRoots(env *appEnv, roots []string) (rs []session.Root, missingOK bool) {
	if len(roots) == 0 {
		return session.DefaultRoots(env.getenv, env.home), true
	}
	for _, r := range roots {
		rs = append(rs, session.Root{Path: r})
	}
	return rs, false
}

// keep returns the sessions of agent (all when "") updated since (any
// time when zero), in the order found.
func keep(ss []*session.Session, agent session.Agent, since time.Time) []*session.Session {
	var out []*session.Session
	for _, s := range ss {
		if kept(s, agent, since) {
			out = append(out, s)
		}
	}
	return out
}

// kept reports whether s is of agent (any when "") and updated since (any
// time when zero).
func kept(s *session.Session, agent session.Agent, since time.Time) bool {
	return (agent == "" || s.Agent == agent) && (since.IsZero() || !s.Updated().Before(since))
}

// searched says where discoverScope looked, for "no sessions found in …":
// the paths or roots given, or the default stores as the environment names
// them (CLAUDE_CONFIG_DIR=/x is searched instead of ~/.claude, so the
// message must not name ~/.claude), each marked when it does not exist.
func searched(env *appEnv, roots, paths []string) string {
	var where []string
	switch {
	case len(paths) > 0:
		where = paths
	case len(roots) > 0:
		where = roots
	default:
		for _, r := range session.DefaultRoots(env.getenv, env.home) {
			p := r.Path
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
				p += " (does not exist)"
			}
			where = append(where, p)
		}
	}
	return strings.Join(where, ", ")
}

// resolveSession turns a SESSION argument into one session: a path to a
// session file or Kimi session directory, or a session id (or unique prefix)
// found under --root or the default stores.
func resolveSession(env *appEnv, roots []string, arg string) (*session.Session, error) {
	if arg == "" {
		return nil, usageErrorf("missing SESSION (a session file, a Kimi session directory, or a session id)").
			withHint("sessctl ls lists the sessions and their ids")
	}
	if _, err := os.Stat(arg); err == nil {
		res := session.DiscoverPaths([]string{arg})
		if err := firstError(res); err != nil && len(res.Sessions) == 0 {
			return nil, err
		}
		switch len(res.Sessions) {
		case 1:
			return res.Sessions[0], nil
		case 0:
			if len(res.Unrecognized) > 0 {
				return nil, fmt.Errorf("%s: not a session file of a known agent", arg)
			}
			return nil, fmt.Errorf("%s: no session found there", arg)
		default:
			return nil, ambiguous(arg, res.Sessions)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, ".jsonl") {
		return nil, fmt.Errorf("%s: %w", arg, session.ErrNoSuchPath)
	}
	res := discoverScope(env, roots, nil)
	found := session.Find(res.Sessions, arg)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, (&cliError{code: exitError, err: fmt.Errorf("no session with id %q", arg)}).
			withHint("sessctl ls lists the sessions and their ids (use --root DIR to search elsewhere)")
	}
	return nil, ambiguous(arg, found)
}

// memberFile returns the file of s that arg names when that is not its main
// transcript: a rotation or a subagent transcript named directly.
func memberFile(s *session.Session, arg string) (session.File, bool) {
	fi, err := os.Stat(arg)
	if err != nil || !fi.Mode().IsRegular() {
		return session.File{}, false
	}
	if mi, err := os.Stat(s.Main); err == nil && os.SameFile(fi, mi) {
		return session.File{}, false
	}
	for _, f := range s.Files {
		if f.Role != session.FileRotation && f.Role != session.FileSubagent {
			continue
		}
		if gi, err := os.Stat(f.Path); err == nil && os.SameFile(fi, gi) {
			return f, true
		}
	}
	return session.File{}, false
}

// namedFile is the session a reading command reports when SESSION names one
// of its files other than the main transcript: that file alone, as if it
// were the main one (a Kimi rotation keeps the session's wire files, which
// hold the usage of every generation). stats and checkpoints of a rotation
// report the rotation, not the live file.
func namedFile(s *session.Session, arg string) *session.Session {
	f, ok := memberFile(s, arg)
	if !ok {
		return s
	}
	v := *s
	v.Main, v.Files = f.Path, []session.File{{Path: f.Path, Role: session.FileMain, Size: f.Size, ModTime: f.ModTime}}
	if f.Role == session.FileRotation {
		v.Files = append(v.Files, s.FilesWithRole(session.FileWire)...)
	}
	return &v
}

// notYet reports, for a session whose agent is not known yet (an empty
// file named on the command line: discovery makes it a session so that
// every command treats it alike, and watch can follow it), that there is
// nothing in it yet. It returns false for every other session.
func notYet(env *appEnv, s *session.Session) bool {
	if s.Agent != session.Unknown {
		return false
	}
	fmt.Fprintf(env.stdout, "%s: no records yet (the agent is known once it writes the first line)\n", line(s.Main))
	return true
}

// wholeSession refuses, for a command that changes a session, a SESSION
// that names a rotation or a subagent transcript: the change would land on
// the main transcript, not on the file named.
func wholeSession(s *session.Session, arg string) error {
	f, ok := memberFile(s, arg)
	if !ok {
		return nil
	}
	what := "a rotated copy"
	if f.Role == session.FileSubagent {
		what = "a subagent transcript"
	}
	return usageErrorf("%s is %s of the session %s; this command changes whole sessions", arg, what, s.Main).
		withHint("name the session: %s", shellQuote(s.Main))
}

func ambiguous(arg string, ss []*session.Session) error {
	var b strings.Builder
	for i, s := range ss {
		if i == 5 {
			fmt.Fprintf(&b, ", … (%d in all)", len(ss))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.Main)
	}
	return usageErrorf("%q matches %d sessions: %s", arg, len(ss), b.String()).withHint("name one session: a longer id, or its file")
}

// discoveryProblems prints what discovery could not read, once. When that
// is fatal (nothing was found), each is an error line and the command fails
// with exit 2; otherwise each is a warning and the command goes on.
func discoveryProblems(env *appEnv, res *session.Result, fatal bool) error {
	if fatal && len(res.Errors) > 0 {
		for _, err := range res.Errors {
			fmt.Fprintf(env.stderr, "sessctl: error: %s\n", line(message(err)))
		}
		return &cliError{code: exitError, err: errSilent, hint: hintFor(res.Errors[0])}
	}
	for _, err := range res.Errors {
		warn(env.stderr, "%v", err)
	}
	return nil
}

func firstError(res *session.Result) error {
	if len(res.Errors) > 0 {
		return res.Errors[0]
	}
	return nil
}

// parseAge accepts durations with day and week units (30d, 2w, 12h, 90m,
// 1h30m) as well as Go's units.
func parseAge(s string) (time.Duration, error) {
	orig := s
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("invalid duration %q (use e.g. 30d, 2w, 12h)", orig)
		}
		num := s[:i]
		j := i
		for j < len(s) && !(s[j] >= '0' && s[j] <= '9') && s[j] != '.' {
			j++
		}
		unit := s[i:j]
		s = s[j:]
		var mult time.Duration
		switch unit {
		case "w":
			mult = 7 * 24 * time.Hour
		case "d":
			mult = 24 * time.Hour
		case "h":
			mult = time.Hour
		case "m":
			mult = time.Minute
		case "s":
			mult = time.Second
		default:
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use w, d, h, m or s)", orig, unit)
		}
		var f float64
		if _, err := fmt.Sscanf(num, "%g", &f); err != nil || f < 0 {
			return 0, fmt.Errorf("invalid duration %q", orig)
		}
		total += time.Duration(f * float64(mult))
	}
	return total, nil
}

// parseSince accepts an age (7d: since seven days ago) or a date
// (2026-11-01, or RFC 3339).
func parseSince(s string, now time.Time) (time.Time, error) {
	for _, layout := range []string{"2006-01-02", time.RFC3339, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	d, err := parseAge(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid --since %q: use an age such as 7d or a date such as 2026-11-01", s)
	}
	return now.Add(-d), nil
}

// eachSession runs one on every session in turn, for the commands that
// change several sessions (repair, redact): each result is rendered as it
// comes, or all are printed as one JSON array at the end. The first error
// is returned (the exit code and the final message report it) and each
// later one is printed as it happens; Ctrl-C stops between sessions and
// inside one. When unfinished counts something in the results (damage not
// repaired, secrets not redacted), the exit code is 1.
func eachSession[T any](ctx context.Context, env *appEnv, ss []*session.Session, asJSON bool,
	one func(*session.Session) (T, error), render func(T), unfinished func(T) int) error {
	outs := []T{}
	var firstErr error
	left := 0
	for _, s := range ss {
		if err := ctx.Err(); err != nil {
			return errInterrupted
		}
		out, err := one(s)
		if err != nil {
			if errors.Is(err, errInterrupted) || ctx.Err() != nil {
				return errInterrupted
			}
			if firstErr == nil {
				firstErr = err
			} else {
				fmt.Fprintf(env.stderr, "sessctl: error: %s\n", line(message(err)))
			}
			continue
		}
		left += unfinished(out)
		outs = append(outs, out)
		if !asJSON {
			render(out)
		}
	}
	if asJSON {
		if err := writeJSON(env.stdout, outs); err != nil {
			return err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	if left > 0 {
		return silentFindings
	}
	return nil
}
