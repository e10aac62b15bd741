package jsonl

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
)

// AtomicFile writes a new version of a file next to it and replaces the
// original only on Commit: temp file in the same directory, fsync, rename over
// the target, fsync the directory. The target's mode is kept (or the mode given
// for a new file). A reader never sees a half-written file, and a crash at any
// point leaves either the old or the new file in place, plus at most a temp
// file named by TempName.
//
// Every step goes through one handle on the target's directory
// (pkg/fsroot): the temp file is created, renamed and removed by name inside
// it, so a directory on the path swapped for a symlink meanwhile cannot
// redirect the rename.
type AtomicFile struct {
	dir       *fsroot.Dir
	ownDir    bool // the handle was opened by CreateAtomic and is closed with the file
	name      string
	tmp       string
	f         *os.File
	mode      os.FileMode
	last      byte
	written   int64
	done      bool
	noClobber bool // Commit links instead of renaming (NoClobber)
	binary    bool // Commit adds no final newline (Binary)
}

// TempPrefix starts the name of every temp file sessctl creates; such files are
// never taken for sessions. The full name is TempName's.
const TempPrefix = ".sessctl-tmp-"

// TempFileName is the prefix of the temp files for target name made by the
// process pid: ".sessctl-tmp-<name>-<pid>-" (a random suffix follows). The
// pid lets a later run tell a temp file left by a crash (its process is gone)
// from one still being written.
func TempFileName(name string, pid int) string {
	return TempPrefix + name + "-" + strconv.Itoa(pid) + "-"
}

// ParseTempName reads a temp file name: the target's name and the pid of the
// process that made it (0 when the name carries none, as in the names
// sessctl used before it recorded the pid: ".sessctl-tmp-<name>-<random>",
// and ".sessctl-tmp-link-<pid>-<n>" for a hard link to a file being
// rotated, whose target is not named). ok is false for a name that is not a
// sessctl temp file.
func ParseTempName(fname string) (target string, pid int, ok bool) {
	rest, found := strings.CutPrefix(fname, TempPrefix)
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 {
		return "", 0, false
	}
	head, suffix := rest[:i], rest[i+1:]
	if link, found := strings.CutPrefix(head, "link-"); found && allDigits(link) && allDigits(suffix) {
		pid, _ := strconv.Atoi(link)
		return "", pid, true
	}
	if j := strings.LastIndexByte(head, '-'); j > 0 && allDigits(head[j+1:]) && len(suffix) == 12 && isLowerHex(suffix) {
		pid, err := strconv.Atoi(head[j+1:])
		if err == nil {
			return head[:j], pid, true
		}
	}
	return head, 0, true
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CreateAtomic starts a replacement for path. If path exists its permission
// bits are kept and mode is ignored; it must be a regular file.
func CreateAtomic(path string, mode os.FileMode) (*AtomicFile, error) {
	dir, err := fsroot.OpenDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	a, err := CreateAtomicIn(dir, filepath.Base(path), mode)
	if err != nil {
		dir.Close()
		return nil, err
	}
	a.ownDir = true
	return a, nil
}

// CreateAtomicIn starts a replacement for name in dir (the handle stays the
// caller's). If name exists its permission bits are kept and mode is
// ignored; it must be a regular file.
func CreateAtomicIn(dir *fsroot.Dir, name string, mode os.FileMode) (*AtomicFile, error) {
	if info, err := dir.Lstat(name); err == nil {
		if !info.Mode.IsRegular() {
			return nil, &fsroot.NotRegularError{Path: dir.Join(name), Mode: info.Mode}
		}
		mode = info.Mode.Perm()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f, tmp, err := dir.CreateTemp(TempFileName(name, os.Getpid()), 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		dir.Remove(tmp)
		return nil, err
	}
	return &AtomicFile{dir: dir, name: name, tmp: tmp, f: f, mode: mode}, nil
}

// TempName is the path of the temp file.
func (a *AtomicFile) TempName() string { return a.dir.Join(a.tmp) }

// Write appends to the temp file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	if n > 0 {
		a.last = p[n-1]
		a.written += int64(n)
	}
	return n, err
}

// Written is the number of bytes written so far.
func (a *AtomicFile) Written() int64 { return a.written }

// Commit ends the file with a newline if it does not end with one, syncs it,
// calls check (when not nil; an error from it aborts and removes the temp
// file), renames the temp file over the target and syncs the directory.
func (a *AtomicFile) Commit(check func() error) error {
	if a.done {
		return errors.New("atomic file already committed or aborted")
	}
	if a.written > 0 && a.last != '\n' && !a.binary {
		if _, err := a.Write([]byte{'\n'}); err != nil {
			a.Abort()
			return err
		}
	}
	if err := a.f.Sync(); err != nil {
		a.Abort()
		return err
	}
	if err := a.f.Close(); err != nil {
		a.f = nil
		a.Abort()
		return err
	}
	a.f = nil
	if check != nil {
		if err := check(); err != nil {
			a.Abort()
			return err
		}
	}
	a.done = true
	defer a.release()
	if a.noClobber {
		// linkat never replaces a name: the file is published only if
		// nothing took the name meanwhile, then the temp name goes
		if err := a.dir.Link(a.tmp, a.name); err != nil {
			a.dir.Remove(a.tmp)
			return err
		}
		a.dir.Remove(a.tmp)
		return a.dir.Sync()
	}
	if err := a.dir.Rename(a.tmp, a.name); err != nil {
		a.dir.Remove(a.tmp)
		return err
	}
	return a.dir.Sync()
}

// Binary makes Commit leave the end of the file as written: no newline is
// added (a Parquet file ends with its magic bytes).
func (a *AtomicFile) Binary() { a.binary = true }

// NoClobber makes Commit publish the file only under a name that does not
// exist (a hard link, which fails on a taken name, where Commit would
// rename over it): for a new file beside the one it replaces, such as the
// plain form of a compressed rollout.
func (a *AtomicFile) NoClobber() { a.noClobber = true }

// SetModTime gives the temp file the modification time mtime (call it once
// everything is written: a later Write would change it again), so that the
// published file keeps the time of the file it stands for.
func (a *AtomicFile) SetModTime(mtime time.Time) error {
	if a.done {
		return errors.New("atomic file already committed or aborted")
	}
	return a.dir.SetModTime(a.tmp, mtime)
}

// ReadTemp opens the temp file for reading (through the directory handle),
// so that what was written can be verified before Commit.
func (a *AtomicFile) ReadTemp() (*os.File, error) {
	if a.done {
		return nil, errors.New("atomic file already committed or aborted")
	}
	return a.dir.Open(a.tmp)
}

// Abort removes the temp file and leaves the target as it was.
func (a *AtomicFile) Abort() error {
	if a.done {
		return nil
	}
	a.done = true
	defer a.release()
	if a.f != nil {
		a.f.Close()
	}
	return a.dir.Remove(a.tmp)
}

func (a *AtomicFile) release() {
	if a.ownDir {
		a.dir.Close()
	}
}

// WriteFileAtomic replaces path with data through an AtomicFile.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	a, err := CreateAtomic(path, mode)
	return commitData(a, err, data)
}

// WriteFileAtomicIn replaces name in dir with data through an AtomicFile
// (CreateAtomicIn: the directory is a handle a symlink cannot redirect).
func WriteFileAtomicIn(dir *fsroot.Dir, name string, data []byte, mode os.FileMode) error {
	a, err := CreateAtomicIn(dir, name, mode)
	return commitData(a, err, data)
}

// commitData writes data to a (made with err) and commits it; the temp
// file goes on any failure.
func commitData(a *AtomicFile, err error, data []byte) error {
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.Abort()
		return err
	}
	return a.Commit(nil)
}

// Append adds lines to the end of path, each followed by a newline. If the
// file does not end with a newline (a torn last line), one is written first so
// that the new records never glue onto the broken one. The file is synced.
func Append(path string, lines ...[]byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	needNL, err := endsWithoutNewline(f)
	if err != nil {
		return err
	}
	var buf []byte
	if needNL {
		buf = append(buf, '\n')
	}
	for _, l := range lines {
		buf = append(buf, l...)
		if len(l) == 0 || l[len(l)-1] != '\n' {
			buf = append(buf, '\n')
		}
	}
	if _, err := f.Write(buf); err != nil {
		return err
	}
	return f.Sync()
}

func endsWithoutNewline(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() == 0 {
		return false, nil
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], fi.Size()-1); err != nil && err != io.EOF {
		return false, err
	}
	return b[0] != '\n', nil
}
