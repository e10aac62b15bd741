// Package watch follows a live session file and prints each record as it is
// appended, with the context size now. It copes with the ways session files
// change under a reader: partial writes (a record is printed only once its
// newline arrived), Kimi's rotation (context.jsonl renamed to
// context_N.jsonl and a new one created: the old file is read to its end,
// then the new one from its start), truncation (reported, read again from
// the start), deletion (reported, then Follow returns) and replacement by
// something that is not a file (an error).
//
// It uses fsnotify on the file's directory, with a slow poll as a safety
// net, or only polling when asked (network filesystems).
package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Options say what to follow and how.
type Options struct {
	// Path is the session's main file; Agent its format.
	Path  string
	Agent session.Agent
	// Tail prints the last Tail records already in the file before
	// following (0: none; the context status still counts them all).
	Tail int
	// Poll, when > 0, polls at this interval instead of using fsnotify.
	Poll time.Duration
	// Grace is how long a vanished file may take to reappear (a rotation
	// renames the file, then creates the new one) before it counts as
	// deleted. Default 500ms.
	Grace time.Duration
	// Next, when set (--latest), is asked for the newest session every
	// Rescan; when it names another file, Follow switches to it. It is
	// also asked when the followed file is deleted.
	Next   func() (path string, agent session.Agent, err error)
	Rescan time.Duration
	// Window, when > 0, replaces the context window (the model's, or the
	// one the file records).
	Window int
	// Out receives what happens.
	Out Printer
	// Now is the clock for records without timestamps (time.Now if nil).
	Now func() time.Time
	// Ready, when set, is called once the watch is in place (tests).
	Ready func()
}

// Printer receives records and events.
type Printer interface {
	// Record is one new record with the context status after it. r is
	// only valid during the call.
	Record(r *session.Record, st Status, at time.Time)
	// Status is called after a batch of records.
	Status(st Status)
	// Event reports something that happened to the file: started,
	// rotated, truncated, deleted, switched.
	Event(e Event)
}

// Event is something that happened to the followed file.
type Event struct {
	Kind string    `json:"event"`
	Path string    `json:"path"`
	Time time.Time `json:"time"`
	// Detail says more (the rotated name, the sizes).
	Detail string `json:"detail,omitempty"`
}

// Event kinds.
const (
	EventStarted   = "started"
	EventRotated   = "rotated"
	EventTruncated = "truncated"
	EventDeleted   = "deleted"
	EventSwitched  = "switched"
)

// ErrNotFile is returned when the followed path is (or becomes) something
// other than a regular file.
var ErrNotFile = errors.New("not a regular file")

// ErrCompressed refuses to follow a compressed file: nothing appends to one
// (Codex decompresses a rollout to the plain file before it appends).
var ErrCompressed = errors.New("a compressed rollout is never appended to (Codex writes to the plain .jsonl it decompresses first); read it with `sessctl show`")

// maxPartial bounds the bytes of one line held while waiting for its
// newline; a longer line is reported as too long and skipped.
const maxPartial = 64 << 20

// follower is the state of one followed file.
type follower struct {
	opt     Options
	path    string
	agent   session.Agent
	format  session.Format
	gauge   *Gauge
	f       *os.File
	ino     uint64
	off     int64
	partial []byte
	skip    bool // inside a too-long line: drop bytes to the next newline
	lineNum int
	buf     []byte
	gone    time.Time // when the path was first seen missing
	deleted bool      // the deletion was reported (--latest waits for the next session)
	// followed are the paths followed so far (--latest switches only to
	// a session it has not followed yet)
	followed map[string]bool
}

// Follow follows opt.Path until ctx is done (returns nil), the file is
// deleted (returns nil after an EventDeleted), or it becomes something
// other than a file (returns an error wrapping ErrNotFile).
func Follow(ctx context.Context, opt Options) error {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Grace == 0 {
		opt.Grace = 500 * time.Millisecond
	}
	if opt.Rescan == 0 {
		opt.Rescan = 2 * time.Second
	}
	fw := &follower{opt: opt, buf: make([]byte, 64<<10)}
	if err := fw.open(opt.Path, opt.Agent); err != nil {
		return err
	}
	defer fw.close()
	if err := fw.catchUp(); err != nil {
		return err
	}

	var events <-chan fsnotify.Event
	var errs <-chan error
	var watcher *fsnotify.Watcher
	if opt.Poll <= 0 {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return fmt.Errorf("watch %s: %w (use --poll where file notifications do not work)", opt.Path, err)
		}
		defer w.Close()
		if err := w.Add(filepath.Dir(fw.path)); err != nil {
			return fmt.Errorf("watch %s: %w (use --poll where file notifications do not work)", filepath.Dir(fw.path), err)
		}
		watcher, events, errs = w, w.Events, w.Errors
	}
	interval := opt.Poll
	if interval <= 0 {
		interval = time.Second // safety net under fsnotify
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var rescan <-chan time.Time
	if opt.Next != nil {
		t := time.NewTicker(opt.Rescan)
		defer t.Stop()
		rescan = t.C
	}
	// while the file is missing, look again soon
	var graceTimer *time.Timer
	var graceC <-chan time.Time
	if opt.Ready != nil {
		opt.Ready()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-events:
			if !ok {
				return nil
			}
			// any change in the directory: look (one Lstat and a read)
		case <-errs:
			// an overflow loses events, not data: the step reads everything
		case <-tick.C:
		case <-graceC:
			graceC = nil
		case <-rescan:
			if switched, err := fw.rescan(watcher); err != nil {
				return err
			} else if switched {
				continue
			}
		}
		done, err := fw.step()
		if err != nil {
			return err
		}
		if done {
			if opt.Next != nil {
				continue // --latest: wait for the next session instead of ending
			}
			return nil
		}
		if !fw.gone.IsZero() && graceC == nil {
			if graceTimer == nil {
				graceTimer = time.NewTimer(opt.Grace / 4)
			} else {
				graceTimer.Reset(opt.Grace / 4)
			}
			graceC = graceTimer.C
		}
	}
}

func (fw *follower) open(path string, agent session.Agent) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w (%s)", path, ErrNotFile, describe(fi))
	}
	if jsonl.IsCompressedName(path) {
		// Codex compresses only rollouts it holds cold, and decompresses one to
		// the plain file before appending to it: nothing is ever appended here
		return fmt.Errorf("%s: %w", path, ErrCompressed)
	}
	if agent == "" || agent == session.Unknown {
		a, err := session.DetectFile(path)
		if err != nil {
			return err
		}
		agent = a
	}
	format := session.FormatFor(agent)
	if format == nil && fi.Size() > 0 {
		return fmt.Errorf("%s: not a session file of a known agent", path)
	}
	// an empty file (a session just created) is followed too: its agent is
	// detected from its first complete line (detect)
	f, err := jsonl.OpenRaw(path)
	if err != nil {
		return err
	}
	fw.close()
	fw.path, fw.agent, fw.format, fw.f = path, agent, format, f
	if fw.followed == nil {
		fw.followed = map[string]bool{}
	}
	fw.followed[path] = true
	fw.ino = inode(fi)
	fw.off, fw.partial, fw.skip, fw.lineNum = 0, nil, false, 0
	fw.gauge = fw.newGauge(agent)
	fw.gone, fw.deleted = time.Time{}, false
	return nil
}

func (fw *follower) newGauge(agent session.Agent) *Gauge {
	g := NewGauge(agent)
	g.WindowOverride = fw.opt.Window
	return g
}

func (fw *follower) close() {
	if fw.f != nil {
		fw.f.Close()
		fw.f = nil
	}
}

// tailFrom is the size from which catchUp reads a file from its end.
const tailFrom = 4 << 20

// catchUp reads what the file holds now: every record feeds the gauge, the
// last Tail are printed.
func (fw *follower) catchUp() error {
	if fw.f != nil && fw.format != nil {
		if fi, err := fw.f.Stat(); err == nil && fi.Size() >= tailFrom {
			return fw.catchUpTail(fi.Size())
		}
	}
	return fw.catchUpWhole()
}

// catchUpWhole is catchUp reading the whole file.
func (fw *follower) catchUpWhole() error {
	var tail []session.Record
	err := fw.read(func(r *session.Record) {
		if fw.opt.Tail <= 0 || skipped(r) {
			return
		}
		c := *r
		c.Line = r.Line.Clone()
		tail = append(tail, c)
		if len(tail) > fw.opt.Tail {
			tail = tail[1:]
		}
	})
	if err != nil {
		return err
	}
	return fw.started(tail)
}

// started reports the start of the follow, the last records and the
// context.
func (fw *follower) started(tail []session.Record) error {
	fw.opt.Out.Event(Event{Kind: EventStarted, Path: fw.path, Time: fw.opt.Now(),
		Detail: fmt.Sprintf("%s, %d bytes, %d lines", fw.agent, fw.off, fw.lineNum)})
	now := fw.opt.Now()
	st := fw.gauge.Now()
	for i := range tail {
		fw.opt.Out.Record(&tail[i], st, stamp(&tail[i], now))
	}
	fw.opt.Out.Status(st)
	return nil
}

// catchUpTail is catchUp for a long file, reading only its end: the
// gauge needs the records from the last recorded context size on (a
// usage record, a compaction boundary: RecordedContext), and the newest
// model and recorded window, which the same record usually names. It reads
// backwards until it has these and the Tail records to print, then feeds
// them to the gauge in file order; the lines before are only counted.
// A file with no recorded size is read back to its start (as a whole read
// would read it).
func (fw *follower) catchUpTail(size int64) error {
	bk := jsonl.NewBackward(fw.f, size)
	part, _, ok, err := bk.Partial()
	if err != nil {
		return fmt.Errorf("read %s: %w", fw.path, err)
	}
	if !ok || len(part) > maxPartial {
		// a torn end too long to hold: the whole read copes with it
		return fw.catchUpWhole()
	}
	var recs []session.Record // newest first
	anchor, model, shown := false, false, 0
	start := size
	for !(anchor && model && shown >= fw.opt.Tail) {
		l, err := bk.Prev()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", fw.path, err)
		}
		start = l.Offset
		r := session.Decode(fw.format, l)
		r.Line = l.Clone()
		recs = append(recs, r)
		if n, _ := session.RecordedContext(&r); n >= 0 && r.Kind != session.KindBlank && r.Kind != session.KindCorrupt {
			anchor = true
		}
		if r.Model != "" && !r.Synthetic && r.Model != "<synthetic>" {
			model = true
		}
		if !skipped(&r) {
			shown++
		}
	}
	before, err := countLines(fw.f, start)
	if err != nil {
		return fmt.Errorf("read %s: %w", fw.path, err)
	}
	var tail []session.Record
	for i := len(recs) - 1; i >= 0; i-- {
		r := &recs[i]
		before++
		r.Line.Num = before
		fw.gauge.Add(r)
		if fw.opt.Tail > 0 && !skipped(r) {
			tail = append(tail, *r)
			if len(tail) > fw.opt.Tail {
				tail = tail[1:]
			}
		}
	}
	fw.off, fw.lineNum = size, before
	fw.partial = append([]byte(nil), part...)
	return fw.started(tail)
}

// countLines counts the newlines of f before offset end, a part on each
// core (it is what the first output of watch on a long file waits for).
func countLines(f *os.File, end int64) (int, error) {
	parts := int64(runtime.GOMAXPROCS(0))
	if end < 64<<20 {
		parts = 1
	}
	return countLinesIn(f, end, parts)
}

func countLinesIn(f *os.File, end, parts int64) (int, error) {
	counts := make([]int, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		from, to := end*p/parts, end*(p+1)/parts
		wg.Go(func() {
			buf := make([]byte, 1<<20)
			for off := from; off < to; {
				k, err := f.ReadAt(buf[:min(int64(len(buf)), to-off)], off)
				counts[p] += bytes.Count(buf[:k], []byte{'\n'})
				off += int64(k)
				if err != nil && err != io.EOF {
					errs[p] = err
					return
				}
				if k == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	n := 0
	for p := range parts {
		if errs[p] != nil {
			return 0, errs[p]
		}
		n += counts[p]
	}
	return n, nil
}

// skipped: records that are not worth a line of their own.
func skipped(r *session.Record) bool {
	return r.Kind == session.KindBlank || r.Kind == session.KindUsage || r.Kind == session.KindMetadata
}

func stamp(r *session.Record, now time.Time) time.Time {
	if !r.Timestamp.IsZero() {
		return r.Timestamp
	}
	return now
}

// step looks at the path once: new bytes, a rotation, a truncation, a
// deletion. done means the file is gone for good.
func (fw *follower) step() (done bool, err error) {
	if fw.deleted {
		return true, nil
	}
	fi, err := os.Lstat(fw.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// the old file may still have bytes we have not read
		if err := fw.drain(); err != nil {
			return false, err
		}
		if fw.gone.IsZero() {
			fw.gone = time.Now()
			return false, nil
		}
		if time.Since(fw.gone) < fw.opt.Grace {
			return false, nil
		}
		fw.opt.Out.Event(Event{Kind: EventDeleted, Path: fw.path, Time: fw.opt.Now(), Detail: "the session file was removed"})
		fw.deleted = true
		fw.close()
		return true, nil
	case err != nil:
		return false, err
	case !fi.Mode().IsRegular():
		fw.drain()
		return false, fmt.Errorf("%s: %w: it was replaced by %s; stopped following", fw.path, ErrNotFile, describe(fi))
	}
	fw.gone = time.Time{}
	if inode(fi) != fw.ino {
		// a new file at the path: Kimi's rotation (or an atomic rewrite).
		// Finish the old generation, then start on the new one.
		if err := fw.drain(); err != nil {
			return false, err
		}
		if len(fw.partial) > 0 {
			fw.flushPartial()
		}
		old := fw.rotatedName()
		f, err := jsonl.OpenRaw(fw.path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil // gone again; the next step sees it
			}
			return false, err
		}
		fw.close()
		fw.f, fw.ino, fw.off, fw.partial, fw.skip = f, inode(fi), 0, nil, false
		fw.lineNum = 0
		fw.gauge = fw.newGauge(fw.agent) // a new generation is a new context
		detail := "a new file replaced it"
		if old != "" {
			detail = "the previous generation is now " + filepath.Base(old)
		}
		fw.opt.Out.Event(Event{Kind: EventRotated, Path: fw.path, Time: fw.opt.Now(), Detail: detail})
	} else if fi.Size() < fw.off {
		fw.opt.Out.Event(Event{Kind: EventTruncated, Path: fw.path, Time: fw.opt.Now(),
			Detail: fmt.Sprintf("size %d is below the %d bytes already read; reading it again from the start", fi.Size(), fw.off)})
		fw.off, fw.partial, fw.skip, fw.lineNum = 0, nil, false, 0
		fw.gauge = fw.newGauge(fw.agent)
	}
	return false, fw.drain()
}

// rotatedName finds where the old generation went (context_N.jsonl with the
// old inode), for the message.
func (fw *follower) rotatedName() string {
	if fw.f == nil {
		return ""
	}
	ents, err := os.ReadDir(filepath.Dir(fw.path))
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && inode(info) == fw.ino {
			return filepath.Join(filepath.Dir(fw.path), e.Name())
		}
	}
	return ""
}

// drain reads the new bytes of the open file and prints their records.
func (fw *follower) drain() error {
	st := fw.gauge.Now()
	n := 0
	now := fw.opt.Now()
	err := fw.read(func(r *session.Record) {
		st = fw.gauge.Now()
		if skipped(r) {
			return
		}
		n++
		fw.opt.Out.Record(r, st, stamp(r, now))
	})
	if n > 0 {
		fw.opt.Out.Status(st)
	}
	return err
}

// detect decides the agent of a file that was empty when it was opened,
// once it holds a complete line. It reports whether the format is known.
func (fw *follower) detect() (bool, error) {
	if fw.format != nil {
		return true, nil
	}
	head := make([]byte, 64<<10)
	n, _ := fw.f.ReadAt(head, 0)
	if bytes.IndexByte(head[:n], '\n') < 0 {
		return false, nil // nothing complete yet
	}
	a, err := session.Detect(fw.path, fw.f)
	if err != nil {
		return false, err
	}
	format := session.FormatFor(a)
	if format == nil {
		return false, fmt.Errorf("%s: not a session file of a known agent", fw.path)
	}
	fw.agent, fw.format = a, format
	fw.gauge = fw.newGauge(a)
	return true, nil
}

// read reads from the offset to the end of the open file, feeding complete
// lines to the gauge and to fn.
func (fw *follower) read(fn func(*session.Record)) error {
	if fw.f == nil {
		return nil
	}
	if ok, err := fw.detect(); !ok {
		return err
	}
	for {
		n, err := fw.f.ReadAt(fw.buf, fw.off)
		if n > 0 {
			fw.off += int64(n)
			fw.feed(fw.buf[:n], fn)
		}
		if err == io.EOF || n == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", fw.path, err)
		}
	}
}

// feed splits bytes into lines, keeping an unterminated end for later.
func (fw *follower) feed(b []byte, fn func(*session.Record)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if fw.skip {
				return
			}
			fw.partial = append(fw.partial, b...)
			if len(fw.partial) > maxPartial {
				fw.lineNum++
				fw.emit(nil, jsonl.TooLong, fn)
				fw.partial, fw.skip = nil, true
			}
			return
		}
		line := b[:i]
		b = b[i+1:]
		if fw.skip {
			fw.skip = false
			continue
		}
		if len(fw.partial) > 0 {
			line = append(fw.partial, line...)
			fw.partial = nil
		}
		fw.lineNum++
		fw.emit(line, 0, fn)
	}
}

// flushPartial reports an unterminated last line of a finished generation.
func (fw *follower) flushPartial() {
	fw.lineNum++
	now := fw.opt.Now()
	fw.emit(fw.partial, jsonl.Truncated, func(r *session.Record) {
		fw.opt.Out.Record(r, fw.gauge.Now(), stamp(r, now))
	})
	fw.partial = nil
}

// emit decodes one line (status forced when not 0) and passes it on.
func (fw *follower) emit(line []byte, force jsonl.Status, fn func(*session.Record)) {
	raw := line
	if len(raw) > 0 && raw[len(raw)-1] == '\r' {
		raw = raw[:len(raw)-1]
	}
	var l *jsonl.Line
	if force == 0 {
		rd := jsonl.NewReaderSize(bytes.NewReader(append(raw[:len(raw):len(raw)], '\n')), len(raw)+16)
		var err error
		l, err = rd.Next()
		if err != nil {
			l = &jsonl.Line{Raw: raw, Status: jsonl.InvalidJSON}
		}
	} else {
		l = &jsonl.Line{Raw: raw, Status: force}
	}
	l.Num = fw.lineNum
	r := session.Decode(fw.format, l)
	fw.gauge.Add(&r)
	fn(&r)
}

// rescan asks Next for the newest session and switches to it when it is
// another file.
func (fw *follower) rescan(w *fsnotify.Watcher) (bool, error) {
	if fw.opt.Next == nil {
		return false, nil
	}
	path, agent, err := fw.opt.Next()
	if err != nil || path == "" || fw.followed[path] {
		// only a session not followed before is news: an older one that
		// was written to again does not take over
		return false, nil
	}
	fw.drain()
	old := fw.path
	if err := fw.open(path, agent); err != nil {
		return false, nil // it may be half created; try again next time
	}
	if w != nil {
		if filepath.Dir(old) != filepath.Dir(path) {
			w.Remove(filepath.Dir(old))
		}
		if err := w.Add(filepath.Dir(path)); err != nil {
			return false, fmt.Errorf("watch %s: %w", filepath.Dir(path), err)
		}
	}
	fw.opt.Out.Event(Event{Kind: EventSwitched, Path: path, Time: fw.opt.Now(), Detail: "a newer session started; was " + old})
	return true, fw.catchUpQuiet()
}

// catchUpQuiet feeds what a newly followed file holds into the gauge and
// prints it (a new session is short, and every record of it is news).
func (fw *follower) catchUpQuiet() error {
	return fw.drain()
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

func describe(fi os.FileInfo) string {
	switch {
	case fi.IsDir():
		return "a directory"
	case fi.Mode()&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a " + fi.Mode().Type().String() + " file"
}
