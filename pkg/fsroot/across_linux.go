package fsroot

import "golang.org/x/sys/unix"

func renameNoReplace(oldfd int, oldname string, newfd int, newname string) error {
	for {
		err := unix.Renameat2(oldfd, oldname, newfd, newname, unix.RENAME_NOREPLACE)
		if err != unix.EINTR {
			return err
		}
	}
}
