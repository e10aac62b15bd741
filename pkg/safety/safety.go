// Package safety holds the checks every command that changes a session
// makes before it writes: is an agent still writing the file (recent
// changes, an open writer), is another sessctl working on it (an advisory
// lock), and is the file still the one that was read (device, inode, size,
// mtime). Its errors are refusals: commands map them to exit code 3.
package safety

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"golang.org/x/sys/unix"
)

// DefaultQuiet is how long a file must have been left alone before sessctl
// treats it as not being written.
const DefaultQuiet = 5 * time.Second

// Identity is what a file was when it was read.
type Identity struct {
	Dev     uint64
	Ino     uint64
	Size    int64
	ModTime time.Time
}

// Stat returns the identity of path (not following a final symlink).
func Stat(path string) (Identity, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Identity{}, err
	}
	return identityOf(fi), nil
}

func identityOf(fi os.FileInfo) Identity {
	k := KeyOf(fi)
	return Identity{Dev: k.Dev, Ino: k.Ino, Size: fi.Size(), ModTime: fi.ModTime()}
}

// IdentityOf is the identity of a file described through a directory
// handle.
func IdentityOf(i fsroot.Info) Identity {
	return Identity{Dev: i.Dev, Ino: i.Ino, Size: i.Size, ModTime: i.ModTime}
}

// Key is the device and inode of the identity.
func (a Identity) Key() FileKey { return FileKey{a.Dev, a.Ino} }

// Same reports whether two identities describe the same unchanged file.
func (a Identity) Same(b Identity) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Size == b.Size && a.ModTime.Equal(b.ModTime)
}

// RefusalError is a safety refusal. errors.Is matches it against its
// class: ErrLive, ErrLocked or ErrChanged.
type RefusalError struct {
	Path   string
	Reason string
	Class  error
}

// Is reports whether target is the refusal's class.
func (e *RefusalError) Is(target error) bool { return target == e.Class }

func (e *RefusalError) Error() string { return e.Path + ": " + e.Reason }

// Refusal marks the error as a safety refusal (exit code 3).
func (e *RefusalError) Refusal() bool { return true }

// ErrLive, ErrLocked and ErrChanged classify refusals for errors.Is.
var (
	ErrLive    = errors.New("session is live")
	ErrLocked  = errors.New("session is locked by another sessctl")
	ErrChanged = errors.New("file changed while sessctl was working on it")
)

func refuse(class error, path, format string, a ...any) error {
	return &RefusalError{Path: path, Reason: fmt.Sprintf(format, a...), Class: class}
}

// Process is a process that holds a file open.
type Process struct {
	PID     int
	Command string
}

// CheckLive refuses a file that changed less than quiet ago, or that a
// process holds open for writing. now is injected for tests.
func CheckLive(path string, quiet time.Duration, now time.Time) error {
	id, err := Stat(path)
	if err != nil {
		return err
	}
	return CheckLiveID(path, id, quiet, now)
}

// CheckLiveID is CheckLive for a file whose identity was just taken
// (through a directory handle).
func CheckLiveID(path string, id Identity, quiet time.Duration, now time.Time) error {
	if age := now.Sub(id.ModTime); age < quiet && age > -time.Minute {
		return refuse(ErrLive, path, "modified %s ago: an agent may still be writing it", age.Round(time.Second))
	}
	if w, ok := Writers()[id.Key()]; ok {
		return refuse(ErrLive, path, "open for writing by process %d (%s)", w.PID, w.Command)
	}
	return nil
}

// OpenWriters lists the processes that hold path open for writing (see
// Writers).
func OpenWriters(path string) ([]Process, error) {
	target, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if p, ok := Writers()[KeyOf(target)]; ok {
		return []Process{p}, nil
	}
	return nil, nil
}

// FileKey identifies a file by device and inode.
type FileKey struct{ Dev, Ino uint64 }

// KeyOf returns the device and inode of a file.
func KeyOf(fi os.FileInfo) FileKey {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FileKey{uint64(st.Dev), uint64(st.Ino)}
	}
	return FileKey{}
}

// Writers returns every regular file that another process holds open for
// writing, with one such process, read from /proc/*/fd and /proc/*/fdinfo in
// one pass (Linux). Elsewhere, and for processes sessctl may not inspect, it
// finds nothing. Callers checking thousands of files (cleanup) take one
// snapshot instead of asking OpenWriters for each.
func Writers() map[FileKey]Process {
	out := map[FileKey]Process{}
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
		comm := ""
		for _, fd := range fds {
			fi, err := os.Stat(filepath.Join(fdDir, fd.Name()))
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if !openForWriting(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name())) {
				continue
			}
			if comm == "" {
				b, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
				comm = strings.TrimSpace(string(b))
			}
			out[KeyOf(fi)] = Process{PID: pid, Command: comm}
		}
	}
	return out
}

// openForWriting reads the flags line of /proc/PID/fdinfo/FD.
func openForWriting(fdinfo string) bool {
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

// CheckUnchanged refuses when path is no longer what was read.
func CheckUnchanged(path string, before Identity) error {
	now, err := Stat(path)
	if err != nil {
		return refuse(ErrChanged, path, "cannot stat it again before replacing it: %v", err)
	}
	return unchanged(path, before, now)
}

// CheckUnchangedAt refuses when name in dir is no longer what was read
// (fstatat through the handle: a symlink swapped onto the path cannot
// redirect the check).
func CheckUnchangedAt(dir *fsroot.Dir, name string, before Identity) error {
	info, err := dir.Lstat(name)
	if err != nil {
		return refuse(ErrChanged, dir.Join(name), "cannot stat it again before replacing it: %v", err)
	}
	return unchanged(dir.Join(name), before, IdentityOf(info))
}

func unchanged(path string, before, now Identity) error {
	if !now.Same(before) {
		if now.Dev != before.Dev || now.Ino != before.Ino {
			return refuse(ErrChanged, path, "was replaced by another file while sessctl was working on it; nothing was replaced")
		}
		return refuse(ErrChanged, path, "changed while sessctl was working on it (size %d → %d); nothing was replaced", before.Size, now.Size)
	}
	return nil
}

// Lock is an advisory lock (flock(2)) held on a sidecar lock file.
type Lock struct {
	f    *os.File
	dir  *fsroot.Dir // the lock file's directory, when the lock owns it
	Path string
}

// LockPath is the sidecar lock file of a session file: a hidden file beside
// it, ".<name>.sessctl.lock". Lock files are left in place (removing a lock
// file while others may wait on it would break the lock); cleanup removes
// them with their session.
func LockPath(path string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, LockName(base))
}

// LockName is the name of the lock file of the session file named base.
func LockName(base string) string { return "." + base + LockSuffix }

// LockSuffix ends the name of every sessctl lock file.
const LockSuffix = ".sessctl.lock"

// LockFile takes the exclusive lock of a session file without waiting: if
// another sessctl holds it, it refuses.
func LockFile(path string) (*Lock, error) {
	return lockNamed(filepath.Dir(path), LockName(filepath.Base(path)), path)
}

// LockIn takes the exclusive lock of the session file named base in dir,
// creating the lock file through the directory handle: the lock is taken in
// the directory the handle names, wherever its path now leads. subject names
// the session in a refusal.
func LockIn(dir *fsroot.Dir, base, subject string) (*Lock, error) {
	return lockIn(dir, LockName(base), subject)
}

// LockAt takes an exclusive lock on lockPath itself (for locks that are not
// tied to one session file, such as cleanup's).
func LockAt(lockPath string) (*Lock, error) {
	return lockNamed(filepath.Dir(lockPath), filepath.Base(lockPath), lockPath)
}

// lockNamed opens dir and takes the lock name in it, for a lock that owns
// its directory handle.
func lockNamed(dir, name, subject string) (*Lock, error) {
	d, err := fsroot.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", filepath.Join(dir, name), err)
	}
	l, err := lockIn(d, name, subject)
	if err != nil {
		d.Close()
		return nil, err
	}
	l.dir = d
	return l, nil
}

// lockIn is flock(LOCK_EX|LOCK_NB) on the lock file name in dir. (gofrs/flock
// does the same flock call, but only by path, which is what a handle
// avoids.) The lock file is opened without following a symlink.
func lockIn(dir *fsroot.Dir, name, subject string) (*Lock, error) {
	f, err := dir.OpenLock(name, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir.Join(name), err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, refuse(ErrLocked, subject, "another sessctl is working on it (lock %s)", dir.Join(name))
		}
		return nil, fmt.Errorf("lock %s: %w", dir.Join(name), err)
	}
	return &Lock{f: f, Path: dir.Join(name)}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	err := l.f.Close()
	l.f = nil
	l.dir.Close()
	return err
}

// Held reports whether another process holds the lock of the session file
// named base in dir, without creating the lock file (for dry runs and
// reports, which must not write).
func Held(dir *fsroot.Dir, base string) bool {
	f, err := dir.Open(LockName(base))
	if err != nil {
		return false // no lock file: nobody holds it
	}
	defer f.Close()
	if tryLock(f) == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		return false
	}
	return true
}

// tryLock is flock(LOCK_EX|LOCK_NB), retried when a signal interrupts it.
func tryLock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}
