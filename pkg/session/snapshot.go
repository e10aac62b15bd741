package session

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A discovery snapshot is what Discover found under some roots, kept (by
// a SnapshotCache: the index) with what the finding depended on:
//
//   - every directory it listed, with its device, inode, modification and
//     change times: a directory whose entries change (a file created,
//     removed or renamed in it) gets a new change time;
//   - every file whose bytes it read to decide something (an agent
//     detected from a file's head, the session id in the head of an old
//     flat subagent file, Kimi's kimi.json, a directory session's own
//     files, the files under Claude's file-history/<id>), with its size
//     and times as well;
//   - every session file, by device and inode.
//
// DiscoverCached takes the snapshot for the result when every directory
// and every such file is as it was and every session file is the same
// file (sizes and times of session files are taken anew: a live session
// grows without its directory changing). Otherwise it discovers as
// Discover does and stores a new snapshot. That is one stat per directory
// and per file, made on every core side by side, instead of listing each
// directory and working out what belongs to which session: over 100,000
// sessions, a few tenths of a second instead of two seconds.
//
// Change times come from a clock that may not tick between two changes
// close together, so a snapshot is stored only when nothing it depends on
// changed in the snapshotSettle before discovery began: a later change
// then always gives a new time.

// SnapshotCache keeps discovery snapshots between runs (pkg/index).
type SnapshotCache interface {
	// LoadSnapshot returns the snapshot stored under key, nil when there
	// is none. Its reader returns an error, never io.EOF, when the
	// snapshot is damaged (a checksum).
	LoadSnapshot(key string) io.ReadCloser
	// SaveSnapshot stores what write writes under key; a failure leaves
	// no snapshot, or the one before.
	SaveSnapshot(key string, write func(io.Writer) error)
}

// snapshotSettle is how long everything a snapshot depends on must have
// been unchanged when discovery begins for the snapshot to be stored.
var snapshotSettle = 2 * time.Second

// statID is what a stat says of a path (the zero value: nothing there).
type statID struct {
	dev, ino    uint64
	mode        uint32
	size        int64
	msec, mnsec int64 // modification time
	csec, cnsec int64 // change time
}

type recorded struct {
	path string
	id   statID
}

// recorder notes what a discovery depended on (nil: nothing is noted).
type recorder struct {
	mu    sync.Mutex
	dirs  recList
	files recList // files whose bytes were read
	// cutoff is when what is noted must have last changed before for the
	// snapshot to be stored (snapshotSettle)
	cutoff time.Time
	// broken: something could not be noted, or changed after cutoff; no
	// snapshot is stored, and nothing more noted
	broken bool
}

// recList is what a recorder noted of one kind, in the snapshot's
// encoding, in chunks of recChunk bytes. Over 100,000 sessions a first
// run notes some 33,000 directories; held as paths, stats and a set of
// the paths they took 9 MB at the end of discovery, its peak, and about
// 2 MB so.
//
// A path noted twice is in it twice (the prefetch and the walk after it
// may note one directory each), which costs the check of a snapshot one
// stat more and changes nothing else; the set that kept them apart cost
// more than the duplicates.
type recList struct {
	n      int      // entries
	last   string   // the path of the last
	chunks [][]byte // each up to recChunk bytes, but for an entry longer
}

// recChunk is a variable for tests.
var recChunk = 64 << 10

func (l *recList) add(p string, id statID) {
	if l.n > 0 && p == l.last {
		return // noted again at once: the prefetch's and the walk's
	}
	need := len(p) + 10*binary.MaxVarintLen64
	k := len(l.chunks) - 1
	if k < 0 || cap(l.chunks[k])-len(l.chunks[k]) < need {
		l.chunks = append(l.chunks, make([]byte, 0, max(recChunk, need)))
		k++
	}
	l.chunks[k] = appendID(appendPath(l.chunks[k], l.last, p), id)
	l.last = p
	l.n++
}

// dir notes dir before it is listed.
func (r *recorder) dir(p string) { r.note(p, true) }

// content notes a file before its bytes are read.
func (r *recorder) content(p string) { r.note(p, false) }

func (r *recorder) note(p string, dir bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	broken := r.broken
	r.mu.Unlock()
	if broken {
		return
	}
	id, err := statOf(p, true)
	if err != nil || !time.Unix(id.csec, id.cnsec).Before(r.cutoff) || !time.Unix(id.msec, id.mnsec).Before(r.cutoff) {
		r.fail()
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken {
		return
	}
	if dir {
		r.dirs.add(p, id)
	} else {
		r.files.add(p, id)
	}
}

// fail marks the discovery as one no snapshot can stand for, and lets go
// of what was noted.
func (r *recorder) fail() {
	if r != nil {
		r.mu.Lock()
		r.broken = true
		r.dirs, r.files = recList{}, recList{}
		r.mu.Unlock()
	}
}

// DiscoverCached is Discover through the snapshots c keeps (nil c, or a
// system without them: Discover).
func DiscoverCached(roots []Root, missingOK bool, c SnapshotCache) *Result {
	return discoverCached(roots, missingOK, c, false)
}

// DiscoverCachedPacked is DiscoverCached with the sessions packed
// (DiscoverPacked).
func DiscoverCachedPacked(roots []Root, missingOK bool, c SnapshotCache) *Result {
	return discoverCached(roots, missingOK, c, true)
}

func discoverCached(roots []Root, missingOK bool, c SnapshotCache, pack bool) *Result {
	if c == nil || !snapshots {
		return discover(roots, missingOK, nil, pack)
	}
	key := snapshotKey(roots, missingOK)
	if rc := c.LoadSnapshot(key); rc != nil {
		res, ok := loadSnapshot(rc, pack)
		rc.Close()
		if ok {
			if res.Packed != nil {
				sortPacked(res.Packed)
			} else {
				sortSessions(res.Sessions)
			}
			return res
		}
	}
	rec := &recorder{cutoff: time.Now().Add(-snapshotSettle)}
	res := discover(roots, missingOK, rec, pack)
	if rec.broken || len(res.Errors) > 0 {
		return res
	}
	sn := &snapshot{rec: rec, res: res}
	l := res.List()
	for i := range l.Len() {
		for _, f := range l.At(i).Files {
			if !f.Dir && f.ino == 0 {
				return res // a file known by no inode: nothing to check it by
			}
		}
	}
	c.SaveSnapshot(key, sn.write)
	return res
}

// snapshotKey names the snapshot of a discovery of roots: the roots, and
// the working directory they may be relative to.
func snapshotKey(roots []Root, missingOK bool) string {
	wd, _ := os.Getwd()
	k := fmt.Sprintf("%s\x00%s\x00%t", snapshotMagic, wd, missingOK)
	for _, r := range roots {
		k += fmt.Sprintf("\x00%s\x00%s", r.Path, r.Agent)
	}
	return k
}

const snapshotMagic = "sessctl-discovery-3"

type snapshot struct {
	rec *recorder // what a discovery noted (write)
	// a loaded snapshot's directories and files read, in chunks of
	// snapChunk, each let go once checked (checkDeps)
	deps [][]recorded
	res  *Result
	pack bool // pack the sessions read when there are more than PackFrom
}

// loadSnapshot reads a snapshot and returns its result when it still
// stands, with the sizes and times of the session files taken anew. The
// directories and files read are checked while the sessions are decoded,
// and a change found stops the decoding.
func loadSnapshot(r io.Reader, pack bool) (*Result, bool) {
	d := &snapDecoder{r: bufio.NewReaderSize(r, 64<<10)}
	sn, err := readSnapshotDeps(d)
	if err != nil {
		return nil, false
	}
	sn.pack = pack
	var stale atomic.Bool
	checked := make(chan struct{})
	go func() {
		sn.checkDeps(&stale)
		close(checked)
	}()
	err = readSnapshotSessions(d, sn, &stale)
	<-checked
	if err != nil || stale.Load() {
		return nil, false
	}
	sn.takeFiles(&stale)
	if stale.Load() {
		return nil, false
	}
	return sn.res, true
}

// snapChunk is how many checks a worker takes at a time. A variable, for
// tests.
var snapChunk = 256

// parallel runs job(0..n-1) on every core until one returns false, which
// sets stale, or stale is set.
func parallel(n int, stale *atomic.Bool, job func(k int) bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for !stale.Load() {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				if !job(k) {
					stale.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
}

// checkDeps checks the directories listed and the files read, and sets
// stale when one is not as it was. Each chunk goes once checked: the
// checks run while the sessions are decoded, and over 100,000 sessions
// the chunks (8 MB) held to the end were a part of discovery's peak.
func (sn *snapshot) checkDeps(stale *atomic.Bool) {
	parallel(len(sn.deps), stale, func(k int) bool {
		for _, x := range sn.deps[k] {
			if id, err := statOf(x.path, true); err != nil || id != x.id {
				return false
			}
		}
		sn.deps[k] = nil
		return true
	})
}

// takeFiles checks that each session file is the file it was and takes
// its size and time, and sets stale when one is not.
func (sn *snapshot) takeFiles(stale *atomic.Bool) {
	if sn.res.Packed != nil {
		sn.takePacked(stale)
		return
	}
	jobs := dirJobs(func(put func(path string, f *File)) {
		for _, s := range sn.res.Sessions {
			for i := range s.Files {
				if f := &s.Files[i]; !f.Dir {
					put(f.Path, f)
				}
			}
		}
	})
	parallel(len(jobs), stale, func(k int) bool { return takeFiles(jobs[k].dir, jobs[k].items) })
}

// dirJob is a job of takeFiles: items all in dir ("": anywhere).
type dirJob[T any] struct {
	dir   string
	items []T
}

// dirJobs makes the jobs of takeFiles of what each puts, by the directory
// of its path: a directory of many is opened once and its files stat'ed
// relative to it (fstatat), which spares the kernel the walk of each long
// path; those of directories of fewer than 8 go by their whole path. A
// job holds at most snapChunk.
func dirJobs[T any](each func(put func(path string, v T))) []dirJob[T] {
	byDir := map[string][]T{}
	var lone []T
	each(func(path string, v T) {
		if j := strings.LastIndexByte(path, '/'); j > 0 {
			byDir[path[:j]] = append(byDir[path[:j]], v)
		} else {
			lone = append(lone, v)
		}
	})
	var jobs []dirJob[T]
	add := func(dir string, vs []T) {
		for len(vs) > 0 {
			n := min(len(vs), snapChunk)
			jobs = append(jobs, dirJob[T]{dir, vs[:n]})
			vs = vs[n:]
		}
	}
	for d, vs := range byDir {
		if len(vs) < 8 {
			lone = append(lone, vs...)
		} else {
			add(d, vs)
		}
	}
	add("", lone)
	return jobs
}

// takePacked is takeFiles of packed sessions: each file is known by its
// session's place and its own in the session's files, and its size and
// time are written in place.
func (sn *snapshot) takePacked(stale *atomic.Bool) {
	p := sn.res.Packed
	type ref struct{ at, k int32 }
	jobs := dirJobs(func(put func(path string, r ref)) {
		for i := range p.Len() {
			for k, f := range p.At(i).Files {
				if !f.Dir {
					put(f.Path, ref{int32(i), int32(k)})
				}
			}
		}
	})
	parallel(len(jobs), stale, func(k int) bool {
		j := jobs[k]
		files := make([]*File, len(j.items))
		where := make([]packedFile, len(j.items))
		for n, r := range j.items {
			s, offs := p.files(int(r.at))
			files[n], where[n] = &s.Files[r.k], offs[r.k]
		}
		if !takeFiles(j.dir, files) {
			return false
		}
		for n, f := range files {
			p.patch(where[n], f.Size, f.ModTime)
		}
		return true
	})
}

// takeFiles checks that each of files (all in dir; "": anywhere) is the
// regular file it was, and takes its size and time.
func takeFiles(dir string, files []*File) bool {
	var fd dirFd = -1
	if dir != "" {
		var err error
		if fd, err = openDirFd(dir); err != nil {
			return false
		}
		defer fd.close()
	}
	for _, f := range files {
		var id statID
		var err error
		if fd >= 0 {
			id, err = fd.lstatAt(f.Path[len(dir)+1:])
		} else {
			id, err = statOf(f.Path, false)
		}
		if err != nil || id.mode&syscall.S_IFMT != syscall.S_IFREG || id.dev != f.dev || id.ino != f.ino {
			return false
		}
		f.Size, f.ModTime = id.size, time.Unix(id.msec, id.mnsec)
	}
	return true
}

// The encoding: the magic, then counts and fields as uvarints, strings as
// a length and bytes; paths as the length they share with the path before
// in the same list (the directories listed, the files read, the sessions
// with their files and the unrecognized files; the first of a list shares
// nothing) and the rest; the agents, roots, projects and roles as an index
// into the strings seen so far (0: a new one follows).

func (sn *snapshot) write(w io.Writer) error {
	e := &snapEncoder{w: bufio.NewWriterSize(w, 64<<10), table: map[string]uint64{}}
	e.bytes([]byte(snapshotMagic))
	for _, l := range []*recList{&sn.rec.dirs, &sn.rec.files} {
		e.uint(uint64(l.n))
		for _, c := range l.chunks {
			e.raw(c)
		}
	}
	l := sn.res.List()
	e.uint(uint64(l.Len()))
	for i := range l.Len() {
		s := l.At(i)
		e.interned(string(s.Agent))
		e.path(s.Main)
		e.of(s.Main, s.ID)
		e.of(s.Main, s.Dir)
		e.interned(s.Project)
		e.interned(s.Root)
		e.uint(uint64(len(s.Files)))
		for _, f := range s.Files {
			e.of(s.Main, f.Path)
			e.interned(f.Role.String())
			e.uint(uint64(f.Size))
			e.time(f.ModTime)
			e.uint(uint64(f.Rotation))
			e.uint(f.dev)
			e.uint(f.ino)
			if f.Dir {
				e.uint(1)
			} else {
				e.uint(0)
			}
		}
	}
	e.uint(uint64(len(sn.res.Unrecognized)))
	e.last = ""
	for _, p := range sn.res.Unrecognized {
		e.path(p)
	}
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

type snapEncoder struct {
	w     *bufio.Writer
	buf   []byte
	last  string
	table map[string]uint64
	err   error
}

func (e *snapEncoder) uint(v uint64) {
	e.buf = binary.AppendUvarint(e.buf[:0], v)
	e.raw(e.buf)
}

func (e *snapEncoder) bytes(b []byte) {
	e.uint(uint64(len(b)))
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *snapEncoder) raw(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

func (e *snapEncoder) path(p string) {
	e.buf = appendPath(e.buf[:0], e.last, p)
	e.raw(e.buf)
	e.last = p
}

// appendPath appends p as the length it shares with last and the rest.
func appendPath(b []byte, last, p string) []byte {
	n := 0
	for n < len(p) && n < len(last) && p[n] == last[n] {
		n++
	}
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(len(p)-n))
	return append(b, p[n:]...)
}

// of writes s as a part of main when it is one (an id, a sidecar
// directory, the main file itself), so that it is read back as a
// substring of it and costs no memory of its own: 0 and the path
// otherwise, or 1 and where in main.
func (e *snapEncoder) of(main, s string) {
	if s != "" {
		if i := strings.Index(main, s); i >= 0 {
			e.uint(1)
			e.uint(uint64(i))
			e.uint(uint64(len(s)))
			return
		}
	}
	e.uint(0)
	e.path(s)
}

func (e *snapEncoder) interned(s string) {
	if i, ok := e.table[s]; ok {
		e.uint(i)
		return
	}
	e.uint(0)
	e.bytes([]byte(s))
	e.table[s] = uint64(len(e.table) + 1)
}

// appendID appends what a stat said, field by field.
func appendID(b []byte, id statID) []byte {
	for _, v := range [...]uint64{id.dev, id.ino, uint64(id.mode), uint64(id.size),
		uint64(id.msec), uint64(id.mnsec), uint64(id.csec), uint64(id.cnsec)} {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// time writes t as its Unix seconds and nanoseconds (1 more: 0 is the zero
// time).
func (e *snapEncoder) time(t time.Time) {
	if t.IsZero() {
		e.uint(0)
		e.uint(0)
		return
	}
	e.uint(uint64(t.Unix()))
	e.uint(uint64(t.Nanosecond()) + 1)
}

var errSnapshot = errors.New("session: damaged discovery snapshot")

// snapMaxString bounds a string of a snapshot (a path), so that a damaged
// one never makes a large allocation.
const snapMaxString = 1 << 16

type snapDecoder struct {
	r     *bufio.Reader
	last  []byte
	table []string
	err   error
}

func (d *snapDecoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.err = errSnapshot
	}
	return v
}

// count reads a count, bounded so that a damaged one allocates little.
func (d *snapDecoder) count() int {
	v := d.uint()
	if v > 1<<32 {
		d.err = errSnapshot
		return 0
	}
	return int(v)
}

func (d *snapDecoder) bytes(dst []byte) []byte {
	n := d.uint()
	if d.err != nil || n > snapMaxString {
		d.err = errSnapshot
		return dst
	}
	l := len(dst)
	dst = append(dst, make([]byte, n)...)
	if _, err := io.ReadFull(d.r, dst[l:]); err != nil {
		d.err = errSnapshot
	}
	return dst
}

func (d *snapDecoder) path() string {
	n := d.uint()
	if n > uint64(len(d.last)) {
		d.err = errSnapshot
		return ""
	}
	d.last = d.bytes(d.last[:n])
	return string(d.last)
}

func (d *snapDecoder) of(main string) string {
	if d.uint() == 0 {
		return d.path()
	}
	i, n := d.uint(), d.uint()
	if d.err != nil || i > uint64(len(main)) || n > uint64(len(main))-i {
		d.err = errSnapshot
		return ""
	}
	return main[i : i+n]
}

func (d *snapDecoder) interned() string {
	i := d.uint()
	if i == 0 {
		s := string(d.bytes(nil))
		d.table = append(d.table, s)
		return s
	}
	if i > uint64(len(d.table)) {
		d.err = errSnapshot
		return ""
	}
	return d.table[i-1]
}

func (d *snapDecoder) id() statID {
	return statID{dev: d.uint(), ino: d.uint(), mode: uint32(d.uint()), size: int64(d.uint()),
		msec: int64(d.uint()), mnsec: int64(d.uint()), csec: int64(d.uint()), cnsec: int64(d.uint())}
}

func (d *snapDecoder) time() time.Time {
	sec, nsec := int64(d.uint()), d.uint()
	if nsec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec-1))
}

var errStale = errors.New("session: discovery snapshot out of date")

// readSnapshotDeps decodes the head of a snapshot: what it depends on.
func readSnapshotDeps(d *snapDecoder) (*snapshot, error) {
	if string(d.bytes(nil)) != snapshotMagic {
		return nil, errSnapshot
	}
	sn := &snapshot{res: &Result{}}
	var chunk []recorded
	for range 2 { // the directories listed, then the files read
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			if chunk == nil {
				chunk = make([]recorded, 0, min(snapChunk, n-i))
			}
			if chunk = append(chunk, recorded{d.path(), d.id()}); len(chunk) == cap(chunk) {
				sn.deps, chunk = append(sn.deps, chunk), nil
			}
		}
	}
	if len(chunk) > 0 {
		sn.deps = append(sn.deps, chunk)
	}
	return sn, d.err
}

// readSnapshotSessions decodes the rest of a snapshot, and stops when
// stale is set; any damage is an error.
func readSnapshotSessions(d *snapDecoder, sn *snapshot, stale *atomic.Bool) error {
	n := d.count()
	if sn.pack && n > PackFrom {
		sn.res.Packed = &Packed{}
	}
	for i := 0; i < n && d.err == nil; i++ {
		s := &Session{Agent: Agent(d.interned()), Main: d.path()}
		s.ID = d.of(s.Main)
		s.Dir = d.of(s.Main)
		s.Project, s.Root = d.interned(), d.interned()
		nf := d.count()
		if nf > 1<<20 {
			return errSnapshot
		}
		s.Files = make([]File, 0, nf)
		for j := 0; j < nf && d.err == nil; j++ {
			f := File{Path: d.of(s.Main)}
			var ok bool
			if f.Role, ok = parseFileRole(d.interned()); !ok {
				return errSnapshot
			}
			f.Size = int64(d.uint())
			f.ModTime = d.time()
			if r := d.uint(); r <= math.MaxInt32 {
				f.Rotation = int32(r)
			} else {
				return errSnapshot
			}
			f.dev, f.ino = d.uint(), d.uint()
			f.Dir = d.uint() == 1
			s.Files = append(s.Files, f)
		}
		if sn.res.Packed != nil {
			sn.res.Packed.Add(s)
		} else {
			sn.res.Sessions = append(sn.res.Sessions, s)
		}
		if i%1024 == 0 && stale.Load() {
			return errStale
		}
	}
	n = d.count()
	for i := 0; i < n && d.err == nil; i++ {
		sn.res.Unrecognized = append(sn.res.Unrecognized, d.path())
	}
	if d.err != nil {
		return d.err
	}
	// the end: nothing after it, and the cache's checksum holds
	if _, err := d.r.ReadByte(); err != io.EOF {
		return errSnapshot
	}
	return nil
}
