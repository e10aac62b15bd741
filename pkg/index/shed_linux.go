package index

import "golang.org/x/sys/unix"

// shed drops the n bytes of the view's mapping at data from this
// process's resident memory (MADV_DONTNEED): the pages stay in the page
// cache, and a look-up that needs one again maps it again. The mapping is
// bbolt's, shared and read-only, so nothing is lost. Called with the view
// held open.
func shed(data uintptr, n int64) {
	if data != 0 && n > 0 {
		unix.Syscall(unix.SYS_MADVISE, data, uintptr(n), unix.MADV_DONTNEED)
	}
}
