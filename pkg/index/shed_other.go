//go:build !linux

package index

// shed does nothing where MADV_DONTNEED is not known to keep the pages of
// a shared file mapping.
func shed(uintptr, int64, int64) {}

// fileResident cannot tell how much of the index is resident here.
var fileResident = func() int64 { return -1 }
