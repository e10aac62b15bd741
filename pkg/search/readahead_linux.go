package search

import "golang.org/x/sys/unix"

// readAheadBytes is how much of each file readAhead asks for: enough for a
// transcript's raw scan and its live lines to find their pages read, and
// not so much that one huge file fills the page cache.
const readAheadBytes = 4 << 20

// readAhead asks the kernel to start reading the start of the file at path
// (posix_fadvise WILLNEED), without waiting for it. Anything but a regular
// file is left alone (a FIFO is opened without blocking and not read).
func readAhead(path string) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return
	}
	unix.Fadvise(fd, 0, min(st.Size, readAheadBytes), unix.FADV_WILLNEED)
}
