//go:build !linux

package session

import "errors"

// snapshots says whether discovery snapshots are kept here: not without
// the change times statOf reads on Linux.
const snapshots = false

func statOf(string, bool) (statID, error) { return statID{}, errors.ErrUnsupported }

type dirFd int

func openDirFd(string) (dirFd, error)        { return -1, errors.ErrUnsupported }
func (dirFd) close()                         {}
func (dirFd) lstatAt(string) (statID, error) { return statID{}, errors.ErrUnsupported }
