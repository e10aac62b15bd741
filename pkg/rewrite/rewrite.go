// Package rewrite replaces a session file safely: it is the one way sessctl
// changes a session's bytes.
//
// A rewrite takes the session file's lock, refuses a live file (unless
// forced), remembers the file's identity, lets the caller stream the new
// content into a temp file in the same directory, then rotates the original
// (a hard link under the next rotation name, so the original bytes are kept
// before anything is replaced, and the live path never disappears), checks
// that the file is still exactly what was read, and renames the new file over
// it (fsync of file and directory, mode kept, final newline guaranteed).
//
// Whatever step fails, every original byte is still present: in place, or in
// the rotation. The steps are named so tests can inject a failure at each.
package rewrite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// Steps at which Options.Fault is called.
const (
	StepWritten  = "written"       // the new content is in the temp file
	StepReserved = "reserved"      // the rotation name is reserved (an empty placeholder exists)
	StepRotated  = "rotated"       // the original is preserved under the rotation name
	StepRename   = "before-rename" // just before the temp file replaces the original
)

// Options control a rewrite.
type Options struct {
	Force bool          // skip the live-session refusal (the lock and the identity checks still apply)
	Quiet time.Duration // how long the file must be unchanged to count as not live (default safety.DefaultQuiet)
	Now   func() time.Time
	// NoRotation skips keeping the original (for restore-like callers that
	// have already rotated it). Almost every caller wants a rotation.
	NoRotation bool
	// Fault, when set, is called at each step; an error from it aborts the
	// rewrite there, as a crash would (tests only).
	Fault func(step string) error
}

// Txn is one rewrite in progress.
type Txn struct {
	Path  string
	Agent session.Agent
	opt   Options
	lock  *safety.Lock
	id    safety.Identity
	mode  os.FileMode
}

// Begin locks path and checks that it may be rewritten.
func Begin(path string, agent session.Agent, opt Options) (*Txn, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Quiet == 0 {
		opt.Quiet = safety.DefaultQuiet
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (sessctl never rewrites through a symlink)", path)
	}
	lock, err := safety.LockFile(path)
	if err != nil {
		return nil, err
	}
	if !opt.Force {
		if err := safety.CheckLive(path, opt.Quiet, opt.Now()); err != nil {
			lock.Unlock()
			return nil, err
		}
	}
	id, err := safety.Stat(path)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	return &Txn{Path: path, Agent: agent, opt: opt, lock: lock, id: id, mode: fi.Mode().Perm()}, nil
}

// Identity is the file as it was when the rewrite began.
func (t *Txn) Identity() safety.Identity { return t.id }

// Close releases the lock. It is safe to call more than once.
func (t *Txn) Close() error {
	if t.lock == nil {
		return nil
	}
	err := t.lock.Unlock()
	t.lock = nil
	return err
}

// Result says what a rewrite did.
type Result struct {
	Rotation *rotation.Rotation // where the original bytes are kept (nil with NoRotation)
	OldSize  int64
	NewSize  int64
}

func (t *Txn) fault(step string) error {
	if t.opt.Fault != nil {
		return t.opt.Fault(step)
	}
	return nil
}

// Replace streams the new content through write (which gets the original,
// opened for reading, and the destination), rotates the original and puts
// the new file in its place. On any error the original is left in place.
func (t *Txn) Replace(write func(orig io.Reader, dst io.Writer) error) (*Result, error) {
	src, err := os.Open(t.Path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := jsonl.CreateAtomic(t.Path, t.mode)
	if err != nil {
		return nil, err
	}
	if err := write(src, dst); err != nil {
		dst.Abort()
		return nil, err
	}
	if err := t.fault(StepWritten); err != nil {
		dst.Abort()
		return nil, err
	}
	// the original must still be what we read before we preserve it
	if err := safety.CheckUnchanged(t.Path, t.id); err != nil {
		dst.Abort()
		return nil, err
	}
	res := &Result{OldSize: t.id.Size}
	if !t.opt.NoRotation {
		rot, err := t.rotate()
		if err != nil {
			dst.Abort()
			return nil, err
		}
		res.Rotation = rot
	}
	err = dst.Commit(func() error {
		if err := t.fault(StepRename); err != nil {
			return err
		}
		return safety.CheckUnchanged(t.Path, t.id)
	})
	if err != nil {
		return res, err
	}
	res.NewSize = dst.Written()
	return res, nil
}

// rotate preserves the original under the next rotation name as a hard link
// (the same inode: its mode, bytes and mtime), falling back to a copy where
// links are not possible.
func (t *Txn) rotate() (*rotation.Rotation, error) {
	n, placeholder, err := rotation.Reserve(t.Path, t.Agent)
	if err != nil {
		return nil, err
	}
	if err := t.fault(StepReserved); err != nil {
		return nil, err
	}
	tmp := filepath.Join(filepath.Dir(t.Path), fmt.Sprintf("%slink-%d-%d", jsonl.TempPrefix, os.Getpid(), n))
	if err := os.Link(t.Path, tmp); err == nil {
		if err := os.Rename(tmp, placeholder); err != nil {
			os.Remove(tmp)
			return nil, err
		}
	} else {
		if err := copyInto(t.Path, placeholder, t.mode); err != nil {
			return nil, err
		}
	}
	if err := jsonl.SyncDir(filepath.Dir(t.Path)); err != nil {
		return nil, err
	}
	if err := t.fault(StepRotated); err != nil {
		return nil, err
	}
	fi, err := os.Stat(placeholder)
	if err != nil {
		return nil, err
	}
	if fi.Size() != t.id.Size {
		return nil, errors.New("rotation " + placeholder + " does not hold the whole original; nothing was replaced")
	}
	return &rotation.Rotation{N: n, Path: placeholder, Size: fi.Size(), ModTime: fi.ModTime().Unix()}, nil
}

func copyInto(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	out.Chmod(mode)
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
