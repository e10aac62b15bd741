package trash

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
)

// BlockedError refuses a restore: a file is where a trashed file would go
// (it appeared since the entry was made), or a directory on the way is a
// symlink. Nothing of the entry was restored.
type BlockedError struct {
	Path   string
	Reason string
}

func (e *BlockedError) Error() string {
	return e.Path + ": " + e.Reason + "; nothing of the entry was restored"
}

// Refusal marks the error as a safety refusal (exit code 3).
func (e *BlockedError) Refusal() bool { return true }

// lock keeps restore and empty of one trash apart.
func (t *Trash) lock() (*safety.Lock, error) {
	return safety.LockIn(t.dir, "trash", t.Path())
}

// Restore puts every file of entry id back where it was, through the
// handle of the entry's root and directories opened below it without
// following a symlink (missing ones are made again with their recorded
// mode). It first looks at every destination: if any file exists there
// now, or a directory on the way is a symlink, it refuses (a
// *BlockedError naming the path) and changes nothing. The files are then
// renamed back with RENAME_NOREPLACE, so a file that appears during the
// restore is not overwritten either: the files already put back return to
// the trash and the restore is refused. Files keep their inode (bytes, mode
// and mtime); across filesystems they are copied with their mode and mtime.
// When every file is back, the entry is removed.
func (t *Trash) Restore(id string) (*Manifest, error) {
	lk, err := t.lock()
	if err != nil {
		return nil, err
	}
	defer lk.Unlock()
	m, err := t.readManifest(id)
	if err != nil {
		return nil, err
	}
	ed, err := t.dir.OpenDir(id)
	if err != nil {
		return nil, err
	}
	defer ed.Close()
	files, err := ed.OpenDir(filesName)
	if err != nil {
		return nil, err
	}
	defer files.Close()

	// which files the entry holds (an incomplete entry may lack some: they
	// were never moved)
	var todo []File
	for _, f := range m.Files {
		info, err := files.Lstat(f.Stored)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !m.Complete:
			continue
		case err != nil:
			return nil, fmt.Errorf("trash entry %s: %s: %w", id, f.Path, err)
		case !info.Mode.IsRegular():
			return nil, fmt.Errorf("trash entry %s: %s is %s", id, files.Join(f.Stored), fsroot.Kind(info.Mode))
		}
		todo = append(todo, f)
	}

	root, err := fsroot.OpenDir(m.Root)
	if err != nil {
		return nil, fmt.Errorf("the entry's root cannot be opened (%w); nothing restored", err)
	}
	defer root.Close()
	dirs := &dirCache{root: root, base: m.Root, modes: map[string]fs.FileMode{}, open: map[string]*fsroot.Dir{}}
	defer dirs.close()
	for _, d := range m.Dirs {
		dirs.modes[d.Rel] = d.Mode
	}

	// look first, change nothing
	for _, f := range todo {
		d, err := dirs.existing(filepath.Dir(f.Rel))
		if err != nil {
			return nil, err
		}
		if d == nil {
			continue // its directory is gone: nothing can be in the way
		}
		if _, err := d.Lstat(filepath.Base(f.Rel)); err == nil {
			return nil, &BlockedError{Path: f.Path, Reason: "a file exists there now"}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}

	var back []placed
	undo := func() {
		for k := len(back) - 1; k >= 0; k-- {
			p := back[k]
			if err := moveFile(p.dir, p.name, files, p.stored); err == nil {
				p.dir.Sync()
			}
		}
		files.Sync()
		dirs.removeMade()
	}
	place := func(f File) error {
		d, err := dirs.make(filepath.Dir(f.Rel))
		if err != nil {
			return err
		}
		name := filepath.Base(f.Rel)
		if err := moveFile(files, f.Stored, d, name); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return &BlockedError{Path: f.Path, Reason: "a file appeared there during the restore"}
			}
			return err
		}
		back = append(back, placed{dir: d, name: name, stored: f.Stored})
		return nil
	}

	// the session's lock, when its directory is there: no other sessctl
	// command works on the session while its files come back. A lock file
	// trashed with the session goes back first, and is then taken.
	rest := todo
	if rel, err := filepath.Rel(m.Root, m.Main); err == nil && localPath(rel) {
		base := filepath.Base(rel)
		lockName := safety.LockName(base)
		lockRel := filepath.Join(filepath.Dir(rel), lockName)
		for i, f := range rest {
			if f.Rel == lockRel {
				if err := place(f); err != nil {
					undo()
					return nil, err
				}
				rest = append(append([]File{}, rest[:i]...), rest[i+1:]...)
				break
			}
		}
		if d, err := dirs.existing(filepath.Dir(rel)); err == nil && d != nil {
			_, statErr := d.Lstat(lockName)
			slk, err := safety.LockIn(d, base, m.Main)
			if err != nil {
				undo()
				return nil, err
			}
			defer func() {
				if statErr != nil {
					d.Remove(lockName) // made by this restore
				}
				slk.Unlock()
			}()
		}
	}

	for _, f := range rest {
		if err := place(f); err != nil {
			undo()
			return nil, err
		}
	}
	for _, p := range back {
		p.dir.Sync()
	}
	m.Files = todo
	if err := t.remove(id); err != nil {
		return m, fmt.Errorf("restored, but the emptied entry %s could not be removed: %w", id, err)
	}
	return m, nil
}

type placed struct {
	dir    *fsroot.Dir
	name   string
	stored string
}

// moveFile moves name in from to dst in to without ever replacing dst; across
// filesystems it copies to a temp file in to, publishes it with a hard link
// (which fails on a taken name) and then removes the source.
func moveFile(from *fsroot.Dir, name string, to *fsroot.Dir, dst string) error {
	err := rename(from, name, to, dst)
	if !errors.Is(err, fsroot.ErrCrossDevice) {
		return err
	}
	tmp := jsonl.TempFileName(dst, 0) + "trash"
	to.Remove(tmp) // a leftover of an earlier crash: only ever a copy
	if err := copyFile(from, name, safety.Identity{}, to, tmp); err != nil {
		return err
	}
	if err := to.Link(tmp, dst); err != nil {
		to.Remove(tmp)
		return err
	}
	to.Remove(tmp)
	to.Sync()
	if err := from.Remove(name); err != nil {
		return err
	}
	return from.Sync()
}

// dirCache opens directories below the root, never through a symlink,
// making missing ones on demand and remembering which it made.
type dirCache struct {
	root  *fsroot.Dir
	base  string
	modes map[string]fs.FileMode
	open  map[string]*fsroot.Dir
	made  []string
}

// existing opens rel, or returns nil when it (or a parent) does not exist.
// A symlink on the way is a *BlockedError.
func (c *dirCache) existing(rel string) (*fsroot.Dir, error) {
	if d, ok := c.open[rel]; ok {
		return d, nil
	}
	if rel == "." {
		return c.root, nil
	}
	d, err := c.root.OpenDir(rel)
	switch {
	case errors.Is(err, fsroot.ErrSymlink):
		return nil, &BlockedError{Path: filepath.Join(c.base, rel), Reason: "a directory on the way is a symlink (sessctl never restores through one)"}
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	c.open[rel] = d
	return d, nil
}

// make opens rel, making the missing directories on the way.
func (c *dirCache) make(rel string) (*fsroot.Dir, error) {
	if d, err := c.existing(rel); d != nil || err != nil {
		return d, err
	}
	parent, err := c.make(filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	mode, ok := c.modes[rel]
	if !ok {
		mode = 0o700
	}
	name := filepath.Base(rel)
	if err := parent.Mkdir(name, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	} else if err == nil {
		c.made = append(c.made, rel)
		parent.Chmod(name, mode) // past the umask, as it was
		parent.Sync()
	}
	d, err := c.existing(rel)
	if err == nil && d == nil {
		err = fmt.Errorf("%s: made, but gone again", filepath.Join(c.base, rel))
	}
	return d, err
}

// removeMade removes the directories made, deepest first, when empty.
func (c *dirCache) removeMade() {
	for k := len(c.made) - 1; k >= 0; k-- {
		rel := c.made[k]
		if d, ok := c.open[rel]; ok {
			d.Close()
			delete(c.open, rel)
		}
		if parent, err := c.existing(filepath.Dir(rel)); err == nil && parent != nil {
			parent.RemoveDir(filepath.Base(rel))
		}
	}
}

func (c *dirCache) close() {
	for _, d := range c.open {
		d.Close()
	}
}

// remove deletes entry id: renamed out of sight first (so a half-deleted
// entry is never listed or restored), then emptied through handles.
func (t *Trash) remove(id string) error {
	going := goingPrefix + id
	if err := t.dir.Rename(id, going); err != nil {
		return err
	}
	t.dir.Sync()
	return removeTree(t.dir, going)
}

// removeTree removes name in parent and everything below it, through
// handles: a symlink inside is unlinked, never followed.
func removeTree(parent *fsroot.Dir, name string) error {
	d, err := parent.OpenDir(name)
	if errors.Is(err, fsroot.ErrSymlink) {
		return parent.Remove(name)
	}
	if err != nil {
		return err
	}
	ents, err := d.ReadDir()
	if err != nil {
		d.Close()
		return err
	}
	var errs []error
	for _, e := range ents {
		if e.IsDir() {
			errs = append(errs, removeTree(d, e.Name()))
		} else {
			errs = append(errs, d.Remove(e.Name()))
		}
	}
	d.Close()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return parent.RemoveDir(name)
}
