package cleanup

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// Leftover is a file that an interrupted rewrite left in a store (a temp
// file, an empty rotation placeholder, a rotation that is a second name of
// the live file; see rotation.Leftovers). Stale ones are planned for
// removal; the others are listed with the reason they stay.
type Leftover struct {
	Agent session.Agent `json:"agent,omitempty"`
	// Main is the session file it belongs to ("" for a temp file of a file
	// that is not a session, or no longer exists).
	Main string `json:"main,omitempty"`
	rotation.Leftover
	// Status: planned, removed, refused, failed, or skipped (not provably
	// stale: left alone).
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`

	root root
	dir  string
}

// dirSessions are the sessions in scope in one directory (a
// rotation.Sessions).
type dirSessions struct {
	r  root
	by map[string]*session.Session // by file name
}

func (ds *dirSessions) AgentOf(name string) (session.Agent, bool) {
	if s := ds.by[name]; s != nil {
		return s.Agent, true
	}
	return "", false
}

// StatusSkipped marks a leftover that is not provably stale.
const StatusSkipped = "skipped"

// PlannedLeftovers counts the leftovers the plan would remove, and their
// bytes.
func (p *Plan) PlannedLeftovers() (n int, bytes int64) {
	for _, l := range p.Leftovers {
		if l.Status != StatusSkipped {
			n++
			bytes += l.Size
		}
	}
	return n, bytes
}

// findLeftovers looks in the directory of every session in scope, and in
// each root, for leftovers of interrupted rewrites: one directory listing
// per directory (a Claude project directory holds thousands of sessions).
// Files already in the plan (a Kimi session directory goes whole) are not
// listed again. It only reads: whether another sessctl works on a session
// is seen from its lock without taking (or creating) it.
func (p *Plan) findLeftovers(ss []*session.Session, agent session.Agent, now time.Time, quiet time.Duration) {
	p.Leftovers = []*Leftover{}
	planned := map[string]bool{}
	for _, it := range append(append([]*Item{}, p.Sessions...), p.Rotations...) {
		for _, f := range it.Files {
			planned[f.Path] = true
		}
	}
	dirs := map[string]*dirSessions{}
	for _, s := range ss {
		if agent != "" && s.Agent != agent {
			continue
		}
		dir := filepath.Dir(s.Main)
		ds := dirs[dir]
		if ds == nil {
			r, ok := p.rootOf(s.Main)
			if !ok {
				continue
			}
			ds = &dirSessions{r: r, by: make(map[string]*session.Session, 1)}
			dirs[dir] = ds
		}
		ds.by[filepath.Base(s.Main)] = s
	}
	for _, r := range p.roots {
		if dirs[r.real] == nil && dirs[r.path] == nil {
			dirs[r.path] = &dirSessions{r: r, by: map[string]*session.Session{}}
		}
	}
	roots := rootDirs{}
	defer roots.close()
	// the directories in path order: siblings (Kimi's sessions/<hash>/<id>)
	// are opened from their parent's handle, kept for the next one
	sib := &siblings{roots: roots}
	defer sib.close()
	for _, dir := range sortedKeys(dirs) {
		ds := dirs[dir]
		d, err := sib.open(ds.r, dir)
		if err != nil {
			continue
		}
		ls, err := rotation.ScanDir(d, ds, func(base string) bool { return !safety.Held(d, base) }, now, quiet)
		d.Close()
		if err != nil {
			continue
		}
		for _, l := range ls {
			if planned[l.Path] {
				continue
			}
			item := &Leftover{Leftover: l, Status: StatusPlanned, root: ds.r, dir: dir}
			if s := ds.by[l.Base()]; s != nil {
				item.Agent, item.Main = s.Agent, s.Main
			}
			if !l.Stale {
				item.Status = StatusSkipped
			}
			p.Leftovers = append(p.Leftovers, item)
		}
	}
}

// siblings opens directories below their roots (never through a symlink),
// keeping the handle of the last parent: one openat for each of many
// sibling directories instead of a walk from the root for each.
type siblings struct {
	roots      rootDirs
	parent     *fsroot.Dir
	parentPath string
}

func (sb *siblings) open(r root, dir string) (*fsroot.Dir, error) {
	top, err := sb.roots.open(r)
	if err != nil {
		return nil, err
	}
	rel, err := r.rel(dir)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return top.OpenDir(".")
	}
	if up := filepath.Dir(dir); sb.parent == nil || sb.parentPath != up {
		sb.close()
		if sb.parent, err = top.OpenDir(filepath.Dir(rel)); err != nil {
			return nil, err
		}
		sb.parentPath = up
	}
	return sb.parent.OpenDir(filepath.Base(dir))
}

func (sb *siblings) close() {
	sb.parent.Close()
	sb.parent, sb.parentPath = nil, ""
}

// applyLeftovers removes the stale leftovers of the plan, first of all (a
// session removed whole after them then has no unplanned file in its way).
// Each session's are removed under its lock, after listing them again:
// only what is still stale and still the file that was planned goes.
func (p *Plan) applyLeftovers(ctx context.Context, opt ApplyOptions, roots rootDirs, res *Result) {
	type group struct {
		r     root
		dir   string
		main  string
		agent session.Agent
		items []*Leftover
	}
	var order []string
	groups := map[string]*group{}
	for _, l := range p.Leftovers {
		if l.Status != StatusPlanned {
			continue
		}
		k := l.dir + "\x00" + l.Main
		g, ok := groups[k]
		if !ok {
			g = &group{r: l.root, dir: l.dir, main: l.Main, agent: l.Agent}
			groups[k] = g
			order = append(order, k)
		}
		g.items = append(g.items, l)
	}
	for _, k := range order {
		g := groups[k]
		if ctx.Err() != nil {
			for _, l := range g.items {
				l.Status, l.Error = StatusRefused, "not started: "+ctx.Err().Error()
			}
			continue
		}
		h := newHandles(g.r, roots)
		err := p.applyLeftoverGroup(h, g.dir, g.main, g.agent, g.items, opt)
		h.close()
		for _, l := range g.items {
			switch {
			case l.Status == StatusRemoved:
				res.RemovedLeftovers++
				res.RemovedLeftoverBytes += l.Size
			case err != nil && isRefusal(err):
				l.Status, l.Error = StatusRefused, err.Error()
				res.Refused++
			case err != nil:
				l.Status, l.Error = StatusFailed, err.Error()
				res.Failed++
			case l.Status == StatusPlanned:
				l.Status, l.Error = StatusSkipped, "no longer stale, or changed since the plan was made; left alone"
			}
		}
	}
}

func (p *Plan) applyLeftoverGroup(h *handles, dir, main string, agent session.Agent, items []*Leftover, opt ApplyOptions) error {
	d, err := h.dir(dir)
	if err != nil {
		return err
	}
	var fresh []rotation.Leftover
	if main != "" {
		base := filepath.Base(main)
		lockName := safety.LockName(base)
		_, lockErr := d.Lstat(lockName)
		lock, err := safety.LockIn(d, base, main)
		if err != nil {
			return err
		}
		defer func() {
			if lockErr != nil {
				d.Remove(lockName) // the lock file this run created
			}
			lock.Unlock()
		}()
		if fresh, err = rotation.Leftovers(d, base, agent, true, opt.Now(), opt.Quiet); err != nil {
			return err
		}
	} else if fresh, err = rotation.ScanDir(d, rotation.Bases{}, func(string) bool { return false }, opt.Now(), opt.Quiet); err != nil {
		return err
	}
	var todo []rotation.Leftover
	byName := map[string]*Leftover{}
	for _, l := range items {
		byName[l.Name()] = l
	}
	for _, f := range fresh {
		if l, ok := byName[f.Name()]; ok && f.Stale && f.Same(l.Leftover) {
			todo = append(todo, f)
		}
	}
	done, err := rotation.RemoveLeftovers(d, todo)
	for _, f := range done {
		byName[f.Name()].Status = StatusRemoved
	}
	if err != nil && !errors.Is(err, fsroot.ErrNotRegular) {
		return err
	}
	return nil
}
