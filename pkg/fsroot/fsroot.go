// Package fsroot changes files only through directory handles that a
// symlink cannot redirect.
//
// A check by path followed by an action by path is a race: if a directory on
// the path is swapped for a symlink in between, the action lands in the
// symlink's target. So every command that removes, renames or links a file
// opens the directory that holds it once (a Dir: a file descriptor) and then
// works on names inside it: fstatat, unlinkat, renameat, linkat and openat
// with AT_SYMLINK_NOFOLLOW / O_NOFOLLOW. What a Dir names cannot change after
// it was opened, and a Dir opened below another one (Dir.OpenDir) never
// passes through a symlink.
//
// Go's os.Root does much of this, but it follows symlinks that stay inside
// the root and Root.Remove removes a directory as readily as a file; sessctl
// wants neither (a removal that expects an empty directory must never
// unlink a file), so this package calls openat(2) and friends from
// golang.org/x/sys/unix directly.
//
// The package imports nothing else from sessctl.
package fsroot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Info is what fstatat says about a file: enough to tell whether it is the
// same file, unchanged, and of which type.
type Info struct {
	Dev, Ino uint64
	Mode     fs.FileMode
	Size     int64
	ModTime  time.Time
	Nlink    uint64
}

// Same reports whether a and b are the same unchanged file (device, inode,
// size and mtime).
func (a Info) Same(b Info) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Size == b.Size && a.ModTime.Equal(b.ModTime)
}

// SameFile reports whether a and b are the same inode.
func (a Info) SameFile(b Info) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

func infoOf(st *unix.Stat_t) Info {
	return Info{
		Dev:     uint64(st.Dev),
		Ino:     uint64(st.Ino),
		Mode:    modeOf(uint32(st.Mode)),
		Size:    st.Size,
		ModTime: time.Unix(st.Mtim.Unix()),
		Nlink:   uint64(st.Nlink),
	}
}

func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// ErrNotRegular is matched (errors.Is) by a NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError refuses a file that is not a regular file: a named pipe
// (reading it blocks until a writer comes), a device (/dev/zero never ends),
// a socket, a directory or a symlink where none may be.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return e.Path + ": not a regular file (" + Kind(e.Mode) + "); sessctl reads only regular session files"
}

// Is matches ErrNotRegular.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names a file type in words.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeDir != 0:
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an unknown kind of file"
}

// OpenRegular opens path for reading and refuses anything that is not a
// regular file, without ever blocking: the file is opened with O_NONBLOCK (a
// named pipe without a writer would otherwise hang in open), checked with
// fstat, and set back to blocking mode. A final symlink is followed (use
// Dir.Open to refuse it).
func OpenRegular(path string) (*os.File, error) {
	fd, err := openRetry(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return regularFile(fd, path)
}

// regularFile turns fd into an *os.File if it is a regular file, else closes
// it and refuses.
func regularFile(fd int, path string) (*os.File, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if m := modeOf(uint32(st.Mode)); !m.IsRegular() {
		unix.Close(fd)
		return nil, &NotRegularError{Path: path, Mode: m}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func openRetry(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Dir is an open directory. Every name given to its methods is one path
// component inside it (no "/", not "." or ".."), so nothing can lead out of
// it, and no method follows a final symlink.
type Dir struct {
	f    *os.File
	path string
}

// OpenDir opens the directory at path, as the user named it: symlinks on the
// path are followed (a store may be ~/.claude -> /data/claude). Everything
// below it is reached through Dir.OpenDir, which never follows one.
func OpenDir(path string) (*Dir, error) {
	fd, err := openRetry(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

// Path is the path the directory was opened as (for messages: the directory
// may have been moved since).
func (d *Dir) Path() string { return d.path }

// Join is the path of name inside the directory, for messages.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

func (d *Dir) fd() int { return int(d.f.Fd()) }

// Close closes the handle.
func (d *Dir) Close() error {
	if d == nil || d.f == nil {
		return nil
	}
	return d.f.Close()
}

// ErrSymlink is matched by the error of OpenDir when a component of the path
// is a symlink, or was one for a moment while it was opened.
var ErrSymlink = errors.New("a directory on the path is a symlink")

// OpenDir opens the directory rel below d, one component at a time with
// O_NOFOLLOW|O_DIRECTORY: a symlink anywhere on rel is refused (ErrSymlink),
// and so is "..". rel "" or "." opens d itself again.
func (d *Dir) OpenDir(rel string) (*Dir, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) {
		return nil, fmt.Errorf("%s: not a relative path", rel)
	}
	cur := d.fd()
	curPath := d.path
	owned := -1
	closeOwned := func() {
		if owned >= 0 {
			unix.Close(owned)
		}
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if rel == "." {
		parts = []string{"."}
	}
	for _, name := range parts {
		if name == ".." || name == "" {
			closeOwned()
			return nil, fmt.Errorf("%s: %q leads out of %s", rel, name, d.path)
		}
		fd, err := openRetry(cur, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		next := filepath.Join(curPath, name)
		if err != nil {
			// O_NOFOLLOW|O_DIRECTORY on a symlink fails with ELOOP or
			// ENOTDIR; ENOTDIR for what is (still) a directory means it was
			// swapped in and out meanwhile: a symlink all the same
			var st unix.Stat_t
			switch {
			case err == unix.ELOOP:
				err = ErrSymlink
			case err == unix.ENOTDIR:
				if unix.Fstatat(cur, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK || st.Mode&unix.S_IFMT == unix.S_IFDIR {
					err = ErrSymlink
				}
			}
			closeOwned()
			return nil, &fs.PathError{Op: "open", Path: next, Err: err}
		}
		closeOwned()
		owned, cur, curPath = fd, fd, next
	}
	return &Dir{f: os.NewFile(uintptr(owned), curPath), path: curPath}, nil
}

func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return fmt.Errorf("%q is not a file name", name)
	}
	return nil
}

func (d *Dir) pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: d.Join(name), Err: err}
}

// Stat describes the directory itself (fstat of the handle).
func (d *Dir) Stat() (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd(), &st); err != nil {
		return Info{}, &fs.PathError{Op: "fstat", Path: d.path, Err: err}
	}
	return infoOf(&st), nil
}

// Lstat describes name in the directory, not following a symlink.
func (d *Dir) Lstat(name string) (Info, error) {
	if err := checkName(name); err != nil {
		return Info{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, d.pathErr("lstat", name, err)
	}
	return infoOf(&st), nil
}

// Open opens name for reading: a regular file only (a symlink, a named pipe
// or a device is refused without blocking).
func (d *Dir) Open(name string) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	fd, err := openRetry(d.fd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, &NotRegularError{Path: d.Join(name), Mode: fs.ModeSymlink}
		}
		return nil, d.pathErr("open", name, err)
	}
	return regularFile(fd, d.Join(name))
}

// Create creates name for writing; it fails if name exists (as anything,
// a symlink included).
func (d *Dir) Create(name string, perm fs.FileMode) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	fd, err := openRetry(d.fd(), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, d.pathErr("create", name, err)
	}
	return os.NewFile(uintptr(fd), d.Join(name)), nil
}

// OpenLock opens (creating it when needed) a lock file: read-write, never
// through a symlink, never a non-regular file.
func (d *Dir) OpenLock(name string, perm fs.FileMode) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	fd, err := openRetry(d.fd(), name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, uint32(perm.Perm()))
	if err != nil {
		if err == unix.ELOOP {
			return nil, &NotRegularError{Path: d.Join(name), Mode: fs.ModeSymlink}
		}
		return nil, d.pathErr("open", name, err)
	}
	return regularFile(fd, d.Join(name))
}

// CreateTemp creates a new file named prefix + a random suffix and returns
// it with its name.
func (d *Dir) CreateTemp(prefix string, perm fs.FileMode) (*os.File, string, error) {
	var b [6]byte
	for range 100 {
		rand.Read(b[:])
		name := prefix + hex.EncodeToString(b[:])
		f, err := d.Create(name, perm)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("%s: no free temp file name", d.path)
}

// Remove unlinks name, which must not be a directory.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return d.pathErr("remove", name, err)
	}
	return nil
}

// RemoveDir removes name if it is an empty directory (never a file, never
// the target of a symlink).
func (d *Dir) RemoveDir(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR); err != nil {
		return d.pathErr("rmdir", name, err)
	}
	return nil
}

// Rename renames oldname to newname inside the directory (replacing
// newname).
func (d *Dir) Rename(oldname, newname string) error {
	if err := checkName(oldname); err != nil {
		return err
	}
	if err := checkName(newname); err != nil {
		return err
	}
	if err := unix.Renameat(d.fd(), oldname, d.fd(), newname); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Join(oldname), New: d.Join(newname), Err: err}
	}
	return nil
}

// Link makes newname a hard link to oldname inside the directory; it fails
// with fs.ErrExist when newname exists, so it also reserves the name.
func (d *Dir) Link(oldname, newname string) error {
	if err := checkName(oldname); err != nil {
		return err
	}
	if err := checkName(newname); err != nil {
		return err
	}
	if err := unix.Linkat(d.fd(), oldname, d.fd(), newname, 0); err != nil {
		return &os.LinkError{Op: "link", Old: d.Join(oldname), New: d.Join(newname), Err: err}
	}
	return nil
}

// ReadDir lists the directory, from its start each time.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return nil, &fs.PathError{Op: "seek", Path: d.path, Err: err}
	}
	return d.f.ReadDir(-1)
}

// Sync flushes the directory, so that a rename, link or unlink in it is
// durable.
func (d *Dir) Sync() error {
	if err := d.f.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}

// SetModTime sets the modification time of name in the directory, not
// following a symlink; the access time is left as it is.
func (d *Dir) SetModTime(name string, mtime time.Time) error {
	if err := checkName(name); err != nil {
		return err
	}
	atime, err := d.keptAtime(name)
	if err != nil {
		return d.pathErr("fstatat", name, err)
	}
	ts := []unix.Timespec{atime, unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(d.fd(), name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return d.pathErr("utimensat", name, err)
	}
	return nil
}
