// Package du measures the disk use of agent session stores: every regular
// file under the roots, each counted once and given to the session it
// belongs to (or to "other"), and what of it could be reclaimed: expired
// sessions (as cleanup would expire them), rotations, what interrupted
// rewrites left behind, and transcripts that a larger transcript of the
// same conversation repeats (forks). It reads no more than it must: sizes
// come from the walk, and only the heads of transcripts, plus the whole of
// those that share their first record with another, are read.
package du

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/cleanup"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Use is a number of files and their bytes.
type Use struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

func (u *Use) add(n int64) {
	u.Files++
	u.Bytes += n
}

// Session is the disk use of one session.
type Session struct {
	Agent   session.Agent `json:"agent"`
	ID      string        `json:"id"`
	Project string        `json:"project"`
	Main    string        `json:"main"`
	Updated time.Time     `json:"updated"`
	// Total is every file of the session: Main, its Rotations and Side
	// (subagent transcripts, wire logs, sidecar directories, the rest).
	Total     Use `json:"total"`
	MainFile  Use `json:"main_file"`
	Rotations Use `json:"rotations"`
	Side      Use `json:"side"`
	// Expired says cleanup would remove the session (Reclaimable.Expired).
	Expired bool `json:"expired"`
	// ForkCopy is the bytes of the lines of Main that ForkOf, a larger
	// transcript of the same conversation, repeats (same record ids).
	ForkCopy int64  `json:"fork_copy_bytes,omitempty"`
	ForkOf   string `json:"fork_of,omitempty"`
	// Session is the session as discovery found it.
	Session *session.Session `json:"-"`
}

// Reclaimable is what could be removed, in disjoint parts.
type Reclaimable struct {
	// Expired are whole sessions cleanup would remove (Use.Files counts
	// their files; Sessions the sessions).
	Expired  Use `json:"expired"`
	Sessions int `json:"expired_sessions"`
	// OlderThan is the rule they expire by.
	OlderThan string `json:"older_than"`
	// Rotations are the rotated files of the sessions that stay.
	Rotations Use `json:"rotations"`
	// Leftovers are stale files of interrupted rewrites (cleanup removes
	// them).
	Leftovers Use `json:"leftovers"`
	// ForkCopies are the repeated lines of the transcripts that stay
	// (Use.Files counts the transcripts).
	ForkCopies Use   `json:"fork_copies"`
	Bytes      int64 `json:"bytes"`
}

// Root is the disk use of one root.
type Root struct {
	Path string `json:"path"`
	Use
}

// Report is the disk use of the roots.
type Report struct {
	Roots    []Root     `json:"roots"`
	Sessions []*Session `json:"sessions"`
	// Other are the files under the roots that belong to no session (the
	// clients' shared files, caches, leftovers).
	Other Use `json:"other"`
	// Total is every regular file under the roots, each once: the sum of
	// the sessions' totals and Other.
	Total       Use         `json:"total"`
	Reclaimable Reclaimable `json:"reclaimable"`
	Warnings    []string    `json:"warnings"`
}

// Options say which stores to measure, and the expiry rule (as cleanup's).
type Options = cleanup.Options

// Measure walks the roots of opt and reports their disk use.
func Measure(ctx context.Context, opt Options) (*Report, error) {
	return MeasureWith(ctx, opt, nil)
}

// Heads gives read(s), a string read from the head of session s's main
// transcript that name names; a cache may keep it (the index's HeadOf).
type Heads func(s *session.Session, name string, read func(*session.Session) string) string

// MeasureWith is Measure with the heads of the transcripts read through
// heads (nil: read).
func MeasureWith(ctx context.Context, opt Options, heads Heads) (*Report, error) {
	plan, err := cleanup.MakePlan(opt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Roots: []Root{}, Sessions: []*Session{}, Warnings: append([]string{}, plan.Warnings...)}
	expired := map[string]bool{}
	for _, it := range plan.Sessions {
		expired[it.Main] = true
	}
	rep.Reclaimable.OlderThan = expiryRule(opt)

	// who owns what: a session's listed files, and its directories (the
	// files in them that discovery did not list are its side files)
	type owner struct {
		s    int
		role session.FileRole
	}
	files := map[string]owner{}
	dirs := map[string]int{}
	for i, s := range plan.Found {
		rep.Sessions = append(rep.Sessions, &Session{Agent: s.Agent, ID: s.ID, Project: s.Project, Main: s.Main,
			Updated: s.Updated(), Expired: expired[s.Main], Session: s})
		if s.Dir != "" {
			dirs[s.Dir] = i
		}
		for _, f := range s.Files {
			if f.Dir {
				dirs[f.Path] = i
			} else {
				files[f.Path] = owner{i, f.Role}
			}
		}
	}
	ownerOf := func(path, root string) (owner, bool) {
		if o, ok := files[path]; ok {
			return o, true
		}
		for d := filepath.Dir(path); len(d) >= len(root) && d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
			if i, ok := dirs[d]; ok {
				return owner{i, session.FileSide}, true
			}
		}
		return owner{}, false
	}

	for _, r := range distinctRoots(opt.Roots) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ru := Root{Path: r}
		// a root that is a symbolic link to a directory is measured there,
		// its paths named as discovery names them
		walk := r
		if fi, err := os.Lstat(r); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			walk = r + string(filepath.Separator)
		}
		err := filepath.WalkDir(walk, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == walk {
					return err
				}
				rep.Warnings = append(rep.Warnings, err.Error())
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil // directories, and symbolic links: not followed, not counted
			}
			fi, err := d.Info()
			if err != nil {
				rep.Warnings = append(rep.Warnings, err.Error())
				return nil
			}
			p = filepath.Clean(p)
			n := fi.Size()
			ru.add(n)
			rep.Total.add(n)
			o, ok := ownerOf(p, r)
			if !ok {
				rep.Other.add(n)
				return nil
			}
			s := rep.Sessions[o.s]
			s.Total.add(n)
			switch {
			case p == s.Main:
				s.MainFile.add(n)
			case o.role == session.FileRotation:
				s.Rotations.add(n)
			default:
				s.Side.add(n)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		rep.Roots = append(rep.Roots, ru)
	}

	if err := forkCopies(ctx, plan.Found, rep, heads); err != nil {
		return nil, err
	}
	rc := &rep.Reclaimable
	for _, s := range rep.Sessions {
		if s.Expired {
			rc.Sessions++
			rc.Expired.Files += s.Total.Files
			rc.Expired.Bytes += s.Total.Bytes
			continue
		}
		rc.Rotations.Files += s.Rotations.Files
		rc.Rotations.Bytes += s.Rotations.Bytes
		if s.ForkCopy > 0 {
			rc.ForkCopies.add(s.ForkCopy)
		}
	}
	for _, l := range plan.Leftovers {
		if l.Status != cleanup.StatusSkipped {
			rc.Leftovers.add(l.Size)
		}
	}
	rc.Bytes = rc.Expired.Bytes + rc.Rotations.Bytes + rc.Leftovers.Bytes + rc.ForkCopies.Bytes
	return rep, nil
}

// expiryRule says in words when a session expires under opt.
func expiryRule(opt Options) string {
	if opt.OlderThanSet {
		return cleanup.FormatAge(opt.OlderThan)
	}
	return cleanup.FormatAge(cleanup.DefaultOlderThan) + ", or Claude Code's cleanupPeriodDays"
}

// distinctRoots are the roots that exist, absolute, without one that lies
// inside another (its files would count twice).
func distinctRoots(roots []session.Root) []string {
	type rr struct{ path, real string }
	var all []rr
	for _, r := range roots {
		abs, err := filepath.Abs(r.Path)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			continue // MakePlan has already said why, or skipped it (missingOK)
		}
		all = append(all, rr{abs, real})
	}
	var out []string
	for i, a := range all {
		inside := false
		for j, b := range all {
			if i == j {
				continue
			}
			if a.real == b.real && j < i || a.real != b.real && strings.HasPrefix(a.real, b.real+string(filepath.Separator)) {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, a.path)
		}
	}
	return out
}

// forkCopies finds the transcripts that repeat another: those whose first
// record id (session.Record.UUID) is another's first are one conversation
// forked (Claude Code writes a fork as a copy of the whole transcript with
// the record ids kept, claude-code #85179). In each such group the largest
// transcript is kept, and each other one's lines whose ids it holds are
// counted as copies.
func forkCopies(ctx context.Context, ss []*session.Session, rep *Report, heads Heads) error {
	read := firstID
	if heads != nil {
		read = func(s *session.Session) string { return heads(s, "first-id", firstID) }
	}
	first := session.ReadHeads(ctx, ss, read)
	if err := ctx.Err(); err != nil {
		return err
	}
	groups := map[string][]int{}
	for i, id := range first {
		if id != "" {
			k := string(ss[i].Agent) + "\x00" + id
			groups[k] = append(groups[k], i)
		}
	}
	keys := make([]string, 0, len(groups))
	for k, g := range groups {
		if len(g) > 1 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := groups[k]
		sort.Slice(g, func(a, b int) bool {
			sa, sb := rep.Sessions[g[a]], rep.Sessions[g[b]]
			if sa.MainFile.Bytes != sb.MainFile.Bytes {
				return sa.MainFile.Bytes > sb.MainFile.Bytes
			}
			if !sa.Updated.Equal(sb.Updated) {
				return sa.Updated.After(sb.Updated)
			}
			return sa.Main < sb.Main
		})
		keep := ss[g[0]]
		ids := map[string]bool{}
		err := scanIDs(ctx, keep, func(id string, _ int) { ids[id] = true })
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %v", keep.Main, err))
			continue
		}
		for _, i := range g[1:] {
			var n int64
			err := scanIDs(ctx, ss[i], func(id string, size int) {
				if ids[id] {
					n += int64(size)
				}
			})
			if err != nil {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %v", ss[i].Main, err))
				continue
			}
			if n > 0 {
				rep.Sessions[i].ForkCopy, rep.Sessions[i].ForkOf = n, keep.Main
			}
		}
	}
	return ctx.Err()
}

// firstID is the id of the first record of s's main transcript that has
// one, "" when none (or the transcript is compressed: its bytes on disk are
// not its lines').
func firstID(s *session.Session) string {
	if jsonl.PlainName(s.Main) != s.Main {
		return ""
	}
	return session.HeadField(s, []byte(`uuid`), func(r *session.Record) string { return r.UUID })
}

// scanIDs calls fn with the id of each line of s's main transcript that
// has one, and the line's bytes with its terminator.
func scanIDs(ctx context.Context, s *session.Session, fn func(id string, size int)) error {
	f := session.FormatFor(s.Agent)
	err := session.ScanFile(ctx, s.Main, func(l *jsonl.Line, id *string) {
		*id = ""
		if l.Status == jsonl.OK {
			*id = session.Decode(f, l).UUID
		}
	}, func(l *jsonl.Line, id *string) error {
		if *id != "" {
			fn(*id, int(l.End()-l.Offset))
		}
		return nil
	})
	if errors.Is(err, jsonl.ErrStop) {
		return nil
	}
	return err
}
