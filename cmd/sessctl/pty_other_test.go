//go:build !linux

package main

import (
	"os"
	"testing"
)

// openPTY skips: the tests open pseudo-terminals the Linux way
// (/dev/ptmx, TIOCSPTLCK, /dev/pts/N).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	t.Skip("pseudo-terminals are opened the Linux way only")
	return nil, nil
}
