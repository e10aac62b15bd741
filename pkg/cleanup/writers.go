package cleanup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/sessctl/sessctl/pkg/safety"
)

// OpenWriters returns every file that some other process holds open for
// writing, keyed by device and inode, with "process PID (command)" as value.
// It reads /proc once (Linux); elsewhere, and for processes it may not
// inspect, it finds nothing. safety.OpenWriters answers the same question for
// one path, rescanning /proc each time; cleanup asks it for thousands of
// files, so it takes one snapshot and re-checks mtimes right before each
// removal.
func OpenWriters() map[FileKey]string {
	out := map[FileKey]string{}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		var comm string
		for _, fd := range fds {
			fi, err := os.Stat(filepath.Join(fdDir, fd.Name()))
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if !writable(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name())) {
				continue
			}
			if comm == "" {
				b, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
				comm = strings.TrimSpace(string(b))
			}
			out[keyOf(fi)] = "process " + p.Name() + " (" + comm + ")"
		}
	}
	return out
}

// writable reads the flags line of /proc/PID/fdinfo/FD.
func writable(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				return false
			}
			acc := flags & syscall.O_ACCMODE
			return acc == syscall.O_WRONLY || acc == syscall.O_RDWR
		}
	}
	return false
}

// Lock takes cleanup's own lock (one cleanup at a time) at path, creating
// its directory. A lock held by another process is a refusal
// (safety.ErrLocked) saying so.
func Lock(path string) (*safety.Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("cleanup lock: %w", err)
	}
	l, err := safety.LockAt(path)
	if errors.Is(err, safety.ErrLocked) {
		return nil, &safety.RefusalError{Path: path, Class: safety.ErrLocked,
			Reason: "another sessctl cleanup is running (it holds this lock); nothing was planned or removed"}
	}
	return l, err
}

// LockPath is where cleanup keeps its lock: $XDG_STATE_HOME/sessctl, else
// ~/.local/state/sessctl.
func LockPath(getenv func(string) string, home string) string {
	dir := getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "sessctl", "cleanup.lock")
}
