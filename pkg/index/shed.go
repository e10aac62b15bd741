package index

import "github.com/sessctl/sessctl/internal/resident"

// shed drops the n bytes of the view's mapping at data from this
// process's resident memory (resident.Drop): the pages stay in the page
// cache, and a look-up that needs one again maps it again. The mapping is
// bbolt's, shared and read-only, so nothing is lost. Called with the view
// held open.
//
// n is at most mapped, a length the mapping is known to hold (openBolt):
// the size a transaction gives comes from the file's meta page, and in a
// file cut short it is more than bbolt mapped; madvise past the mapping
// would drop whatever lies after it, the Go heap perhaps.
func shed(data uintptr, n, mapped int64) { resident.Drop(data, min(n, mapped)) }

// fileResident returns the bytes of files this process has mapped and
// resident (resident.FileBytes), -1 when it cannot tell. The index's
// mapping is most of what changes in it while a run looks files up; the
// rest is the executable's own pages. A variable, for tests.
var fileResident = resident.FileBytes
