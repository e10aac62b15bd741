package cleanup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sessctl/sessctl/pkg/safety"
)

// OpenWriters returns every file that some other process holds open for
// writing, keyed by device and inode, with "process PID (command)" as value:
// one snapshot of /proc (safety.Writers) for the whole run; mtimes are
// re-checked right before each removal.
func OpenWriters() map[FileKey]string {
	out := map[FileKey]string{}
	for k, p := range safety.Writers() {
		out[k] = fmt.Sprintf("process %d (%s)", p.PID, p.Command)
	}
	return out
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
