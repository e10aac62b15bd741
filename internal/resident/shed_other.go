//go:build !linux

package resident

// Drop does nothing where MADV_DONTNEED is not known to keep the pages of
// a file mapping, to be read again.
func Drop(addr uintptr, n int64) {}

// FileBytes cannot tell here.
func FileBytes() int64 { return -1 }

// ShedExecutable does nothing here (Drop).
func ShedExecutable() {}

// ExecutableKB cannot tell here.
func ExecutableKB() int { return -1 }

// FileKB cannot tell here.
func FileKB(path string) int { return -1 }
