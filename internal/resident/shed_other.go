//go:build !linux

package resident

// ShedExecutable does nothing where MADV_DONTNEED is not known to give a
// file mapping's pages back to be read again.
func ShedExecutable() {}

// ExecutableKB cannot tell here.
func ExecutableKB() int { return -1 }
