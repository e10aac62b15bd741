//go:build !linux

package fsroot

import "golang.org/x/sys/unix"

// keptAtime is the access time SetModTime gives utimensat(2) for name: its
// current one, read first. golang.org/x/sys/unix has no UTIME_OMIT for
// macOS, and a guessed value the kernel refused would make every
// SetModTime fail there; an access time read just before is as good for
// sessctl (it only ever sets modification times).
func (d *Dir) keptAtime(name string) (unix.Timespec, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return unix.Timespec{}, err
	}
	return st.Atim, nil
}
