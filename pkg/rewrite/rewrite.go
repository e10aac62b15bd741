// Package rewrite replaces a session file safely: it is the one way sessctl
// changes a session's bytes.
//
// A rewrite opens the session file's directory once (a pkg/fsroot handle)
// and does everything else by name inside it, so a directory on the path
// swapped for a symlink meanwhile cannot redirect a single step. It takes
// the session file's lock, removes what interrupted rewrites of the same
// file left behind, refuses a live file (unless forced), remembers the
// file's identity, lets the caller stream the new content into a temp file
// in the same directory, then rotates the original (a hard link under the
// next rotation name, so the original bytes are kept before anything is
// replaced, and the live path never disappears), checks that the file is
// still exactly what was read, and renames the new file over it (fsync of
// file and directory, mode kept, final newline guaranteed). After the rename
// it looks whether a writer that still holds the old file open appended to
// it (those bytes are then only in the rotation) and says so.
//
// Whatever step fails, every original byte is still present in place, and
// nothing else is left: no temp file, and no rotation that would be a second
// name of the live file.
//
// A compressed session file (<name>.jsonl.zst, which Codex 0.169 writes for
// cold rollouts) is rewritten the way Codex itself changes one: Codex never
// writes into a .zst; before it appends it decompresses the rollout to the
// plain <name>.jsonl (published without replacing anything), then removes
// the .zst. So the rewrite reads the decompressed content, keeps the .zst
// as it is under the next rotation name (<name>.jsonl.zst.N, a hard link),
// publishes the new content as the plain file (never over an existing one)
// and only then removes the .zst name; the session lives on as the plain
// file, which Codex prefers anyway. A damaged compressed stream is never
// rewritten. The steps are named so tests can inject a failure
// at each; a cancelled context stops the rewrite between steps the same way.
package rewrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// Steps at which Options.Fault is called.
const (
	StepWritten = "written"       // the new content is in the temp file
	StepRotated = "rotated"       // the original is preserved under the rotation name
	StepRename  = "before-rename" // just before the temp file replaces the original
	StepRenamed = "renamed"       // the new file is in place; the late-append check follows
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
	// Leftovers are what interrupted rewrites of this file had left in its
	// directory, removed by Begin under the lock (see rotation.Leftovers).
	Leftovers []rotation.Leftover

	opt Options
	// target is the name the new content is published under: base, or
	// for a compressed file its plain name (Target).
	target string
	dir    *fsroot.Dir
	dirID  fsroot.Info
	base   string
	lock   *safety.Lock
	id     safety.Identity
	mode   os.FileMode
}

// Begin opens path's directory, locks path and checks that it may be
// rewritten. Stale leftovers of earlier, interrupted rewrites of path are
// removed (Txn.Leftovers lists them; Notes says so).
func Begin(ctx context.Context, path string, agent session.Agent, opt Options) (*Txn, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Quiet == 0 {
		opt.Quiet = safety.DefaultQuiet
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := fsroot.OpenDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	t := &Txn{Path: path, Agent: agent, opt: opt, dir: dir, base: base, target: jsonl.PlainName(base)}
	if !jsonl.IsCompressedName(base) {
		t.target = base
	}
	if err := t.begin(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func (t *Txn) begin() error {
	info, err := t.dir.Lstat(t.base)
	if err != nil {
		return err
	}
	if !info.Mode.IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s; sessctl never rewrites through a symlink)", t.Path, fsroot.Kind(info.Mode))
	}
	if t.dirID, err = t.dir.Stat(); err != nil {
		return err
	}
	// one lock per session: a compressed file's is its plain name's
	if t.lock, err = safety.LockIn(t.dir, t.target, t.Path); err != nil {
		return err
	}
	if t.compressed() {
		if _, err := t.dir.Lstat(t.target); err == nil {
			return t.refuse("its plain form %s exists beside it and is the session (Codex reads the plain file); nothing was replaced", t.target)
		}
	}
	// under the lock: the file as it is now is the file the rewrite is about
	if info, err = t.dir.Lstat(t.base); err != nil {
		return err
	}
	t.id, t.mode = safety.IdentityOf(info), info.Mode.Perm()
	if !t.opt.Force {
		if err := safety.CheckLiveID(t.Path, t.id, t.opt.Quiet, t.opt.Now()); err != nil {
			return err
		}
	}
	t.Leftovers, err = rotation.RemoveStale(t.dir, t.base, t.Agent, t.opt.Now())
	if err == nil && t.compressed() {
		// an interrupted rewrite of the compressed file left its temp file
		// under the plain name
		var more []rotation.Leftover
		more, err = rotation.RemoveStale(t.dir, t.target, t.Agent, t.opt.Now())
		t.Leftovers = append(t.Leftovers, more...)
	}
	return err
}

// compressed reports whether the file rewritten is a compressed one, whose
// new content goes to its plain name.
func (t *Txn) compressed() bool { return t.target != t.base }

// Target is the path the new content is written to: Path, or for a
// compressed file its plain form.
func (t *Txn) Target() string { return filepath.Join(filepath.Dir(t.Path), t.target) }

// Identity is the file as it was when the rewrite began.
func (t *Txn) Identity() safety.Identity { return t.id }

// Close releases the lock and the directory handle. It is safe to call more
// than once.
func (t *Txn) Close() error {
	var err error
	if t.lock != nil {
		err = t.lock.Unlock()
		t.lock = nil
	}
	if t.dir != nil {
		t.dir.Close()
		t.dir = nil
	}
	return err
}

// Result says what a rewrite did.
type Result struct {
	Rotation *rotation.Rotation // where the original bytes are kept (nil with NoRotation)
	OldSize  int64
	NewSize  int64
	// LateBytes are bytes a writer appended to the original after sessctl
	// read it, found after the rename (only --force lets a rewrite run
	// while a writer is active). They are in Rotation (when it is a hard
	// link: LateInRotation), not in the new session file; without a linked
	// rotation they went to a file that no longer has a name.
	LateBytes      int64
	LateInRotation bool
	// NewPath is where the session now is when the rewrite moved it: the
	// plain form of a compressed file ("" otherwise). Stale says the
	// compressed file could not be removed after (the plain one wins over
	// it; it is a stale copy).
	NewPath string
	Stale   bool
}

// Warning says in words what went wrong with late appends, or "".
func (r *Result) Warning(path string) string {
	if r == nil || r.LateBytes == 0 {
		return ""
	}
	if r.LateInRotation {
		return fmt.Sprintf("%d bytes were appended to %s while sessctl rewrote it; they are only in the rotation %s, not in the new session file "+
			"(the agent still has the old file open: anything it writes now goes there too; stop it and compare with `sessctl diff`)",
			r.LateBytes, path, r.Rotation.Path)
	}
	return fmt.Sprintf("%d bytes were appended to %s while sessctl rewrote it; they went to the replaced file, which is no longer reachable by name "+
		"(the agent still has it open and goes on writing there: stop it)", r.LateBytes, path)
}

// Notes are what the rewrite has to tell the user, as warning lines: the
// stale leftovers Begin removed, and bytes a writer appended meanwhile (res
// may be nil).
func (t *Txn) Notes(res *Result) []string {
	var out []string
	for _, l := range t.Leftovers {
		out = append(out, l.Removed())
	}
	if w := res.Warning(t.Path); w != "" {
		out = append(out, w)
	}
	if res != nil && res.NewPath != "" {
		kept := ""
		if res.Rotation != nil {
			kept = fmt.Sprintf("; the compressed original is kept as %s", res.Rotation.Path)
		}
		out = append(out, fmt.Sprintf("the session was compressed; it is now the plain %s, as Codex itself decompresses a rollout before it appends to it%s", res.NewPath, kept))
		if res.Stale {
			out = append(out, fmt.Sprintf("%s could not be removed after the rewrite: the plain file wins over it, but it is a stale copy", t.Path))
		}
	}
	return out
}

func (t *Txn) fault(step string) error {
	if t.opt.Fault != nil {
		return t.opt.Fault(step)
	}
	return nil
}

// step is called between the steps: an injected fault or a cancelled
// context stops the rewrite there.
func (t *Txn) step(ctx context.Context, name string) error {
	if err := t.fault(name); err != nil {
		return err
	}
	return ctx.Err()
}

// refuse is a safety refusal about the session file.
func (t *Txn) refuse(format string, a ...any) error {
	return &safety.RefusalError{Path: t.Path, Reason: fmt.Sprintf(format, a...), Class: safety.ErrChanged}
}

// Replace streams the new content through write (which gets the original as
// read at Begin, and the destination; the original of a plain file is an
// io.ReaderAt too), rotates the original and puts the new
// file in its place. On any error, or when ctx is cancelled, the original is
// left in place untouched and nothing else remains: no temp file, no
// rotation.
func (t *Txn) Replace(ctx context.Context, write func(orig io.Reader, dst io.Writer) error) (*Result, error) {
	if t.dir == nil {
		return nil, errors.New("rewrite already closed")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src, err := t.dir.Open(t.base)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil {
		return nil, err
	} else if k := safety.KeyOf(fi); k != t.id.Key() || fi.Size() != t.id.Size || !fi.ModTime().Equal(t.id.ModTime) {
		return nil, t.refuse("changed since the rewrite began (size %d → %d); nothing was replaced", t.id.Size, fi.Size())
	}
	dst, err := jsonl.CreateAtomicIn(t.dir, t.target, t.mode)
	if err != nil {
		return nil, err
	}
	// the bytes that were checked, no more: an append meanwhile is caught below
	var in io.Reader = io.LimitReader(src, t.id.Size)
	var zr io.ReadCloser
	if t.compressed() {
		if zr, err = jsonl.Decompressed(in, t.Path); err != nil {
			dst.Abort()
			return nil, err
		}
		defer zr.Close()
		in = &damageReader{r: zr}
		dst.NoClobber()
	}
	var orig io.Reader = &jsonl.ContextReader{Ctx: ctx, R: in}
	if !t.compressed() {
		// a plain original can be read by place too: a writer that keeps
		// a few lines after the part it copies reads just those
		orig = &ctxFile{jsonl.ContextReader{Ctx: ctx, R: in}, io.NewSectionReader(src, 0, t.id.Size)}
	}
	if err := write(orig, dst); err != nil {
		dst.Abort()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if dr, ok := in.(*damageReader); ok && dr.err == nil {
		// the writer may have stopped early; the whole stream must decode
		if _, err := io.Copy(io.Discard, dr); err != nil && dr.err == nil {
			dst.Abort()
			return nil, err
		}
	}
	if dr, ok := in.(*damageReader); ok && dr.err != nil {
		dst.Abort()
		return nil, fmt.Errorf("%w; sessctl does not rewrite a damaged compressed rollout (its readable part is what `zstd -d` recovers)", dr.err)
	}
	if err := t.step(ctx, StepWritten); err != nil {
		dst.Abort()
		return nil, err
	}
	if t.compressed() {
		// the .zst name goes away after the rename: its bytes must be kept
		t.opt.NoRotation = false
	}
	if t.opt.NoRotation {
		// the original must still be what we read (with a rotation, the
		// rotation is checked instead: it is the live file's inode)
		if err := safety.CheckUnchangedAt(t.dir, t.base, t.id); err != nil {
			dst.Abort()
			return nil, err
		}
	}
	res := &Result{OldSize: t.id.Size}
	linked := false
	if !t.opt.NoRotation {
		rot, lk, err := rotation.Preserve(t.dir, t.base, t.Agent, src, t.id.Size, t.mode)
		if err != nil {
			dst.Abort()
			return nil, err
		}
		res.Rotation, linked = &rot, lk
		if err := t.checkRotation(rot, linked); err != nil {
			t.dropRotation(rot)
			dst.Abort()
			return nil, err
		}
		if err := t.step(ctx, StepRotated); err != nil {
			t.dropRotation(rot)
			dst.Abort()
			return nil, err
		}
	}
	err = dst.Commit(func() error {
		if err := t.step(ctx, StepRename); err != nil {
			return err
		}
		if err := safety.CheckUnchangedAt(t.dir, t.base, t.id); err != nil {
			return err
		}
		return t.checkDir()
	})
	if err != nil {
		if res.Rotation != nil {
			t.dropRotation(*res.Rotation)
		}
		return nil, err
	}
	res.NewSize = dst.Written()
	if err := t.fault(StepRenamed); err != nil {
		return res, err
	}
	if t.compressed() {
		// the plain file is the session now and wins over the .zst; the
		// .zst's bytes are in the rotation: its name can go, as Codex's own
		// decompression removes it
		res.NewPath = t.Target()
		if err := safety.CheckUnchangedAt(t.dir, t.base, t.id); err != nil {
			res.Stale = true
			return res, nil
		}
		if err := t.dir.Remove(t.base); err != nil {
			res.Stale = true
			return res, nil
		}
		t.dir.Sync()
		return res, nil
	}
	// a writer that holds the old file open writes into it, not the new one
	if fi, err := src.Stat(); err == nil && fi.Size() > t.id.Size {
		res.LateBytes = fi.Size() - t.id.Size
		res.LateInRotation = linked
		if linked {
			res.Rotation.Size = fi.Size()
			res.Rotation.ModTime = fi.ModTime().Unix()
		}
	}
	return res, nil
}

// checkRotation makes sure the rotation holds exactly the original that was
// read. A linked rotation that differs means the live file changed between
// the last check and the link (an append): a refusal, not an I/O error.
func (t *Txn) checkRotation(rot rotation.Rotation, linked bool) error {
	got := safety.IdentityOf(rot.Info())
	if linked {
		if !got.Same(t.id) {
			return t.refuse("changed while sessctl was working on it (size %d → %d); nothing was replaced", t.id.Size, got.Size)
		}
		return nil
	}
	if got.Size != t.id.Size {
		return fmt.Errorf("rotation %s holds %d bytes, not the %d of the original; nothing was replaced", rot.Path, got.Size, t.id.Size)
	}
	return safety.CheckUnchangedAt(t.dir, t.base, t.id)
}

// dropRotation removes a rotation made by this rewrite that is not needed
// after all because the original is still in place: left behind, a linked
// rotation would be a second name of the live file, growing with it. When
// the original is not in place (the rename happened and only a later step
// failed), the rotation is the original and stays.
func (t *Txn) dropRotation(rot rotation.Rotation) {
	live, err := t.dir.Lstat(t.base)
	if err != nil || live.Dev != t.id.Dev || live.Ino != t.id.Ino {
		return
	}
	name := filepath.Base(rot.Path)
	if info, err := t.dir.Lstat(name); err == nil && info.SameFile(rot.Info()) {
		t.dir.Remove(name)
		t.dir.Sync()
	}
}

// checkDir refuses when the session's directory path no longer leads to the
// directory the rewrite works in (it was moved, or swapped for another): the
// new file would not be where the user looks for it.
func (t *Txn) checkDir() error {
	fi, err := os.Stat(filepath.Dir(t.Path))
	if err != nil {
		return t.refuse("its directory cannot be found again (%v); nothing was replaced", err)
	}
	if k := safety.KeyOf(fi); k.Dev != t.dirID.Dev || k.Ino != t.dirID.Ino {
		return t.refuse("its directory was moved or replaced while sessctl worked; nothing was replaced")
	}
	return nil
}

// damageReader remembers a damaged compressed stream, whatever the writer
// reading it makes of the error.
type damageReader struct {
	r   io.Reader
	err error
}

func (d *damageReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && jsonl.IsCompressedError(err) {
		d.err = err
	}
	return n, err
}

// ctxFile is a jsonl.ContextReader over a plain original that is also an
// io.ReaderAt over the bytes that were checked.
type ctxFile struct {
	jsonl.ContextReader
	at *io.SectionReader
}

func (c *ctxFile) ReadAt(p []byte, off int64) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.at.ReadAt(p, off)
}

// Discard deletes the rotation that Replace made (res.Rotation), for a
// caller whose point is that the original bytes must not survive (redact
// --discard-original). It runs only after Replace succeeded, when the new
// file is in place and durable (file and directory synced). The unlink
// goes through the rewrite's directory handle and happens only if the
// rotation is still the file Replace made (rotation.Remove); a rotation that
// received bytes a writer appended meanwhile (res.LateBytes) is kept, since
// those bytes are nowhere else. The directory is synced after the unlink.
func (t *Txn) Discard(res *Result) error {
	if t.dir == nil {
		return errors.New("rewrite already closed")
	}
	if res == nil || res.Rotation == nil {
		return errors.New("no rotation to discard")
	}
	if res.LateBytes > 0 {
		return t.refuse("the rotation %s also holds %d bytes appended while sessctl worked; it was kept", res.Rotation.Path, res.LateBytes)
	}
	if err := rotation.Remove(t.dir, *res.Rotation); err != nil {
		return err
	}
	return t.dir.Sync()
}
