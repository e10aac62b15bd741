package cleanup

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

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/trash"
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
	// Trash, when not nil, receives what would be removed: each item's
	// files are moved into one trash entry (Item.Trash) instead of being
	// unlinked, through the same handles and after the same checks.
	Trash *trash.Trash
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
	// RemovedLeftovers counts the leftovers of interrupted rewrites removed.
	RemovedLeftovers     int   `json:"removed_leftovers"`
	RemovedLeftoverBytes int64 `json:"removed_leftover_bytes"`
	// TrashDir is set when the files were moved into this trash rather
	// than removed (leftovers of interrupted rewrites are still removed:
	// they are never the only copy of anything).
	TrashDir string `json:"trash_dir,omitempty"`
}

// storeDirs are the agents' own folders: never removed even when empty.
var storeDirs = map[string]bool{
	"projects": true, "sessions": true, "archived_sessions": true, "imported_sessions": true,
	"file-history": true, "session-env": true,
}

// Apply removes what the plan lists, item by item. Before touching an item
// it takes the session's lock and re-checks every file: still inside its
// root, still a regular file, the same inode, size and mtime as when
// planned, not changed in the last Quiet, not open for writing; and no new
// file appeared in the session's directories. An item that fails a check is
// refused whole; nothing of it is removed. Then the emptied directories are
// removed and the side files updated. Statuses are recorded in the plan.
//
// Every check and every removal goes through directory handles (pkg/fsroot):
// the root is opened once and compared with the root that was planned, and
// each directory below it is opened component by component without
// following a symlink; files are then checked with fstatat and removed with
// unlinkat on the handle. A directory on the path swapped for a symlink
// between the check and the unlink can therefore not redirect the unlink
// out of the root: the swap makes the open fail, or comes after it and
// changes nothing the handle names.
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
	if opt.Trash != nil {
		res.TrashDir = opt.Trash.Path()
	}
	roots := rootDirs{}
	defer roots.close()
	p.applyLeftovers(ctx, opt, roots, &res)
	items := append(append([]*Item{}, p.Sessions...), p.Rotations...)
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			it.Status = StatusRefused
			it.Error = "not started: " + err.Error()
			res.Refused++
			continue
		}
		err := p.applyItem(it, opt, writers, roots)
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
			res.RemovedDirs += p.removeDirs(it, roots)
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

// rootDirs holds one open handle per root for the whole Apply.
type rootDirs map[string]*rootDir

type rootDir struct {
	dir *fsroot.Dir
	err error
}

// open opens the root as it was planned: its real path, which must still be
// the same directory (device and inode) as at planning time.
func (rd rootDirs) open(r root) (*fsroot.Dir, error) {
	if h, ok := rd[r.real]; ok {
		return h.dir, h.err
	}
	h := &rootDir{}
	rd[r.real] = h
	d, err := fsroot.OpenDir(r.real)
	if err != nil {
		h.err = refuse(safety.ErrChanged, r.path, "the root cannot be opened again (%v); nothing removed", err)
		return nil, h.err
	}
	info, err := d.Stat()
	if err == nil && (info.Dev != r.key.Dev || info.Ino != r.key.Ino) {
		err = errors.New("it is another directory than when the plan was made")
	}
	if err != nil {
		d.Close()
		h.err = refuse(safety.ErrChanged, r.path, "%v; nothing removed", err)
		return nil, h.err
	}
	h.dir = d
	return d, nil
}

func (rd rootDirs) close() {
	for _, h := range rd {
		h.dir.Close()
	}
}

// handles opens the directories of one item below its root, each once.
type handles struct {
	root  root
	top   *fsroot.Dir
	dirs  map[string]*fsroot.Dir
	roots rootDirs
}

func newHandles(r root, roots rootDirs) *handles {
	return &handles{root: r, roots: roots, dirs: map[string]*fsroot.Dir{}}
}

// dir opens directory d (a path as planned: under the root's path or its
// real path) through the root's handle, without following any symlink
// below the root.
func (h *handles) dir(d string) (*fsroot.Dir, error) {
	if x, ok := h.dirs[d]; ok {
		return x, nil
	}
	if h.top == nil {
		top, err := h.roots.open(h.root)
		if err != nil {
			return nil, err
		}
		h.top = top
	}
	rel, err := h.root.rel(d)
	if err != nil {
		return nil, err
	}
	x, err := h.top.OpenDir(rel)
	if err != nil {
		if errors.Is(err, fsroot.ErrSymlink) {
			return nil, refuse(safety.ErrChanged, d, "a directory on its path was replaced by a symlink since the plan was made "+
				"(it could lead outside the root %s); nothing removed", h.root.path)
		}
		return nil, err
	}
	h.dirs[d] = x
	return x, nil
}

func (h *handles) close() {
	for _, x := range h.dirs {
		x.Close()
	}
}

// rel is d relative to the root, which d must be lexically inside (or be).
func (r root) rel(d string) (string, error) {
	for _, base := range []string{r.path, r.real} {
		rel, err := filepath.Rel(base, d)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return rel, nil
		}
	}
	return "", fmt.Errorf("%s is outside the root %s", d, r.path)
}

func (p *Plan) applyItem(it *Item, opt ApplyOptions, writers map[FileKey]string, roots rootDirs) error {
	h := newHandles(it.root, roots)
	defer h.close()
	mainDir, err := h.dir(filepath.Dir(it.Main))
	if err != nil {
		if isRefusal(err) {
			return err
		}
		return refuse(safety.ErrChanged, it.Main, "its directory cannot be opened again since the plan was made (%v); nothing removed", err)
	}
	// the session's own lock keeps other sessctl commands out meanwhile
	base := filepath.Base(it.Main)
	lockName := safety.LockName(base)
	_, lockErr := mainDir.Lstat(lockName)
	lockExisted := lockErr == nil
	lock, err := safety.LockIn(mainDir, base, it.Main)
	if err != nil {
		return err
	}
	defer func() {
		if !lockExisted {
			// the lock file this run created goes, while still held (an
			// existing one belongs to the session and is in Files)
			mainDir.Remove(lockName)
		}
		lock.Unlock()
	}()

	if err := p.verify(it, opt, writers, h, mainDir.Join(lockName)); err != nil {
		return err
	}
	if opt.Trash != nil {
		return p.trashItem(it, opt, h)
	}
	for _, f := range it.Files {
		d, err := h.dir(filepath.Dir(f.Path))
		if err != nil {
			return err
		}
		name := filepath.Base(f.Path)
		// the last look, right before the unlink, through the same handle
		if err := safety.CheckUnchangedAt(d, name, f.id); err != nil {
			return err
		}
		if err := d.Remove(name); err != nil {
			return fmt.Errorf("remove %s: %w", f.Path, err)
		}
		it.RemovedFiles++
		it.RemovedBytes += f.Size
	}
	return nil
}

// trashItem moves the item's files, checked by verify, into one trash
// entry, each through the handle of its directory (Entry.Move looks at it
// once more right before the rename). If one cannot be moved, those moved
// already are put back: the item is refused or failed whole, as it would
// be if a check had failed.
func (p *Plan) trashItem(it *Item, opt ApplyOptions, h *handles) error {
	kind := trash.KindSession
	if !it.whole {
		kind = trash.KindRotations
	}
	planned := make([]trash.Planned, len(it.Files))
	for i, f := range it.Files {
		rel, err := it.root.rel(f.Path)
		if err != nil {
			return err
		}
		d, err := h.dir(filepath.Dir(f.Path))
		if err != nil {
			return err
		}
		info, err := d.Lstat(filepath.Base(f.Path))
		if err != nil {
			return refuse(safety.ErrChanged, f.Path, "cannot stat it again (%v); nothing of the session moved", err)
		}
		planned[i] = trash.Planned{Path: f.Path, Rel: rel, Size: f.Size, Mode: info.Mode.Perm(), ModTime: f.ModTime}
	}
	e, err := opt.Trash.Begin(trash.Meta{Kind: kind, Agent: string(it.Agent), SessionID: it.ID, Main: it.Main,
		Root: it.root.path, Now: opt.Now()}, planned)
	if err != nil {
		return fmt.Errorf("trash: %w", err)
	}
	for i, f := range it.Files {
		d, err := h.dir(filepath.Dir(f.Path))
		if err == nil {
			err = e.Move(i, d, filepath.Base(f.Path), f.id)
		}
		if err != nil {
			if rerr := e.Rollback(); rerr != nil {
				return errors.Join(fmt.Errorf("move %s to the trash: %w", f.Path, err), rerr)
			}
			return err
		}
	}
	if err := e.Finish(); err != nil {
		// every file is in the entry; only its final manifest is missing
		// (the first one, written before the move, lists them all)
		it.Trash = e.ID()
		return fmt.Errorf("trash entry %s: %w", e.ID(), err)
	}
	it.Trash = e.ID()
	for _, f := range it.Files {
		it.RemovedFiles++
		it.RemovedBytes += f.Size
	}
	return nil
}

// verify re-checks every file of the item and the session's directories.
func (p *Plan) verify(it *Item, opt ApplyOptions, writers map[FileKey]string, h *handles, lockPath string) error {
	now := opt.Now()
	planned := map[string]bool{lockPath: true, safety.LockPath(it.Main): true}
	for _, f := range it.Files {
		planned[f.Path] = true
		d, err := h.dir(filepath.Dir(f.Path))
		if err != nil {
			if isRefusal(err) {
				return err
			}
			return refuse(safety.ErrChanged, f.Path, "cannot open its directory again (%v); nothing of the session removed", err)
		}
		info, err := d.Lstat(filepath.Base(f.Path))
		if err != nil {
			return refuse(safety.ErrChanged, f.Path, "cannot stat it again (%v); nothing of the session removed", err)
		}
		if !info.Mode.IsRegular() {
			return refuse(safety.ErrChanged, f.Path, "is no longer a regular file; nothing of the session removed")
		}
		if id := safety.IdentityOf(info); !id.Same(f.id) {
			return refuse(safety.ErrChanged, f.Path, "changed since the plan was made (size %d → %d); nothing of the session removed", f.Size, info.Size)
		}
		if age := now.Sub(info.ModTime); age < opt.Quiet && age > -time.Minute {
			return refuse(safety.ErrLive, f.Path, "modified %s ago: an agent may still be writing it; nothing of the session removed", age.Round(time.Second))
		}
		if w, ok := writers[FileKey{Dev: info.Dev, Ino: info.Ino}]; ok {
			return refuse(safety.ErrLive, f.Path, "open for writing by %s; nothing of the session removed", w)
		}
	}
	for _, top := range it.Dirs {
		d, err := h.dir(top)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := newFiles(d, planned); err != nil {
			return err
		}
	}
	return nil
}

// newFiles refuses when a regular file below d is not in planned. It walks
// through handles and never into a symlink.
func newFiles(d *fsroot.Dir, planned map[string]bool) error {
	ents, err := d.ReadDir()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		switch {
		case e.Type().IsRegular():
			if q := d.Join(e.Name()); !planned[q] {
				return refuse(safety.ErrChanged, q, "appeared in the session since the plan was made; nothing of the session removed")
			}
		case e.IsDir():
			sub, err := d.OpenDir(e.Name())
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			err = newFiles(sub, planned)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// removeDirs removes the item's directories when empty, then the parents
// left empty, up to the root and never the agents' own store folders. Each
// is removed with rmdir through its parent's handle, so only an empty
// directory inside the root can go.
func (p *Plan) removeDirs(it *Item, roots rootDirs) int {
	h := newHandles(it.root, roots)
	defer h.close()
	n := 0
	rm := func(d string) bool {
		if d == it.root.real || d == it.root.path || storeDirs[filepath.Base(d)] {
			return false
		}
		if rel, err := it.root.rel(d); err != nil || rel == "." {
			return false
		}
		parent, err := h.dir(filepath.Dir(d))
		if err != nil {
			return false
		}
		name := filepath.Base(d)
		if info, err := parent.Lstat(name); err != nil || !info.Mode.IsDir() {
			return false
		}
		if err := parent.RemoveDir(name); err != nil {
			return false // not empty (something unplanned is in it), or not ours to remove
		}
		n++
		return true
	}
	parents := map[string]bool{}
	for _, top := range it.Dirs {
		// the directory and everything below it that is empty, deepest first
		var sub []string
		if d, err := h.dir(top); err == nil {
			sub = append(subDirs(d, nil), top)
		}
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

// subDirs appends the paths of the directories below d (through handles,
// never into a symlink).
func subDirs(d *fsroot.Dir, out []string) []string {
	ents, err := d.ReadDir()
	if err != nil {
		return out
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub, err := d.OpenDir(e.Name())
		if err != nil {
			continue
		}
		out = append(subDirs(sub, out), d.Join(e.Name()))
		sub.Close()
	}
	return out
}

// FileKey identifies a file by device and inode.
type FileKey = safety.FileKey

func keyOf(fi os.FileInfo) FileKey { return safety.KeyOf(fi) }
