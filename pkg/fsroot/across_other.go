//go:build !linux

package fsroot

import "golang.org/x/sys/unix"

// renameNoReplace has no single system call here: MoveNoReplace falls back
// to link and unlink.
func renameNoReplace(oldfd int, oldname string, newfd int, newname string) error {
	return unix.ENOSYS
}
