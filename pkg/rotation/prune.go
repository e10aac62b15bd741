package rotation

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// PruneResult is what Prune did to one session file.
type PruneResult struct {
	Deleted []Rotation // deleted (or, on a dry run, to delete)
	Kept    int
	// Leftovers are stale leftovers of interrupted rewrites removed under
	// the session's lock (never on a dry run).
	Leftovers []Leftover
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
	base := filepath.Base(main)
	res := &PruneResult{}
	if !dryRun {
		lock, err := safety.LockIn(dir, base, main)
		if err != nil {
			return nil, err
		}
		defer lock.Unlock()
		if res.Leftovers, err = RemoveStale(dir, base, agent, now); err != nil {
			return res, err
		}
	}
	rs, err := ListIn(dir, base, agent)
	if err != nil {
		return res, err
	}
	if len(rs) <= keep {
		res.Kept = len(rs)
		return res, nil
	}
	res.Kept = keep
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
