//go:build !linux

package index

// shed does nothing where MADV_DONTNEED is not known to keep the pages of
// a shared file mapping.
func shed(uintptr, int64, int64) {}
