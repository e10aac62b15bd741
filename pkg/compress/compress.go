// Package compress turns cold session files into their compressed form
// (<name>.jsonl.zst), as Codex 0.169's own rollout maintenance does
// (codex-rs/rollout/src/compression.rs), for the agents whose client reads
// such files back (session.CompressedStore). The other agents' sessions are
// refused with that reason: their clients would no longer find them.
//
// One file is compressed the way Codex does it, with sessctl's rewrite
// rules on top: under the session's lock, the plain file is read through
// a handle on its directory (never through a symlink) and compressed into a
// temp file in the same directory (zstd, one frame, the plain file's mode);
// the temp file is read back and must decompress to exactly the plain
// file's bytes; it gets the plain file's mtime, is synced and published
// under <name>.jsonl.zst with linkat (never over an existing file), and the
// directory is synced. Only then, after checking once more that the plain
// file is still exactly what was read (device, inode, size, mtime) and
// that nothing holds it open for writing, is the plain file removed
// (unlinkat on the directory handle) and the directory synced again.
//
// Whatever step fails, the plain file stays as it was, and nothing is left
// beside it: no temp file, and no .zst published by the failed attempt.
package compress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/rotation"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// DefaultOlderThan is Codex's own threshold: rollouts untouched for 7 days.
const DefaultOlderThan = 7 * 24 * time.Hour

// Steps at which Options.Fault is called.
const (
	StepWritten   = "written"   // the compressed content is in the temp file
	StepVerified  = "verified"  // the temp file decompresses to the plain file
	StepPublished = "published" // the .zst is in place; the plain file is about to go
)

// Options tune Session.
type Options struct {
	// OlderThan: only files whose mtime is at least this old are
	// compressed (0 compresses any file that is not live).
	OlderThan time.Duration
	// DryRun only says what would be done.
	DryRun bool
	// Force skips the live-session refusal (the lock and the identity
	// checks still apply).
	Force bool
	// Quiet is how long a file must have been left alone to count as not
	// live (safety.DefaultQuiet when 0).
	Quiet time.Duration
	Now   func() time.Time
	// Fault, when set, is called at each step; an error from it stops the
	// compression there, as a crash would (tests only).
	Fault func(step string) error
}

// Status is what became of a session.
type Status string

// Statuses.
const (
	StatusCompressed    Status = "compressed"
	StatusWouldCompress Status = "would_compress"
	StatusSkipped       Status = "skipped"
	StatusRefused       Status = "refused"
	StatusFailed        Status = "failed"
)

// Codes say why a session was skipped or refused (Item.Code).
const (
	CodeNotCold     = "not_cold"    // skipped: modified more recently than OlderThan
	CodeCompressed  = "compressed"  // skipped: the session file is compressed already
	CodeHasZst      = "zst_exists"  // skipped: a .zst beside the plain file (the plain file is the session)
	CodeUnsupported = "unsupported" // refused: the agent's client cannot read compressed files
	CodeLive        = "live"        // refused: an agent may be writing it
	CodeLocked      = "locked"      // refused: another sessctl works on it
	CodeChanged     = "changed"     // refused: it changed while sessctl compressed it
	CodeNotRegular  = "not_regular" // refused: a symlink or another non-regular file
	CodeError       = "error"       // failed: an I/O error
	CodeInterrupted = "interrupted" // refused: cancelled before it was done
)

// Item is one session and what became of it.
type Item struct {
	Agent   session.Agent `json:"agent"`
	ID      string        `json:"id"`
	Path    string        `json:"path"`               // the plain session file
	NewPath string        `json:"new_path,omitempty"` // the compressed file (written or to be written)
	Status  Status        `json:"status"`
	Code    string        `json:"code,omitempty"`
	Reason  string        `json:"reason,omitempty"`
	Size    int64         `json:"size"`
	// CompressedSize is the size of the .zst written.
	CompressedSize int64     `json:"compressed_size,omitempty"`
	ModTime        time.Time `json:"mtime"`

	err error
}

// Err is the error behind a refused or failed item (a *safety.RefusalError
// for the safety refusals), nil otherwise.
func (it *Item) Err() error { return it.err }

// Session compresses the main file of s (or, with DryRun, says whether it
// would). It never returns without an Item; the Item's status says what
// happened.
func Session(ctx context.Context, s *session.Session, opt Options) *Item {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Quiet == 0 {
		opt.Quiet = safety.DefaultQuiet
	}
	it := &Item{Agent: s.Agent, ID: s.ID, Path: s.Main}
	for _, f := range s.Files {
		if f.Path == s.Main {
			it.Size, it.ModTime = f.Size, f.ModTime
		}
	}
	base := filepath.Base(s.Main)
	if jsonl.IsCompressedName(base) {
		return it.skip(CodeCompressed, "already compressed")
	}
	zname := base + jsonl.CompressedSuffix
	it.NewPath = filepath.Join(filepath.Dir(s.Main), zname)
	if !it.ModTime.IsZero() && !cold(it.ModTime, opt) {
		return it.skip(CodeNotCold, fmt.Sprintf("modified %s ago, not older than %s", age(opt.Now().Sub(it.ModTime)), age(opt.OlderThan)))
	}
	if why := Unsupported(s.Agent, s.Main); why != "" {
		it.NewPath = ""
		return it.refuse(CodeUnsupported, why, nil)
	}
	if err := ctx.Err(); err != nil {
		return it.refuse(CodeInterrupted, "not started: "+err.Error(), err)
	}
	dir, err := openDir(s)
	if err != nil {
		return it.fail(err)
	}
	defer dir.Close()
	return compressIn(ctx, dir, base, it, opt)
}

// Unsupported says why the file at path of agent a cannot be compressed, or
// "" when it can: the agent's client must read compressed files
// (session.CompressedStore), and must take the compressed name for its
// session file (Codex reads rollout-….jsonl.zst, and no other name).
func Unsupported(a session.Agent, path string) string {
	if !session.ReadsCompressed(a) {
		return fmt.Sprintf("%s cannot read compressed session files: compressing would lose the session for it (sessctl cleanup --apply --trash moves cold sessions into the trash)", a)
	}
	h := session.HomeOf(a)
	if h == nil || h.PathVote(path+jsonl.CompressedSuffix) != session.Sure {
		return fmt.Sprintf("%s would not take %s as a session file (it reads only its own compressed names)", a, filepath.Base(path)+jsonl.CompressedSuffix)
	}
	return ""
}

func cold(mtime time.Time, opt Options) bool {
	return opt.OlderThan <= 0 || opt.Now().Sub(mtime) >= opt.OlderThan
}

// openDir opens the directory of s.Main: below its root without following
// a symlink when it has one, else as named.
func openDir(s *session.Session) (*fsroot.Dir, error) {
	dir := filepath.Dir(s.Main)
	if s.Root != "" {
		if rel, err := filepath.Rel(s.Root, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			root, err := fsroot.OpenDir(s.Root)
			if err != nil {
				return nil, err
			}
			defer root.Close()
			return root.OpenDir(rel)
		}
	}
	return fsroot.OpenDir(dir)
}

func compressIn(ctx context.Context, dir *fsroot.Dir, base string, it *Item, opt Options) *Item {
	zname := base + jsonl.CompressedSuffix
	info, err := dir.Lstat(base)
	if err != nil {
		return it.fail(err)
	}
	if !info.Mode.IsRegular() {
		return it.refuse(CodeNotRegular, fmt.Sprintf("not a regular file (%s; sessctl never compresses through a symlink)", fsroot.Kind(info.Mode)), nil)
	}
	if opt.DryRun {
		return it.check(dir, base, info, opt, func() *Item {
			it.Status = StatusWouldCompress
			return it
		})
	}
	lockName := safety.LockName(base)
	_, lockErr := dir.Lstat(lockName)
	lock, err := safety.LockIn(dir, base, it.Path)
	if err != nil {
		if errors.Is(err, safety.ErrLocked) {
			return it.refuse(CodeLocked, reason(err), err)
		}
		return it.fail(err)
	}
	if lockErr != nil {
		// a lock file made now is a side file of the session whose mtime
		// would make the session look just updated (ls, cleanup's age):
		// it gets the transcript's mtime, which compress keeps
		defer func(mtime time.Time) {
			if l, err := dir.Lstat(lockName); err == nil && l.Mode.IsRegular() && l.Size == 0 && l.ModTime.After(mtime) {
				dir.SetModTime(lockName, mtime)
			}
		}(info.ModTime)
	}
	defer lock.Unlock()
	// under the lock: the file as it is now is the file compressed
	if info, err = dir.Lstat(base); err != nil {
		return it.fail(err)
	}
	if !info.Mode.IsRegular() {
		return it.refuse(CodeNotRegular, fmt.Sprintf("not a regular file (%s; sessctl never compresses through a symlink)", fsroot.Kind(info.Mode)), nil)
	}
	return it.check(dir, base, info, opt, func() *Item {
		// what interrupted runs left under the compressed name's temp names
		if _, err := rotation.RemoveStale(dir, zname, it.Agent, opt.Now()); err != nil {
			return it.fail(err)
		}
		return write(ctx, dir, base, info, it, opt)
	})
}

// check makes the checks a dry run and a run share (age, live, a .zst
// already there) and calls then when they pass.
func (it *Item) check(dir *fsroot.Dir, base string, info fsroot.Info, opt Options, then func() *Item) *Item {
	it.Size, it.ModTime = info.Size, info.ModTime
	if !cold(info.ModTime, opt) {
		return it.skip(CodeNotCold, fmt.Sprintf("modified %s ago, not older than %s", age(opt.Now().Sub(info.ModTime)), age(opt.OlderThan)))
	}
	if _, err := dir.Lstat(base + jsonl.CompressedSuffix); err == nil {
		// Codex's own maintenance skips such a file too
		return it.skip(CodeHasZst, fmt.Sprintf("%s exists beside it (the plain file is the session); nothing was changed", base+jsonl.CompressedSuffix))
	}
	if !opt.Force {
		if err := safety.CheckLiveID(it.Path, safety.IdentityOf(info), opt.Quiet, opt.Now()); err != nil {
			return it.refuse(CodeLive, reason(err), err)
		}
	}
	return then()
}

// write compresses the plain file base (described by info) to base.zst
// and removes the plain file.
func write(ctx context.Context, dir *fsroot.Dir, base string, info fsroot.Info, it *Item, opt Options) *Item {
	zname := base + jsonl.CompressedSuffix
	id := safety.IdentityOf(info)
	src, err := dir.Open(base)
	if err != nil {
		return it.fail(err)
	}
	defer src.Close()
	if st, err := src.Stat(); err != nil {
		return it.fail(err)
	} else if now := safety.IdentityOf(fsrootInfo(st)); now.Dev != id.Dev || now.Ino != id.Ino {
		return it.refuse(CodeChanged, "was replaced by another file while sessctl was working on it; nothing was changed", safety.ErrChanged)
	}
	tmp, err := jsonl.CreateAtomicIn(dir, zname, info.Mode.Perm())
	if err != nil {
		return it.fail(err)
	}
	tmp.Binary()
	tmp.NoClobber()
	abort := func(r *Item) *Item {
		tmp.Abort()
		return r
	}
	n, err := encode(ctx, tmp, src)
	if err != nil {
		return abort(it.failOrCancel(ctx, err))
	}
	if n != id.Size {
		return abort(it.refuse(CodeChanged, fmt.Sprintf("changed while sessctl was reading it (%d bytes read, %d expected); nothing was changed", n, id.Size), safety.ErrChanged))
	}
	if err := step(ctx, opt, StepWritten); err != nil {
		return abort(it.failOrCancel(ctx, err))
	}
	if err := verify(ctx, tmp, src, id.Size); err != nil {
		return abort(it.failOrCancel(ctx, err))
	}
	if err := step(ctx, opt, StepVerified); err != nil {
		return abort(it.failOrCancel(ctx, err))
	}
	// Codex keeps the rollout's mtime (and mode): the file's age is the
	// session's
	if err := tmp.SetModTime(info.ModTime); err != nil {
		return abort(it.fail(err))
	}
	var zinfo fsroot.Info
	err = tmp.Commit(func() error {
		if err := safety.CheckUnchangedAt(dir, base, id); err != nil {
			return err
		}
		t, err := tmp.ReadTemp()
		if err != nil {
			return err
		}
		st, err := t.Stat()
		t.Close()
		if err != nil {
			return err
		}
		zinfo = fsrootInfo(st)
		return nil
	})
	if errors.Is(err, fs.ErrExist) {
		// a .zst appeared meanwhile (Codex's own maintenance?): linkat
		// replaced nothing, the plain file stays the session
		return it.skip(CodeHasZst, fmt.Sprintf("%s appeared beside it while sessctl compressed it (the plain file is the session); nothing was changed", zname))
	}
	if err != nil {
		return it.failOrRefuse(ctx, err)
	}
	it.CompressedSize = zinfo.Size
	// the .zst is published; until the plain file is gone, the plain file
	// is the session (Codex reads it first). If it cannot go, the .zst
	// made here goes again.
	unpublish := func(r *Item) *Item {
		if z, err := dir.Lstat(zname); err == nil && z.SameFile(zinfo) {
			if dir.Remove(zname) == nil {
				dir.Sync()
			}
		}
		it.CompressedSize = 0
		return r
	}
	if err := step(ctx, opt, StepPublished); err != nil {
		return unpublish(it.failOrCancel(ctx, err))
	}
	if err := safety.CheckUnchangedAt(dir, base, id); err != nil {
		return unpublish(it.refuse(CodeChanged, reason(err), err))
	}
	if !opt.Force {
		if w, ok := safety.Writers()[id.Key()]; ok {
			err := &safety.RefusalError{Path: it.Path, Reason: fmt.Sprintf("opened for writing by process %d (%s) while sessctl compressed it; nothing was changed", w.PID, w.Command), Class: safety.ErrLive}
			return unpublish(it.refuse(CodeLive, reason(err), err))
		}
	}
	if err := dir.Remove(base); err != nil {
		return unpublish(it.fail(err))
	}
	if err := dir.Sync(); err != nil {
		// the plain file is gone and the .zst holds its bytes: done, but
		// say that the removal may not be durable yet
		it.Status, it.Reason = StatusCompressed, "directory sync failed: "+err.Error()
		return it
	}
	it.Status = StatusCompressed
	return it
}

func step(ctx context.Context, opt Options, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if opt.Fault != nil {
		return opt.Fault(name)
	}
	return nil
}

// Level is the encoder level: zstd's default (level 3), Codex's
// COMPRESSION_LEVEL.
const Level = zstd.SpeedDefault

// NewEncoder is the encoder compress writes with: one frame at zstd's
// default level, one goroutine, with a content checksum (Codex's zstd
// writes none; its decoder checks one when present, and so does sessctl's).
func NewEncoder(w io.Writer) (*zstd.Encoder, error) {
	return zstd.NewWriter(w,
		zstd.WithEncoderLevel(Level),
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(true),
		zstd.WithLowerEncoderMem(true),
		zstd.WithZeroFrames(true), // an empty file is still one frame, as zstd writes it
	)
}

// encode compresses src into w and returns how many plain bytes it read.
func encode(ctx context.Context, w io.Writer, src *os.File) (int64, error) {
	enc, err := NewEncoder(w)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(enc, &jsonl.ContextReader{Ctx: ctx, R: io.NewSectionReader(src, 0, 1<<62)})
	if err != nil {
		enc.Close()
		return n, err
	}
	return n, enc.Close()
}

// verify decompresses the temp file and compares it with the plain file,
// byte for byte: the .zst must hold exactly the size bytes of src.
func verify(ctx context.Context, tmp *jsonl.AtomicFile, src *os.File, size int64) error {
	t, err := tmp.ReadTemp()
	if err != nil {
		return err
	}
	defer t.Close()
	dec, err := jsonl.Decompressed(t, tmp.TempName())
	if err != nil {
		return err
	}
	defer dec.Close()
	plain := io.NewSectionReader(src, 0, size)
	a, b := make([]byte, 256<<10), make([]byte, 256<<10)
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		na, errA := io.ReadFull(dec, a)
		if errA != nil && errA != io.EOF && errA != io.ErrUnexpectedEOF {
			return fmt.Errorf("the compressed copy does not decompress: %w", errA)
		}
		nb, errB := io.ReadFull(plain, b[:na])
		if errB != nil && errB != io.EOF && errB != io.ErrUnexpectedEOF {
			return errB
		}
		if nb != na || !bytes.Equal(a[:na], b[:nb]) {
			return fmt.Errorf("the compressed copy does not decompress to the file's bytes (they differ at or after byte %d); nothing was changed", off)
		}
		off += int64(na)
		if na < len(a) {
			break
		}
	}
	if off != size {
		return fmt.Errorf("the compressed copy holds %d bytes, the file %d; nothing was changed", off, size)
	}
	return nil
}

func (it *Item) skip(code, why string) *Item {
	it.Status, it.Code, it.Reason = StatusSkipped, code, why
	return it
}

func (it *Item) refuse(code, why string, err error) *Item {
	it.Status, it.Code, it.Reason = StatusRefused, code, why
	if err == nil {
		err = &safety.RefusalError{Path: it.Path, Reason: why}
		if code == CodeUnsupported || code == CodeNotRegular {
			err = errors.New(it.Path + ": " + why)
		}
	}
	it.err = err
	return it
}

func (it *Item) fail(err error) *Item {
	it.Status, it.Code, it.Reason, it.err = StatusFailed, CodeError, err.Error(), err
	if !strings.Contains(it.Reason, "nothing was changed") {
		it.Reason += "; nothing was changed"
	}
	return it
}

func (it *Item) failOrCancel(ctx context.Context, err error) *Item {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return it.refuse(CodeInterrupted, "interrupted; nothing was changed", err)
	}
	return it.fail(err)
}

func (it *Item) failOrRefuse(ctx context.Context, err error) *Item {
	var r *safety.RefusalError
	if errors.As(err, &r) {
		return it.refuse(CodeChanged, reason(err), err)
	}
	return it.failOrCancel(ctx, err)
}

// reason is a refusal's reason without the path (the item names it).
func reason(err error) string {
	var r *safety.RefusalError
	if errors.As(err, &r) {
		return r.Reason
	}
	return err.Error()
}

func age(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d >= 2*time.Minute:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	default:
		return d.Round(time.Second).String()
	}
}

// fsrootInfo is what an open file's Stat says, as an fsroot.Info.
func fsrootInfo(st os.FileInfo) fsroot.Info {
	k := safety.KeyOf(st)
	return fsroot.Info{Dev: k.Dev, Ino: k.Ino, Mode: st.Mode(), Size: st.Size(), ModTime: st.ModTime()}
}
