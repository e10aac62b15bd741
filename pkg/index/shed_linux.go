package index

import "golang.org/x/sys/unix"

// shed drops the n bytes of the view's mapping at data from this
// process's resident memory (MADV_DONTNEED): the pages stay in the page
// cache, and a look-up that needs one again maps it again. The mapping is
// bbolt's, shared and read-only, so nothing is lost. Called with the view
// held open.
//
// n is at most mapped, a length the mapping is known to hold (openBolt):
// the size a transaction gives comes from the file's meta page, and in a
// file cut short it is more than bbolt mapped; madvise past the mapping
// would drop whatever lies after it, the Go heap perhaps.
func shed(data uintptr, n, mapped int64) {
	n = min(n, mapped)
	if data != 0 && n > 0 {
		unix.Syscall(unix.SYS_MADVISE, data, uintptr(n), unix.MADV_DONTNEED)
	}
}
