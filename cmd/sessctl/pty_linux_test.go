package main

import (
	"fmt"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of 100x30 and returns its two ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	ws := unix.Winsize{Row: 30, Col: 100}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, s.Fd(), unix.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		t.Skipf("set window size: %v", e)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// Progress is drawn only on a terminal stderr, never for --json read by a
// program, never with --no-progress or TERM=dumb; NO_COLOR does not matter.
