// Package cleanup removes old agent sessions safely. It works on whole
// sessions as pkg/session discovers them (a session expires when the newest
// of its files is older than the cutoff), plans first, and deletes only what
// the plan lists: every file is re-checked (same inode, size and mtime, not
// a symlink, inside a root, not being written) just before it is removed.
//
// It imports pkg/session, pkg/safety and pkg/jsonl.
package cleanup

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// DefaultOlderThan is the age after which a session expires when neither
// --older-than nor Claude Code's cleanupPeriodDays says otherwise.
const DefaultOlderThan = 30 * 24 * time.Hour

// Options say what to remove.
type Options struct {
	Roots []session.Root
	// MissingOK skips roots that do not exist (the default stores) instead
	// of failing.
	MissingOK bool
	// OlderThan is the expiry age. OlderThanSet says the user gave it; when
	// not set, Claude Code sessions use cleanupPeriodDays from the settings.json
	// of their root when it has one.
	OlderThan    time.Duration
	OlderThanSet bool
	// Keep protects the N newest sessions of each project (by age and by
	// MaxSize).
	Keep int
	// MaxSize, when > 0, removes the oldest sessions until the sessions
	// under the roots take at most this many bytes.
	MaxSize int64
	// Rotations also removes rotated files older than the cutoff from the
	// sessions that stay.
	Rotations bool
	// Agent limits the cleanup to one agent's sessions ("" = all).
	Agent session.Agent
	// Now is the clock; Quiet is how long a session must have been left
	// alone to not count as live (safety.DefaultQuiet when 0).
	Now   time.Time
	Quiet time.Duration
	// Writers lists the files open for writing (OpenWriters when nil;
	// tests inject their own).
	Writers func() map[FileKey]string
	// Discover finds the sessions of one root (session.Discover when nil).
	// du, which removes nothing, passes one that reads the discovery
	// snapshot of the index; cleanup and the other commands that delete
	// or move files discover from the directories (docs/index.md).
	Discover func(roots []session.Root, missingOK bool) *session.Result
}

// Plan is what a cleanup would remove.
type Plan struct {
	Now time.Time `json:"now"`
	// Sessions are whole sessions to remove, oldest first.
	Sessions []*Item `json:"sessions"`
	// Rotations are rotated files of sessions that stay.
	Rotations []*Item `json:"rotations"`
	// Skipped are sessions that qualified but are left alone, with why.
	Skipped []Skip `json:"skipped"`
	// Side are references from side files to the sessions in the plan.
	Side []*SideRef `json:"side_refs"`
	// Leftovers are what interrupted rewrites left behind (leftovers.go).
	Leftovers []*Leftover `json:"leftovers"`
	// Warnings are problems that did not stop the plan (unreadable
	// directories, cleanupPeriodDays that could not be read, a cap that
	// cannot be reached).
	Warnings []string `json:"warnings"`
	// StoreBytes is the size of all sessions found under the roots;
	// KeptSessions how many of them stay.
	StoreBytes   int64 `json:"store_bytes"`
	AllSessions  int   `json:"sessions_found"`
	KeptSessions int   `json:"sessions_kept"`
	// Found are the sessions in scope that discovery found (sessctl du
	// reports on them all).
	Found []*session.Session `json:"-"`

	roots []root
	real  realCache // directory -> its real path (symlinks resolved)
}

// Item is one session (or the rotations of one session) to remove, with the
// exact files and the directories to remove once they are empty.
type Item struct {
	Agent   session.Agent `json:"agent"`
	ID      string        `json:"id"`
	Project string        `json:"project"`
	Main    string        `json:"main"`
	Root    string        `json:"root"`
	Updated time.Time     `json:"updated"`
	Reason  string        `json:"reason"`
	Files   []Entry       `json:"files"`
	// Dirs are the session's own directories (Kimi session dir, Claude
	// <id>/, file-history/<id>, session-env/<id>). Once the files are gone,
	// each is removed with the empty directories below it; a directory that
	// still holds something unplanned stays.
	Dirs  []string `json:"dirs,omitempty"`
	Bytes int64    `json:"bytes"`

	// Status is set by Apply: planned, removed, refused, failed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Removed counts what Apply really removed.
	RemovedFiles int   `json:"removed_files,omitempty"`
	RemovedBytes int64 `json:"removed_bytes,omitempty"`
	// Trash is the trash entry the files were moved into (Apply with a
	// trash), for sessctl trash restore.
	Trash string `json:"trash,omitempty"`

	err   error
	whole bool // a whole session (else: some rotated files)
	root  root
}

// Err is the error that refused or failed the item in Apply (a
// *safety.RefusalError for refusals), or nil.
func (it *Item) Err() error { return it.err }

// Entry is one file of the plan, with its identity at planning time.
type Entry struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	id      safety.Identity
}

// Skip is a session left alone.
type Skip struct {
	Agent  session.Agent `json:"agent"`
	ID     string        `json:"id"`
	Main   string        `json:"main"`
	Reason string        `json:"reason"`
}

// Item statuses.
const (
	StatusPlanned = "planned"
	StatusRemoved = "removed"
	StatusRefused = "refused"
	StatusFailed  = "failed"
)

// root is a root with its real path (symlinks resolved).
type root struct {
	path string
	real string
	key  FileKey // the real root's device and inode when planned (Apply opens it again and compares)
}

// contains reports whether the real path p is inside the root (not the root
// itself).
func (r root) contains(p string) bool {
	rel, err := filepath.Rel(r.real, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Files counts the files of the items.
func Files(items []*Item) (n int, bytes int64) {
	for _, it := range items {
		n += len(it.Files)
		bytes += it.Bytes
	}
	return n, bytes
}

// ErrNoRoot is returned (wrapped) for a root that does not exist.
var ErrNoRoot = errors.New("no such directory")

// MakePlan finds the sessions under the roots and decides what to remove.
// It reads and stats, and never changes anything.
func MakePlan(opt Options) (*Plan, error) {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if opt.Quiet == 0 {
		opt.Quiet = safety.DefaultQuiet
	}
	if opt.OlderThan == 0 && !opt.OlderThanSet {
		opt.OlderThan = DefaultOlderThan
	}
	p := &Plan{Now: opt.Now, Sessions: []*Item{}, Rotations: []*Item{}, Skipped: []Skip{}, Side: []*SideRef{}, Warnings: []string{}}
	var roots []session.Root
	for _, r := range opt.Roots {
		real, err := filepath.EvalSymlinks(r.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if opt.MissingOK {
					continue
				}
				return nil, fmt.Errorf("root %s: %w", r.Path, ErrNoRoot)
			}
			return nil, fmt.Errorf("root %s: %w", r.Path, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return nil, fmt.Errorf("root %s: %w", r.Path, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("root %s: not a directory", r.Path)
		}
		if abs, err := filepath.Abs(real); err == nil {
			real = abs
		}
		if r.Agent == "" {
			r.Agent = GuessAgent(r.Path)
		}
		if abs, err := filepath.Abs(r.Path); err == nil {
			r.Path = abs
		}
		roots = append(roots, r)
		p.roots = append(p.roots, root{path: r.Path, real: real, key: keyOf(fi)})
	}
	res := discover(roots, opt.MissingOK, opt.Discover)
	var broken []string // paths discovery could not read
	for _, err := range res.Errors {
		p.Warnings = append(p.Warnings, err.Error())
		var pe *fs.PathError
		if errors.As(err, &pe) {
			broken = append(broken, pe.Path)
		}
	}

	// the sessions in scope, with their cutoff
	type cand struct {
		s       *session.Session
		updated time.Time
		size    int64
		cutoff  time.Time
		why     string
		live    bool
		keep    bool
		planned bool
	}
	periods := map[string]retention{}
	var cands []*cand
	for _, s := range res.Sessions {
		if opt.Agent != "" && s.Agent != opt.Agent {
			continue
		}
		c := &cand{s: s, updated: s.Updated(), size: s.Size()}
		age := opt.OlderThan
		c.why = "older than " + FormatAge(age)
		if rh, ok := session.As[Retention](s.Agent); ok && !opt.OlderThanSet {
			key := string(s.Agent) + "\x00" + s.Root
			cp, ok := periods[key]
			if !ok {
				cp.days, cp.source, cp.warning = rh.RetentionDays(s.Root)
				periods[key] = cp
				if cp.warning != "" {
					p.Warnings = append(p.Warnings, cp.warning)
				}
			}
			if cp.days > 0 {
				age = time.Duration(cp.days) * 24 * time.Hour
				c.why = fmt.Sprintf("older than %d days (%s)", cp.days, cp.source)
			}
		}
		c.cutoff = opt.Now.Add(-age)
		since := opt.Now.Sub(c.updated)
		c.live = since < opt.Quiet && since > -time.Minute
		p.StoreBytes += c.size
		cands = append(cands, c)
	}
	p.AllSessions = len(cands)
	for _, c := range cands {
		p.Found = append(p.Found, c.s)
	}

	// --keep: the N newest of each project stay
	if opt.Keep > 0 {
		ss := make([]*session.Session, len(cands))
		for i, c := range cands {
			ss[i] = c.s
		}
		keys := projectKeys(ss)
		groups := map[string][]*cand{}
		for i, c := range cands {
			groups[keys[i]] = append(groups[keys[i]], c)
		}
		for _, g := range groups {
			sort.SliceStable(g, func(i, j int) bool { return g[i].updated.After(g[j].updated) })
			for i := 0; i < len(g) && i < opt.Keep; i++ {
				g[i].keep = true
			}
		}
	}

	// oldest first: the order of removal
	sort.SliceStable(cands, func(i, j int) bool {
		if !cands[i].updated.Equal(cands[j].updated) {
			return cands[i].updated.Before(cands[j].updated)
		}
		return cands[i].s.Main < cands[j].s.Main
	})

	remaining := p.StoreBytes
	var writers map[FileKey]string // files open for writing, looked up once when needed
	take := func(c *cand, reason string) {
		it, err := p.expand(c.s, reason, broken)
		if err != nil {
			p.Skipped = append(p.Skipped, Skip{Agent: c.s.Agent, ID: c.s.ID, Main: c.s.Main, Reason: err.Error()})
			return
		}
		if writers == nil {
			writers = OpenWriters()
			if opt.Writers != nil {
				writers = opt.Writers()
			}
		}
		for _, f := range it.Files {
			if w, ok := writers[FileKey{Dev: f.id.Dev, Ino: f.id.Ino}]; ok {
				c.live = true
				p.Skipped = append(p.Skipped, Skip{Agent: c.s.Agent, ID: c.s.ID, Main: c.s.Main, Reason: "live: " + f.Path + " is open for writing by " + w})
				return
			}
		}
		c.planned = true
		remaining -= it.Bytes
		p.Sessions = append(p.Sessions, it)
	}
	for _, c := range cands {
		if !c.updated.Before(c.cutoff) {
			continue
		}
		switch {
		case c.live:
			p.Skipped = append(p.Skipped, Skip{Agent: c.s.Agent, ID: c.s.ID, Main: c.s.Main, Reason: "live: changed less than " + opt.Quiet.String() + " ago"})
		case c.keep:
			p.Skipped = append(p.Skipped, Skip{Agent: c.s.Agent, ID: c.s.ID, Main: c.s.Main, Reason: keepReason(opt.Keep)})
		default:
			take(c, c.why)
		}
	}
	if opt.Rotations {
		skipped := map[string]bool{} // sessions already listed as skipped
		for _, sk := range p.Skipped {
			skipped[sk.Main] = true
		}
		for _, c := range cands {
			if c.planned {
				continue
			}
			if c.live {
				// every rotation left out is listed, with why
				if n := len(oldRotations(c.s, c.cutoff)); n > 0 && !skipped[c.s.Main] {
					p.Skipped = append(p.Skipped, Skip{Agent: c.s.Agent, ID: c.s.ID, Main: c.s.Main,
						Reason: rotationsKept(n) + ": the session is live (changed less than " + opt.Quiet.String() + " ago)"})
				}
				continue
			}
			it := p.rotationsOf(c.s, c.cutoff, "rotated file "+c.why, broken)
			if it != nil {
				remaining -= it.Bytes
				p.Rotations = append(p.Rotations, it)
			}
		}
	}
	if opt.MaxSize > 0 && remaining > opt.MaxSize {
		for _, c := range cands {
			if remaining <= opt.MaxSize {
				break
			}
			if c.planned || c.live || c.keep {
				continue
			}
			// its rotations may already be planned: count them once
			for i, r := range p.Rotations {
				if r.Main == c.s.Main {
					remaining += r.Bytes
					p.Rotations = append(p.Rotations[:i], p.Rotations[i+1:]...)
					break
				}
			}
			take(c, "over --max-size "+FormatSize(opt.MaxSize))
		}
		if remaining > opt.MaxSize {
			p.Warnings = append(p.Warnings, fmt.Sprintf("cannot get under --max-size %s: %s stay in sessions that are live, kept by --keep or could not be planned",
				FormatSize(opt.MaxSize), FormatSize(remaining)))
		}
	}
	p.KeptSessions = len(cands) - len(p.Sessions)
	p.findLeftovers(res.Sessions, opt.Agent, opt.Now, opt.Quiet)
	p.findSideRefs()
	return p, nil
}

// discover runs session discovery on each root in its own goroutine (the
// walk is syscall-bound) and merges the results; a session found under two
// overlapping roots is kept once.
func discover(roots []session.Root, missingOK bool, find func([]session.Root, bool) *session.Result) *session.Result {
	if find == nil {
		find = session.Discover
	}
	parts := make([]*session.Result, len(roots))
	var wg sync.WaitGroup
	for i, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i] = find([]session.Root{r}, missingOK)
		}()
	}
	wg.Wait()
	res := &session.Result{}
	seen := map[string]bool{}
	for _, part := range parts {
		for _, s := range part.Sessions {
			if !seen[s.Main] {
				seen[s.Main] = true
				res.Sessions = append(res.Sessions, s)
			}
		}
		res.Unrecognized = append(res.Unrecognized, part.Unrecognized...)
		res.Errors = append(res.Errors, part.Errors...)
	}
	return res
}

// ProjectKeyer is implemented by the homes of agents whose store does not
// group a session's files by project (Codex sorts rollouts by date): the
// key is read from the session's main file. buf is scratch space the
// caller owns.
type ProjectKeyer interface {
	ProjectKey(main string, buf []byte) string
}

// projectKeys groups sessions for --keep: the agent and its project (or the
// key its home reads from the file, read by a few goroutines since that
// means opening every file).
func projectKeys(ss []*session.Session) []string {
	keys := make([]string, len(ss))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 8<<10)
			for i := range work {
				pk, _ := session.As[ProjectKeyer](ss[i].Agent)
				keys[i] = string(ss[i].Agent) + "\x00" + pk.ProjectKey(ss[i].Main, buf)
			}
		}()
	}
	for i, s := range ss {
		if _, ok := session.As[ProjectKeyer](s.Agent); ok {
			work <- i
		} else {
			keys[i] = string(s.Agent) + "\x00" + s.Project
		}
	}
	close(work)
	wg.Wait()
	return keys
}

// expand lists the exact files of a session (side directories walked) with
// their identities, and the directories to remove when empty. It refuses a
// session with a file outside the roots, a symlink, or a directory discovery
// could not read.
func (p *Plan) expand(s *session.Session, reason string, broken []string) (*Item, error) {
	it := &Item{Agent: s.Agent, ID: s.ID, Project: s.Project, Main: s.Main, Root: s.Root,
		Updated: s.Updated(), Reason: reason, Status: StatusPlanned, whole: true}
	r, ok := p.rootOf(s.Main)
	if !ok {
		return nil, fmt.Errorf("%s is not inside a root given to cleanup", s.Main)
	}
	it.root = r
	// the session's own directories: discovery listed every regular file in
	// s.Dir; side directories (Claude file-history/<id>, session-env/<id>)
	// come as one entry each and are walked here
	if s.Dir != "" {
		it.Dirs = append(it.Dirs, s.Dir)
	}
	for _, f := range s.Files {
		if !f.Dir {
			if err := p.addFile(it, f.Path); err != nil {
				return nil, err
			}
			continue
		}
		it.Dirs = append(it.Dirs, f.Path)
		err := filepath.WalkDir(f.Path, func(q string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.Type().IsRegular() {
				return nil // symlinks and other non-files stay (and so does their directory)
			}
			return p.addFile(it, q)
		})
		if err != nil {
			return nil, err
		}
	}
	for _, d := range it.Dirs {
		for _, b := range broken {
			if b == d || strings.HasPrefix(b, d+string(filepath.Separator)) {
				return nil, fmt.Errorf("%s could not be read completely", d)
			}
		}
	}
	sort.SliceStable(it.Dirs, func(i, j int) bool { return depth(it.Dirs[i]) > depth(it.Dirs[j]) })
	return it, nil
}

func depth(p string) int { return strings.Count(p, string(filepath.Separator)) }

// addFile records one file after checking that it is a regular file inside
// the item's root.
func (p *Plan) addFile(it *Item, path string) error {
	if err := p.inRoot(it.root, path); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	k := keyOf(fi) // the identity safety.Stat would give, from the same Lstat
	id := safety.Identity{Dev: k.Dev, Ino: k.Ino, Size: fi.Size(), ModTime: fi.ModTime()}
	it.Files = append(it.Files, Entry{Path: path, Size: fi.Size(), ModTime: fi.ModTime(), id: id})
	it.Bytes += fi.Size()
	return nil
}

func (r root) check(path, dir string) error {
	if dir != r.real && !r.contains(dir) {
		return fmt.Errorf("%s is outside the root %s (its directory resolves to %s)", path, r.path, dir)
	}
	return nil
}

// inRoot is inRoot with the directories' real paths cached.
func (p *Plan) inRoot(r root, path string) error {
	if p.real == nil {
		p.real = realCache{}
	}
	return p.real.inRoot(r, path)
}

// realCache maps directories to their real paths (symlinks resolved).
type realCache map[string]string

func (c realCache) inRoot(r root, path string) error {
	dir, err := c.dir(filepath.Dir(path))
	if err != nil {
		return err
	}
	return r.check(path, dir)
}

// dir is the real path of directory d: its parent's real path (cached)
// joined with its name, or, when d itself is a symlink, the link resolved.
// One Lstat per directory instead of one per path component.
func (c realCache) dir(d string) (string, error) {
	if r, ok := c[d]; ok {
		return r, nil
	}
	parent := filepath.Dir(d)
	var r string
	if parent == d || !filepath.IsAbs(d) {
		var err error
		if r, err = realDir(d); err != nil {
			return "", err
		}
	} else {
		rp, err := c.dir(parent)
		if err != nil {
			return "", err
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return "", err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if r, err = realDir(d); err != nil {
				return "", err
			}
		case !fi.IsDir():
			return "", fmt.Errorf("%s is not a directory", d)
		default:
			r = filepath.Join(rp, filepath.Base(d))
		}
	}
	c[d] = r
	return r, nil
}

func realDir(d string) (string, error) {
	dir, err := filepath.EvalSymlinks(d)
	if err != nil {
		return "", err
	}
	return filepath.Abs(dir)
}

func (p *Plan) rootOf(path string) (root, bool) {
	for _, r := range p.roots {
		if p.inRoot(r, path) == nil {
			return r, true
		}
	}
	return root{}, false
}

// rotationsOf plans the rotated files of a session that stays when they are
// older than the cutoff.
func (p *Plan) rotationsOf(s *session.Session, cutoff time.Time, reason string, broken []string) *Item {
	old := oldRotations(s, cutoff)
	if len(old) == 0 {
		return nil
	}
	r, ok := p.rootOf(s.Main)
	if !ok {
		p.Skipped = append(p.Skipped, Skip{Agent: s.Agent, ID: s.ID, Main: s.Main,
			Reason: rotationsKept(len(old)) + ": not under a root given"})
		return nil
	}
	it := &Item{Agent: s.Agent, ID: s.ID, Project: s.Project, Main: s.Main, Root: s.Root,
		Updated: s.Updated(), Reason: reason, Status: StatusPlanned, root: r}
	for _, f := range old {
		if err := p.addFile(it, f.Path); err != nil {
			p.Skipped = append(p.Skipped, Skip{Agent: s.Agent, ID: s.ID, Main: s.Main, Reason: err.Error()})
			return nil
		}
	}
	return it
}

func keepReason(keep int) string {
	if keep == 1 {
		return "the newest of its project (--keep 1)"
	}
	return fmt.Sprintf("one of the %d newest of its project (--keep %d)", keep, keep)
}

func rotationsKept(n int) string {
	if n == 1 {
		return "1 rotated file kept"
	}
	return fmt.Sprintf("%d rotated files kept", n)
}

// oldRotations are the rotated files of s last changed before cutoff.
func oldRotations(s *session.Session, cutoff time.Time) []session.File {
	var old []session.File
	for _, f := range s.FilesWithRole(session.FileRotation) {
		if f.ModTime.Before(cutoff) {
			old = append(old, f)
		}
	}
	return old
}

// Retention is implemented by the homes of agents whose client removes its
// own sessions after a period set in its store (Claude Code's
// cleanupPeriodDays). Without --older-than, cleanup uses that period.
type Retention interface {
	// RetentionDays reads the period set for the store at root: days (0
	// when none is set), where it was set, in words, and a warning when the
	// setting could not be read.
	RetentionDays(root string) (days int, source, warning string)
}

type retention struct {
	days            int
	source, warning string
}

// StoreRecognizer is implemented by homes that recognise their agent's
// store from a directory's name and layout.
type StoreRecognizer interface {
	StoreVote(dir string) session.Vote
}

// GuessAgent names the agent whose store a directory is, from its name and
// layout, or returns "" (discovery then detects each file).
func GuessAgent(dir string) session.Agent {
	var best session.Agent
	bestVote := session.NoVote
	for _, h := range session.Homes() {
		if sr, ok := h.(StoreRecognizer); ok {
			if v := sr.StoreVote(dir); v > bestVote {
				best, bestVote = h.Agent(), v
			}
		}
	}
	return best
}

// FormatAge prints a duration in the units --older-than accepts (30d, 2w,
// 12h).
func FormatAge(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%(7*24*time.Hour) == 0:
		return fmt.Sprintf("%dw", d/(7*24*time.Hour))
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// ParseSize reads a size: a number with an optional unit K, M, G, T (powers
// of 1024; KB/KiB/K are the same), e.g. 20G, 500M, 1.5T.
func ParseSize(s string) (int64, error) {
	orig := s
	s = strings.TrimSpace(strings.ToUpper(s))
	s = strings.TrimSuffix(strings.TrimSuffix(s, "B"), "I")
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("invalid size %q (use e.g. 20G, 500M)", orig)
	}
	return int64(f * float64(mult)), nil
}

// FormatSize prints bytes with a binary unit (20G → "20.0 GiB").
func FormatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
