package rotation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/trash"
)

// PruneResult is what Prune did to one session file.
type PruneResult struct {
	Deleted []Rotation // deleted (or, on a dry run, to delete)
	Kept    int
	// Leftovers are stale leftovers of interrupted rewrites removed under
	// the session's lock (never on a dry run).
	Leftovers []Leftover
	// Trash is the trash entry the deleted rotations were moved into
	// (PruneDirTo with a trash), "" when they were unlinked.
	Trash string
}

// Prune deletes all but the newest keep rotations of the session file main.
//
// The directory the user named (anchor: a store root, or main's own
// directory) is opened as given; main's directory is opened below it
// without following a symlink, and everything else is done through that
// handle: the listing, the session's lock, and each unlink, which happens
// only if the rotation is still the file that was listed. A directory on
// the path swapped for a symlink cannot make Prune delete files elsewhere.
// Under the lock, stale leftovers of interrupted rewrites are removed first.
func Prune(anchor, main string, agent session.Agent, keep int, dryRun bool, now time.Time) (*PruneResult, error) {
	dir, err := OpenSessionDir(anchor, main)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return prune(dir, nil, anchor, PruneTarget{Main: main, Agent: agent}, keep, dryRun, now, nil)
}

// PruneTarget is one session file for PruneDir.
type PruneTarget struct {
	Main  string
	Agent session.Agent
	// ID is the session's id, recorded in a trash entry (the file's name
	// when empty).
	ID string
}

// PruneDir is Prune for session files that share one directory: the
// directory is opened and listed once for all of them, not once or twice
// per session (prune-rotations over 1,000 sessions in one directory took
// 11.6 s, over 20,000 more than 10 minutes). The listing is taken before
// each session's lock: a rotation made after it is not seen and is kept
// (the newest are kept), and a rotation or leftover listed that has gone or
// changed since is left alone, as Remove and RemoveLeftovers check each
// file against what was listed. Results and errors are by target; once ctx
// is done the targets not yet pruned get ctx.Err().
func PruneDir(ctx context.Context, anchor string, ts []PruneTarget, keep int, dryRun bool, now time.Time) ([]*PruneResult, []error) {
	return PruneDirTo(ctx, anchor, ts, keep, dryRun, now, nil)
}

// PruneDirTo is PruneDir that, with a trash, moves each session's pruned
// rotations into one trash entry instead of unlinking them, through the
// same directory handle and after the same check that each is still the
// file listed.
func PruneDirTo(ctx context.Context, anchor string, ts []PruneTarget, keep int, dryRun bool, now time.Time, tr *trash.Trash) ([]*PruneResult, []error) {
	res, errs := make([]*PruneResult, len(ts)), make([]error, len(ts))
	if len(ts) == 0 {
		return res, errs
	}
	dir, err := OpenSessionDir(anchor, ts[0].Main)
	var ents []fs.DirEntry
	if err == nil {
		defer dir.Close()
		ents, err = dir.ReadDir()
	}
	// each session is given only the entries that can be its rotations or
	// leftovers (looking at every entry for every session was still
	// quadratic: 107 s for 20,000 sessions in one directory)
	var parts map[string][]fs.DirEntry
	var shared []fs.DirEntry
	if err == nil {
		parts, shared = partition(ents)
	}
	for i, t := range ts {
		switch {
		case err != nil:
			errs[i] = err
		case ctx.Err() != nil:
			errs[i] = ctx.Err()
		case filepath.Dir(t.Main) != filepath.Dir(ts[0].Main):
			errs[i] = fmt.Errorf("%s: not in the directory of %s (a bug in the caller)", t.Main, ts[0].Main)
		default:
			base := filepath.Base(t.Main)
			mine := append(append(make([]fs.DirEntry, 0, len(parts[base])+len(shared)+1), parts[base]...), shared...)
			res[i], errs[i] = prune(dir, mine, anchor, t, keep, dryRun, now, tr)
		}
	}
	return res, errs
}

// partition sorts the entries of a directory listing by the session file
// they can belong to: a temp file by the file it names, a rotation by the
// base any agent's naming or the "<file>.N" scheme gives it (a superset of
// what listEntries and scanEntries then match exactly). Hard-link temps,
// which name no file, can belong to any session: shared. Entries that can
// be nobody's rotation or leftover (session files, other files) are left
// out.
func partition(ents []fs.DirEntry) (parts map[string][]fs.DirEntry, shared []fs.DirEntry) {
	parts = map[string][]fs.DirEntry{}
	var namers []Namer
	for _, h := range session.Homes() {
		if nm, ok := h.(Namer); ok {
			namers = append(namers, nm)
		}
	}
	for _, e := range ents {
		name := e.Name()
		if target, _, ok := jsonl.ParseTempName(name); ok {
			if target == "" {
				shared = append(shared, e)
			} else {
				parts[target] = append(parts[target], e)
			}
			continue
		}
		seen := ""
		for _, nm := range namers {
			if b, _, ok := nm.RotationOf(name); ok && b != seen {
				parts[b] = append(parts[b], e)
				seen = b
			}
		}
		if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" && name[:i] != seen {
			parts[name[:i]] = append(parts[name[:i]], e)
		}
	}
	return parts, shared
}

// prune prunes main's rotations in dir, its directory; ents is a listing
// of dir already read, or nil to read it under the lock.
func prune(dir *fsroot.Dir, ents []fs.DirEntry, anchor string, t PruneTarget, keep int, dryRun bool, now time.Time, tr *trash.Trash) (*PruneResult, error) {
	main, agent := t.Main, t.Agent
	base := filepath.Base(main)
	res := &PruneResult{}
	if !dryRun {
		lock, err := safety.LockIn(dir, base, main)
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
	}
	if ents == nil {
		var err error
		if ents, err = dir.ReadDir(); err != nil {
			return res, err
		}
	}
	if !dryRun {
		var err error
		if res.Leftovers, err = removeStaleIn(dir, ents, base, agent, now); err != nil {
			return res, err
		}
	}
	rs, err := listEntries(dir, ents, base, agent)
	if err != nil {
		return res, err
	}
	if len(rs) <= keep {
		res.Kept = len(rs)
		return res, nil
	}
	res.Kept = keep
	if tr != nil && !dryRun {
		return pruneToTrash(dir, anchor, t, rs[:len(rs)-keep], res, tr, now)
	}
	var errs []error
	for _, r := range rs[:len(rs)-keep] {
		if !dryRun {
			if err := Remove(dir, r); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		res.Deleted = append(res.Deleted, r)
	}
	if len(res.Deleted) > 0 && !dryRun {
		dir.Sync()
	}
	return res, errors.Join(errs...)
}

// OpenSessionDir opens the directory of the session file main through
// anchor: anchor as the user named it (symlinks on its own path followed),
// then each directory from anchor down to main's without following a
// symlink. An anchor that is not a directory holding main (a session named
// by its file) stands for main's own directory.
func OpenSessionDir(anchor, main string) (*fsroot.Dir, error) {
	dirPath := filepath.Dir(main)
	rel := "."
	if fi, err := os.Stat(anchor); err == nil && fi.IsDir() {
		if r, err := filepath.Rel(anchor, dirPath); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r) {
			rel = r
		} else {
			anchor = dirPath
		}
	} else {
		anchor = dirPath
	}
	top, err := fsroot.OpenDir(anchor)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return top, nil
	}
	defer top.Close()
	d, err := top.OpenDir(rel)
	if errors.Is(err, fsroot.ErrSymlink) {
		return nil, &safety.RefusalError{Path: main, Class: safety.ErrChanged,
			Reason: "a directory on its path is now a symlink (sessctl never deletes through one); nothing was deleted"}
	}
	return d, err
}

// pruneToTrash moves the rotations rs of main (in dir) into one trash
// entry. A rotation that changed since it was listed, or cannot be moved,
// stays where it is, as Remove leaves it; the others go.
func pruneToTrash(dir *fsroot.Dir, anchor string, t PruneTarget, rs []Rotation, res *PruneResult, tr *trash.Trash, now time.Time) (*PruneResult, error) {
	main, id := t.Main, t.ID
	if id == "" {
		id = filepath.Base(main)
	}
	root, rel := trashRoot(anchor, main)
	planned := make([]trash.Planned, len(rs))
	for i, r := range rs {
		planned[i] = trash.Planned{Path: r.Path, Rel: filepath.Join(rel, filepath.Base(r.Path)), Size: r.Size,
			Mode: r.info.Mode.Perm(), ModTime: r.info.ModTime}
	}
	e, err := tr.Begin(trash.Meta{Kind: trash.KindRotations, Agent: string(t.Agent), SessionID: id,
		Main: main, Root: root, Now: now}, planned)
	if err != nil {
		return res, fmt.Errorf("trash: %w", err)
	}
	var errs []error
	for i, r := range rs {
		if err := e.Move(i, dir, filepath.Base(r.Path), safety.IdentityOf(r.info)); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Deleted = append(res.Deleted, r)
	}
	if e.Moved() > 0 {
		res.Trash = e.ID()
	}
	if err := e.Finish(); err != nil {
		errs = append(errs, fmt.Errorf("trash entry %s: %w", e.ID(), err))
	}
	dir.Sync()
	return res, errors.Join(errs...)
}

// trashRoot is the directory a trash entry of main's rotations is restored
// through, and main's directory relative to it: anchor when it is a
// directory holding main (a store root), else main's own directory (as
// OpenSessionDir opens them).
func trashRoot(anchor, main string) (root, rel string) {
	dirPath := filepath.Dir(main)
	if fi, err := os.Stat(anchor); err == nil && fi.IsDir() {
		if r, err := filepath.Rel(anchor, dirPath); err == nil && filepath.IsLocal(r) {
			return anchor, r
		}
	}
	return dirPath, "."
}
