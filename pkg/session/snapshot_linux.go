//go:build linux

package session

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// snapshots says whether discovery snapshots are kept here: they need a
// directory's change time, which Linux gives.
const snapshots = true

// statOf returns what a stat(2) (lstat(2) when !follow) of p says of it;
// absent (the zero statID, nil error) when there is nothing at p.
func statOf(p string, follow bool) (statID, error) {
	var st unix.Stat_t
	return statResult(&st, retry(func() error {
		if follow {
			return unix.Stat(p, &st)
		}
		return unix.Lstat(p, &st)
	}))
}

// dirFd is a directory open for lstatAt (-1: none).
type dirFd int

func openDirFd(dir string) (dirFd, error) {
	var fd int
	err := retry(func() (err error) {
		fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_PATH, 0)
		return err
	})
	return dirFd(fd), err
}

func (fd dirFd) close() { unix.Close(int(fd)) }

// lstatAt is statOf(dir/name, false) by the directory's handle.
func (fd dirFd) lstatAt(name string) (statID, error) {
	var st unix.Stat_t
	return statResult(&st, retry(func() error { return unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW) }))
}

// retry makes a system call again while it is interrupted.
func retry(call func() error) error {
	for {
		if err := call(); err != unix.EINTR {
			return err
		}
	}
}

// statResult is the statID of what a stat call filled in st, or absent
// when there was nothing at its path.
func statResult(st *unix.Stat_t, err error) (statID, error) {
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return statID{}, nil
		}
		return statID{}, err
	}
	return statID{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), size: int64(st.Size),
		msec: int64(st.Mtim.Sec), mnsec: int64(st.Mtim.Nsec), csec: int64(st.Ctim.Sec), cnsec: int64(st.Ctim.Nsec)}, nil
}
