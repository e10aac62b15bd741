package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ErrCrossDevice is matched (errors.Is) by the error of MoveNoReplace when
// the two directories are on different filesystems: the caller copies.
var ErrCrossDevice = unix.EXDEV

// MoveNoReplace renames oldname in from to newname in to (renameat2 with
// RENAME_NOREPLACE between two handles): it never replaces newname, and
// neither name is resolved through a symlink. On a filesystem without
// RENAME_NOREPLACE it links newname (which fails on a taken name) and then
// unlinks oldname. Across filesystems it fails with an error matching
// ErrCrossDevice and changes nothing.
func MoveNoReplace(from *Dir, oldname string, to *Dir, newname string) error {
	if err := checkName(oldname); err != nil {
		return err
	}
	if err := checkName(newname); err != nil {
		return err
	}
	err := renameNoReplace(from.fd(), oldname, to.fd(), newname)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOTSUP) {
		// no RENAME_NOREPLACE here: a hard link reserves the name the same
		// way, then the old name goes
		if err = unix.Linkat(from.fd(), oldname, to.fd(), newname, 0); err == nil {
			if err = unix.Unlinkat(from.fd(), oldname, 0); err != nil {
				unix.Unlinkat(to.fd(), newname, 0)
			}
		}
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from.Join(oldname), New: to.Join(newname), Err: err}
	}
	return nil
}

// Mkdir creates the directory name inside d (failing when it exists).
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := unix.Mkdirat(d.fd(), name, uint32(perm.Perm())); err != nil {
		return d.pathErr("mkdir", name, err)
	}
	return nil
}

// Chmod sets the permission bits of name, which must not be a symlink (it
// is refused, not followed).
func (d *Dir) Chmod(name string, perm fs.FileMode) error {
	if err := checkName(name); err != nil {
		return err
	}
	info, err := d.Lstat(name)
	if err != nil {
		return err
	}
	if info.Mode&fs.ModeSymlink != 0 {
		return &NotRegularError{Path: d.Join(name), Mode: info.Mode}
	}
	if err := unix.Fchmodat(d.fd(), name, uint32(perm&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)), 0); err != nil {
		return d.pathErr("chmod", name, err)
	}
	return nil
}

// Chtimes sets the access and modification times of name, not following a
// symlink.
func (d *Dir) Chtimes(name string, atime, mtime time.Time) error {
	if err := checkName(name); err != nil {
		return err
	}
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(d.fd(), name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return d.pathErr("chtimes", name, err)
	}
	return nil
}
