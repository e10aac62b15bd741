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
	var st syscall.Stat_t
	var err error
	for {
		if follow {
			err = syscall.Stat(p, &st)
		} else {
			err = syscall.Lstat(p, &st)
		}
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return statID{}, nil
		}
		return statID{}, err
	}
	return statID{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), size: int64(st.Size),
		msec: int64(st.Mtim.Sec), mnsec: int64(st.Mtim.Nsec), csec: int64(st.Ctim.Sec), cnsec: int64(st.Ctim.Nsec)}, nil
}

// dirFd is a directory open for lstatAt (-1: none).
type dirFd int

func openDirFd(dir string) (dirFd, error) {
	for {
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC|oPath, 0)
		if err != syscall.EINTR {
			return dirFd(fd), err
		}
	}
}

func (fd dirFd) close() { syscall.Close(int(fd)) }

// lstatAt is statOf(dir/name, false) by the directory's handle.
func (fd dirFd) lstatAt(name string) (statID, error) {
	var st unix.Stat_t
	var err error
	for {
		err = unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return statID{}, nil
		}
		return statID{}, err
	}
	return statID{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), size: int64(st.Size),
		msec: int64(st.Mtim.Sec), mnsec: int64(st.Mtim.Nsec), csec: int64(st.Ctim.Sec), cnsec: int64(st.Ctim.Nsec)}, nil
}

// oPath opens a directory only to stat relative to it.
const oPath = unix.O_PATH
