package index

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

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

// fileResident returns the bytes of files this process has mapped and
// resident (the third field of /proc/self/statm, in pages: file pages and
// shared memory), -1 when it cannot tell. The index's mapping is most of
// what changes in it while a run looks files up; the rest is the
// executable's own pages. A variable, for tests.
var fileResident = func() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return -1
	}
	return n * int64(os.Getpagesize())
}
