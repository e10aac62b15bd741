//go:build linux

package session

import (
	"errors"
	"syscall"
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
