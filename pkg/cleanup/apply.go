package cleanup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/sessctl/sessctl/pkg/safety"
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// Now is the clock for the liveness check (time.Now when nil).
	Now func() time.Time
	// Quiet is how long a file must have been left alone
	// (safety.DefaultQuiet when 0).
	Quiet time.Duration
	// Writers lists the files open for writing, by identity; nil scans
	// /proc once (tests inject their own).
	Writers func() map[FileKey]string
}

// Result counts what Apply did.
type Result struct {
	RemovedSessions  int   `json:"removed_sessions"`
	RemovedRotations int   `json:"removed_rotation_files"`
	RemovedFiles     int   `json:"removed_files"`
	RemovedBytes     int64 `json:"removed_bytes"`
	RemovedDirs      int   `json:"removed_dirs"`
	Refused          int   `json:"refused"`
	Failed           int   `json:"failed"`
}

// storeDirs are the agents' own folders: never removed even when empty.
var storeDirs = map[string]bool{
	"projects": true, "sessions": true, "archived_sessions": true, "imported_sessions": true,
	"file-history": true, "session-env": true,
}

// Apply removes what the plan lists, item by item. Before touching an item
// it takes the session's lock and re-checks every file: still inside its
// root (symlinks resolved), still a regular file, the same inode, size and
// mtime as when planned, not changed in the last Quiet, not open for
// writing; and no new file appeared in the session's directories. An item
// that fails a check is refused whole; nothing of it is removed. Then the
// emptied directories are removed and the side files updated. Statuses are
// recorded in the plan.
func Apply(ctx context.Context, p *Plan, opt ApplyOptions) Result {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Quiet == 0 {
		opt.Quiet = safety.DefaultQuiet
	}
	var writers map[FileKey]string
	if opt.Writers != nil {
		writers = opt.Writers()
	} else {
		writers = OpenWriters()
	}
	var res Result
	items := append(append([]*Item{}, p.Sessions...), p.Rotations...)
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			it.Status = StatusRefused
			it.Error = "not started: " + err.Error()
			res.Refused++
			continue
		}
		err := p.applyItem(it, opt, writers)
		it.Error, it.err = "", err
		switch {
		case err == nil:
			it.Status = StatusRemoved
			if it.whole {
				res.RemovedSessions++
			} else {
				res.RemovedRotations += it.RemovedFiles
			}
		case isRefusal(err):
			it.Status = StatusRefused
			it.Error = err.Error()
			res.Refused++
		default:
			it.Status = StatusFailed
			it.Error = err.Error()
			res.Failed++
		}
		res.RemovedFiles += it.RemovedFiles
		res.RemovedBytes += it.RemovedBytes
	}
	for _, it := range p.Sessions {
		if it.Status == StatusRemoved {
			res.RemovedDirs += p.removeDirs(it)
		}
	}
	p.applySide()
	for _, ref := range p.Side {
		if ref.Status == StatusFailed {
			res.Failed++
		}
	}
	return res
}

func isRefusal(err error) bool {
	var r *safety.RefusalError
	return errors.As(err, &r)
}

func refuse(class error, path, format string, a ...any) error {
	return &safety.RefusalError{Path: path, Reason: fmt.Sprintf(format, a...), Class: class}
}

func (p *Plan) applyItem(it *Item, opt ApplyOptions, writers map[FileKey]string) error {
	// the session's own lock keeps other sessctl commands out meanwhile
	lockPath := safety.LockPath(it.Main)
	_, lockErr := os.Lstat(lockPath)
	lockExisted := lockErr == nil
	if _, err := os.Lstat(filepath.Dir(it.Main)); err != nil {
		return refuse(safety.ErrChanged, it.Main, "its directory is gone since the plan was made; nothing removed")
	}
	lock, err := safety.LockFile(it.Main)
	if err != nil {
		return err
	}
	defer func() {
		if !lockExisted {
			// the lock file this run created goes, while still held (an
			// existing one belongs to the session and is in Files)
			os.Remove(lockPath)
		}
		lock.Unlock()
	}()

	if err := p.verify(it, opt, writers, lockPath); err != nil {
		return err
	}
	for _, f := range it.Files {
		// the last look, right before the unlink
		if err := safety.CheckUnchanged(f.Path, f.id); err != nil {
			return err
		}
		if err := os.Remove(f.Path); err != nil {
			return fmt.Errorf("remove %s: %w", f.Path, err)
		}
		it.RemovedFiles++
		it.RemovedBytes += f.Size
	}
	return nil
}

// verify re-checks every file of the item and the session's directories.
func (p *Plan) verify(it *Item, opt ApplyOptions, writers map[FileKey]string, lockPath string) error {
	now := opt.Now()
	planned := map[string]bool{lockPath: true}
	real := realCache{} // resolved afresh for each session, right before its removal
	for _, f := range it.Files {
		planned[f.Path] = true
		if err := real.inRoot(it.root, f.Path); err != nil {
			return refuse(safety.ErrChanged, f.Path, "%v; nothing removed", err)
		}
		fi, err := os.Lstat(f.Path)
		if err != nil {
			return refuse(safety.ErrChanged, f.Path, "cannot stat it again (%v); nothing of the session removed", err)
		}
		if !fi.Mode().IsRegular() {
			return refuse(safety.ErrChanged, f.Path, "is no longer a regular file; nothing of the session removed")
		}
		if err := safety.CheckUnchanged(f.Path, f.id); err != nil {
			return refuse(safety.ErrChanged, f.Path, "changed since the plan was made (size %d → %d); nothing of the session removed", f.Size, fi.Size())
		}
		if age := now.Sub(fi.ModTime()); age < opt.Quiet && age > -time.Minute {
			return refuse(safety.ErrLive, f.Path, "modified %s ago: an agent may still be writing it; nothing of the session removed", age.Round(time.Second))
		}
		if w, ok := writers[keyOf(fi)]; ok {
			return refuse(safety.ErrLive, f.Path, "open for writing by %s; nothing of the session removed", w)
		}
	}
	for _, d := range it.Dirs {
		err := filepath.WalkDir(d, func(q string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if e.Type().IsRegular() && !planned[q] {
				return refuse(safety.ErrChanged, q, "appeared in the session since the plan was made; nothing of the session removed")
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// removeDirs removes the item's directories when empty, then the parents
// left empty, up to the root and never the agents' own store folders.
func (p *Plan) removeDirs(it *Item) int {
	n := 0
	rm := func(d string) bool {
		if d == it.root.real || d == it.root.path || storeDirs[filepath.Base(d)] {
			return false
		}
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || inRoot(it.root, d) != nil {
			return false
		}
		if err := os.Remove(d); err != nil {
			return false // not empty (something unplanned is in it), or not ours to remove
		}
		n++
		return true
	}
	parents := map[string]bool{}
	for _, top := range it.Dirs {
		// the directory and everything below it that is empty, deepest first
		var sub []string
		filepath.WalkDir(top, func(q string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				sub = append(sub, q)
			}
			return nil
		})
		sort.SliceStable(sub, func(i, j int) bool { return depth(sub[i]) > depth(sub[j]) })
		for _, d := range sub {
			rm(d)
		}
		parents[filepath.Dir(top)] = true
	}
	for _, f := range it.Files {
		parents[filepath.Dir(f.Path)] = true
	}
	for _, d := range sortedKeys(parents) {
		for d != "" && rm(d) {
			d = filepath.Dir(d)
		}
	}
	return n
}

// FileKey identifies a file by device and inode.
type FileKey = safety.FileKey

func keyOf(fi os.FileInfo) FileKey { return safety.KeyOf(fi) }
