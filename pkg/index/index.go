// Package index is sessctl's on-disk cache of what it read from session
// files: per-file summaries (what ls shows) and usage scans (what stats
// counts), so that a file is read once and not again until it changes
// (issue 15, docs/index.md).
//
// It is only a cache. Every value in it is what a read of the file would
// give; deleting it changes no output; one that cannot be opened, is
// corrupt, or was written by another build of sessctl is deleted and
// rebuilt; one that another sessctl run holds locked is skipped for this
// run (the run reads the files) rather than waited for.
//
// A file is known by its device and inode, so that a renamed or rotated
// file is still known; what is stored for it says its size, modification
// time, a hash of its first 4 KiB and, for a file that can be continued, a
// hash of the 4 KiB before the point to continue from. Same size and time:
// the stored value is used and the file is not opened. Larger, with the
// head and the bytes before that point unchanged: the file only grew and
// is read from that point on. Anything else: it is read whole.
//
// Storage is bbolt (go.etcd.io/bbolt): one file, pure Go, small to build,
// with readers sharing it under a shared file lock and one writer at a time
// under an exclusive one. A run looks values up in a read-only view, keeps
// what it read (in memory, and past spillAt in a spool on disk) and writes
// it at its end in key order, in short write transactions, so that
// concurrent runs read side by side.
package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// schema is the layout of the index file. Change it whenever what is
// stored, or how, changes; the build stamp (see stamp) changes by itself
// whenever sessctl is rebuilt.
const schema = "sessctl-index-4"

// FileName is the index's file in its directory.
const FileName = "index.db"

// headSize is how much of the start of a file its identity hashes, and
// how much before the point a grown file is continued from.
const headSize = 4 << 10

// lockWait is how long a run waits for the index's file lock (another run
// writing) before it goes on without the index.
var lockWait = 250 * time.Millisecond

// writeTouched is how much of the index a transaction of a write may read
// through the mapping (fileResident, where the system says it) before it
// commits, fewer than writeChunk entries then: the commit copies every
// leaf the transaction changed from the mapping, and maps each again with
// its neighbours. A write in key order of entries that fall far apart (a
// run that found a fifth of 100,000 sessions new, in no order of the
// index's) put each of a part into a leaf of its own, and held 14 MiB of
// the index at each commit; a first run's entries go to the end of the
// tree, and a part of them reads a few pages.
var writeTouched int64 = 4 << 20

// writeChunk is how many entries a write puts in one transaction, and
// sheds the pages read for them (shed) before the next. The files of a run
// are keyed by device and inode, in no order of the run's, so the entries
// of a write that are not the first of the index fall into leaves all over
// the files bucket: a write of all of them at
// once read most of the tree through the mapping, and held a buffer for
// each page it rewrote until it committed. At the close of a first stats
// over 40,000 sessions, with the results being made, that was 6-10 MB of
// the index mapped and a few more of buffers; in parts of 512, with the
// view shed at the end of the scan, the peak was 6 MB lower (paired runs),
// in the same time.
var writeChunk = 512

// shedPuts is how many entries a write puts between two sheds of the pages
// it has read: each put reads a leaf of its own, and maps its neighbours
// too. A first stats over 40,000 sessions peaked at 62.9 MiB with it, at
// 64.1 without (paired), in the same time.
var shedPuts = 64

// shedEvery is how many look-ups a run makes between two sheds of the
// pages of the index it has read (shed). bbolt maps the whole file, and
// every page a run reads counts in its resident memory until the run
// ends: 134 MB for the summaries of 100,000 sessions, read once each.
//
// A run that reads large entries (the requests of a file, for stats) sheds
// also every shedBytes of pages: over 100,000 sessions, 4,096 look-ups of
// stats held up to 45 MB of the index. A look-up is counted as a page (its
// leaf), and one whose body is kept apart (blobMin) as its body and two.
var shedEvery, shedBytes int64 = 4096, 4 << 20

// missTouched is what a look-up that finds nothing counts towards
// shedBytes. The look-ups of a first run miss, in no order, each in a leaf
// of its own, and the page read maps its neighbours too (64 KiB here): at
// a page each, a first stats over 40,000 sessions held 6-10 MB of the
// index between two sheds, at its peak. At 16 KiB the peak was 63.0 MiB
// instead of 65, in the same time (paired); at 64 KiB the peak was the
// same, and a first ls over 100,000 sessions took 0.4 s more system time.
const missTouched = 16 << 10

// residentBytes is how much of the index a run holds before it sheds,
// where the system says it (fileResident, on Linux): every probeBytes of
// pages counted, a run looks, and sheds when the files it maps hold
// residentBytes more than after the last shed (or than the least since).
// Counting alone misses most
// of it on a warm run: a hit reads its leaf and its body, each maps its
// neighbours, and between two sheds a warm stats over 100,000 sessions
// held up to 24 MB of the index. Hits counted at 16 KiB (as misses are)
// took 6 % more time over 40,000 sessions, and shed as often on runs that
// did not need it; looking costs a read of /proc/self/statm.
var residentBytes, probeBytes int64 = 8 << 20, 256 << 10

// sweepEvery is how often a run drops the entries of files that are gone
// (deleted, or their inode now another file's): at most once a day, so
// that the stat of every entry it takes is not paid on every run.
var sweepEvery = 24 * time.Hour

// sweepShed is how many entries a sweep reads between two sheds of the
// pages it read.
const sweepShed = 1024

// blobMin is the size from which an entry's body (its tag, state and
// value) is kept apart from it, in the blobs bucket under a sequence
// number, and the entry holds that number. Entries are keyed by device and
// inode, so the files of a first run go into the tree in no order: each
// write of new entries rewrote most of its leaves, with the large bodies in
// them (a first stats over 3.2 GB wrote a 61 MB index for 34 MB of
// entries, and each write read and copied most of it again). Bodies keyed
// by a growing sequence go on the tree's right edge, and the leaves of the
// files bucket are small.
//
// It was 2 KiB, which left most of ls's summaries (a first prompt is kept
// whole) and of stats's small files in the files bucket: a write of a
// first run then still rewrote most of its leaves, and reading them back
// for the write held them in memory (on Linux 6 a page read through the
// mapping maps its neighbours too, about 100 KB a page here). With 256
// bytes, the files bucket is the keys and heads: a first stats over
// 10,000 sessions held 24 MB of the file instead of 33, and a first ls
// over 100,000 sessions peaks at 201 MiB instead of 327 in the same time;
// a look-up of a summary reads a page more (ls --json, warm: 0.90 s
// against 0.84 s).
const blobMin = 256

// pageSize is the size of the index's pages (bbolt's default, the
// operating system's page size on the machines sessctl runs on).
const pageSize = 4096

var (
	bucketMeta  = []byte("meta")
	bucketFiles = []byte("files")
	bucketRuns  = []byte("runs")      // results of whole runs (LoadRun)
	bucketTimes = []byte("run-times") // when each was stored (putRuns)
	bucketBlobs = []byte("blobs")     // the bodies of large entries, by sequence (blobMin)
	keySchema   = []byte("schema")
	keySwept    = []byte("swept") // Unix seconds of the last sweep
)

// Dir returns the index's directory: $XDG_CACHE_HOME/sessctl, or
// ~/.cache/sessctl; "" when neither is known.
func Dir(getenv func(string) string, home string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "sessctl")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache", "sessctl")
}

// Disabled reports whether the environment turns the index off
// (SESSCTL_NO_INDEX=1, as --no-index does).
func Disabled(getenv func(string) string) bool {
	v := getenv("SESSCTL_NO_INDEX")
	return v != "" && v != "0"
}

// Index is an open index. A nil *Index is valid: it stores nothing and
// every Get reads the file.
type Index struct {
	path  string
	stamp []byte

	mu sync.Mutex // pending, stale, swept, size, broken, stats; held by flush

	// the read-only view: look-ups hold view for reading, each with a
	// transaction of its own (bbolt's transactions are not for several
	// goroutines), so that the workers of a run look up side by side;
	// opening and closing it holds view for writing. Taken after mu,
	// never before it.
	view  sync.RWMutex
	db    *bolt.DB // nil once the index is given up
	tx    *bolt.Tx
	files *bolt.Bucket
	// a length db's mapping holds, which no shed goes past (openBolt)
	mapped int64
	txMu   sync.Mutex
	idle   []viewTx // transactions of the view not in use by a look-up

	looked   atomic.Int64 // look-ups in the view, for shedEvery
	unshed   atomic.Int64 // bytes of entries read since the last shed
	unprobed atomic.Int64 // bytes of entries read since the last look at fileResident
	sheds    atomic.Int64 // sheds so far (tests)
	// what fileResident said after the last shed (or when the view
	// opened), or the least it said since: the index's part of it is then
	// next to nothing (overResident)
	resident atomic.Int64
	holdLess atomic.Bool // shed at half residentBytes (HoldLess)

	pending   map[string][]byte
	spool     *spool            // the entries pending past spillAt (nil: none yet)
	unspooled bool              // a spool could not be made or written: its entries are dropped
	runs      map[string][]byte // results of whole runs to store (StoreRun)
	stale     [][]byte          // keys of entries whose file is gone, deleted with the next write
	swept     bool              // stale holds a sweep: record its time with the next write
	size      int               // bytes in pending
	broken    bool              // the file is unreadable: delete it on Close

	stats Stats
}

// viewTx is a read transaction of the view, with its files bucket.
type viewTx struct {
	tx           *bolt.Tx
	files, blobs *bolt.Bucket
}

// Stats counts what a run did with the index, for tests and measurements.
type Stats struct {
	Hits, Grown, Misses, Written int
	RunHits                      int // results of whole runs found (LoadRun)
	Swept                        int // entries of files that are gone, deleted
}

// Open opens the index in dir, creating it when missing and rebuilding it
// when it is corrupt or of another schema or build. It returns nil (no
// index) when dir is "" or the index cannot be used now: another run
// holds it locked for writing, or the directory cannot be written.
func Open(dir string) *Index {
	if dir == "" {
		return nil
	}
	ix := &Index{path: filepath.Join(dir, FileName), stamp: stamp(), pending: map[string][]byte{}}
	for attempt := 0; attempt < 2; attempt++ {
		err := ix.openView()
		if err == nil {
			return ix
		}
		if errors.Is(err, errBusy) {
			return nil
		}
		// corrupt, another schema or build, or missing: start again
		if err := ix.create(dir); err != nil {
			return nil
		}
	}
	return nil
}

var errBusy = errors.New("index: locked by another run")

// openView opens the read-only view and checks the schema and build.
func (ix *Index) openView() (err error) {
	defer func() {
		if recover() != nil {
			err = errors.New("index: unreadable")
		}
	}()
	if _, err := os.Stat(ix.path); err != nil {
		return err
	}
	db, mapped, err := openBolt(ix.path, &bolt.Options{ReadOnly: true, Timeout: lockWait})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return errBusy
		}
		return err
	}
	tx, err := db.Begin(false)
	if err != nil {
		db.Close()
		return err
	}
	meta, files := tx.Bucket(bucketMeta), tx.Bucket(bucketFiles)
	if meta == nil || files == nil || tx.Bucket(bucketRuns) == nil || tx.Bucket(bucketTimes) == nil || tx.Bucket(bucketBlobs) == nil || !bytes.Equal(meta.Get(keySchema), ix.stamp) {
		tx.Rollback()
		db.Close()
		return errors.New("index: another schema or build")
	}
	ix.view.Lock()
	ix.db, ix.tx, ix.files, ix.mapped = db, tx, files, mapped
	ix.resident.Store(fileResident())
	ix.view.Unlock()
	return nil
}

// openBolt opens the bbolt file at path with o, and returns with it a
// length its mapping holds (for shed): the least of the file's sizes just
// before and just after the open. bbolt maps the file whole as it finds it
// once it holds the lock (and more: it rounds the length up), and a
// mapping only grows, so neither a file that grows nor one cut short while
// it opens gives more than it mapped.
func openBolt(path string, o *bolt.Options) (*bolt.DB, int64, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	db, err := bolt.Open(path, 0o600, o)
	if err != nil {
		return nil, 0, err
	}
	after, err := os.Stat(path)
	if err != nil {
		db.Close()
		return nil, 0, err
	}
	return db, min(before.Size(), after.Size()), nil
}

// create replaces the index file with an empty one of this schema and
// build.
func (ix *Index) create(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// a new file under a temporary name, renamed over the old one: a run
	// that has the old one open goes on with it
	tmp := fmt.Sprintf("%s.%d.tmp", ix.path, os.Getpid())
	os.Remove(tmp)
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: lockWait})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketFiles); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketRuns); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketTimes); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketBlobs); err != nil {
			return err
		}
		if err := meta.Put(keySchema, ix.stamp); err != nil {
			return err
		}
		// an empty index has nothing gone to sweep: its first run would
		// lstat each file it has just read again at its close (3-5 % of a
		// first stats over 40,000 or 100,000 sessions)
		return meta.Put(keySwept, binary.BigEndian.AppendUint64(nil, uint64(time.Now().Unix())))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, ix.path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// stamp identifies the schema and this build of sessctl: the executable's
// device, inode, size and modification time. A value read by another build
// may differ (a scanner fixed), so an index written by one is rebuilt by
// another.
func stamp() []byte {
	b := []byte(schema)
	exe, err := os.Executable()
	if err != nil {
		return b
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return b
	}
	dev, ino := devIno(fi)
	for _, v := range []uint64{dev, ino, uint64(fi.Size()), uint64(fi.ModTime().UnixNano())} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return b
}

// Stats returns what the run did with the index so far.
func (ix *Index) Stats() Stats {
	if ix == nil {
		return Stats{}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.stats
}

// Close writes what the run read and closes the index.
func (ix *Index) Close() error {
	if ix == nil {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.sweep(time.Now())
	err := ix.flush(false)
	ix.spool.close() // when flush had no index to write to
	ix.spool = nil
	ix.closeView()
	if ix.broken {
		os.Remove(ix.path)
	}
	return err
}

func (ix *Index) closeView() {
	ix.view.Lock()
	defer ix.view.Unlock()
	ix.closeViewLocked()
}

// closeViewLocked is closeView with view held for writing.
func (ix *Index) closeViewLocked() {
	ix.txMu.Lock()
	for _, vt := range ix.idle {
		vt.tx.Rollback()
	}
	ix.idle = nil
	ix.txMu.Unlock()
	if ix.tx != nil {
		ix.tx.Rollback()
	}
	if ix.db != nil {
		ix.db.Close()
	}
	ix.db, ix.tx, ix.files = nil, nil, nil
}

// flush writes the pending entries; reopen opens the read-only view again
// after. Called with mu held. An index another run holds is not waited
// for: the entries are dropped (the next run reads those files again).
func (ix *Index) flush(reopen bool) (err error) {
	if (len(ix.pending) == 0 && ix.spool == nil && len(ix.runs) == 0 && !ix.swept) || ix.db == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			ix.broken, err = true, errors.New("index: unreadable")
			ix.closeView()
		}
	}()
	ix.closeView()
	pending, sp, stale, swept, runs := ix.pending, ix.spool, ix.stale, ix.swept, ix.runs
	ix.pending, ix.spool, ix.size, ix.stale, ix.swept, ix.runs = map[string][]byte{}, nil, 0, nil, false, nil
	var src entrySource = newMapSource(pending)
	if sp != nil {
		defer sp.close()
		err := sp.add(pending)
		if err == nil {
			src, err = sp.source()
		}
		if err != nil {
			src = newMapSource(nil) // dropped: the next run reads those files again
		}
	}
	db, mapped, err := openBolt(ix.path, &bolt.Options{Timeout: lockWait})
	if err == nil {
		err = ix.write(db, mapped, src, stale, swept, runs)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}
	if reopen {
		if verr := ix.openView(); verr != nil {
			ix.closeView()
		}
	}
	return err
}

// write puts the entries of src into db, writeChunk of them a
// transaction, and in the last one deletes the stale entries (those of
// src excepted), stores the runs and, when swept, the sweep's time.
func (ix *Index) write(db *bolt.DB, mapped int64, src entrySource, stale [][]byte, swept bool, runs map[string][]byte) error {
	// in key order into pages filled to 90 %: entries put in random order
	// leave half-empty pages (an index twice as large, and as much more
	// mapped into memory)
	lim := writeLimit{mapped: mapped, first: -1}
	for start := 0; ; {
		keys, values, err := src.part(start, writeChunk)
		if err != nil {
			return err
		}
		put, last := len(keys), false // how many this transaction puts
		err = db.Update(func(tx *bolt.Tx) error {
			meta, files, blobs := tx.Bucket(bucketMeta), tx.Bucket(bucketFiles), tx.Bucket(bucketBlobs)
			if meta == nil || files == nil || blobs == nil || !bytes.Equal(meta.Get(keySchema), ix.stamp) {
				return errors.New("index: replaced by another build")
			}
			files.FillPercent = 0.9
			blobs.FillPercent = 1 // only ever appended to
			lim.of(tx.Size())
			var touched int64
			base := fileResident()
			for i, k := range keys {
				if i > 0 && i%shedPuts == 0 {
					if now := fileResident(); base >= 0 && now >= 0 {
						touched += max(now-base, 0)
					}
					// safe inside the write: nothing is written to the
					// file before it commits, and what the tree holds of
					// the mapping is read again as it was
					shed(db.Info().Data, tx.Size(), lim.of(tx.Size()))
					base = fileResident()
					if touched >= writeTouched {
						put = i
						break
					}
				}
				if err := dropBlob(files, blobs, k); err != nil {
					return err
				}
				v, err := withBlob(blobs, values[i])
				if err != nil {
					return err
				}
				if err := files.Put(k, v); err != nil {
					return err
				}
			}
			ix.stats.Written += put
			if last = start+put >= src.len(); !last {
				return nil
			}
			for _, k := range stale {
				if src.has(k) {
					continue // read again by this run: its entry is new
				}
				if err := dropBlob(files, blobs, k); err != nil {
					return err
				}
				if err := files.Delete(k); err != nil {
					return err
				}
				ix.stats.Swept++
			}
			if err := putRuns(tx.Bucket(bucketRuns), tx.Bucket(bucketTimes), runs); err != nil {
				return err
			}
			if swept {
				return meta.Put(keySwept, binary.BigEndian.AppendUint64(nil, uint64(time.Now().Unix())))
			}
			return nil
		})
		if err != nil || last {
			return err
		}
		start += put
		// the pages this part read go before the next part reads more
		db.View(func(tx *bolt.Tx) error {
			shed(db.Info().Data, tx.Size(), lim.of(tx.Size()))
			return nil
		})
	}
}

// writeLimit says how much of the mapping of the db a write holds open a
// shed may drop: what was mapped when the db was opened (openBolt) and,
// once the write has grown the data past the size its first transaction
// found, all of it, for bbolt maps a page before it hands it out, and the
// mapping only grows. Without it the pages past the first size were never shed:
// a first stats over 100,000 sessions, whose entries are all new and go
// to the end of the file, held 20 MiB of the index at the end of its
// write.
type writeLimit struct{ mapped, first int64 }

func (l *writeLimit) of(size int64) int64 {
	if l.first < 0 {
		l.first = size
	}
	if size > l.first {
		return max(l.mapped, size)
	}
	return l.mapped
}

// sweep collects, when the last sweep is sweepEvery old, the keys of the
// entries whose file is gone: its path no longer names a regular file with
// the entry's device and inode. flush deletes them. Without it the entries
// of deleted sessions would stay until their inode is used again or
// sessctl is rebuilt. Called with mu held.
func (ix *Index) sweep(now time.Time) {
	ix.view.Lock()
	defer ix.view.Unlock()
	if ix.files == nil || ix.tx == nil {
		return
	}
	defer func() {
		if recover() != nil { // a damaged page: give the index up
			ix.broken, ix.stale, ix.swept = true, nil, false
			ix.closeViewLocked()
		}
	}()
	if last := ix.tx.Bucket(bucketMeta).Get(keySwept); len(last) == 8 &&
		now.Sub(time.Unix(int64(binary.BigEndian.Uint64(last)), 0)) < sweepEvery {
		return
	}
	c := ix.files.Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		// every leaf of the files is read, and stays resident: drop them
		// as look-ups do (every sweepShed entries: a leaf holds a few
		// dozen, and each page read maps its neighbours too)
		if n++; n%sweepShed == 0 {
			shed(ix.db.Info().Data, ix.tx.Size(), ix.mapped)
		}
		// the head only: the body (perhaps a blob) is not read
		_, _, path, _, ok := entryHead(v)
		gone := !ok || len(k) != 17
		if !gone {
			fi, err := os.Lstat(string(path))
			gone = err != nil || !fi.Mode().IsRegular()
			if !gone {
				dev, ino := devIno(fi)
				gone = dev != binary.BigEndian.Uint64(k[1:9]) || ino != binary.BigEndian.Uint64(k[9:17])
			}
		}
		if gone {
			ix.stale = append(ix.stale, bytes.Clone(k))
		}
	}
	ix.swept = true
}

// Kind names what is stored of a file; a file may have a value of each
// kind. Tag says more of how it was read (the agent, the mode): a value
// stored under another tag is not used.
type Kind byte

// Read reads a file for Get: from byte offset from, continuing state (from
// 0: the whole file, state nil). It returns the value at the end of the
// file and, when the file can be continued later, the state at a point
// before the end (the end of its last complete line) and that point;
// resumeAt 0 when it cannot.
type Read func(state []byte, from int64) (value, resumeState []byte, resumeAt int64, err error)

// entry is what is stored for a file.
type entry struct {
	size, mtime  int64
	headLen      int64
	headHash     uint64
	resumeAt     int64
	tailHash     uint64
	tag          string
	path         string // where the file was when it was read (for the sweep)
	state, value []byte
}

// FileID is a file as the caller's own lstat found it: its device and
// inode, size and modification time (Unix nanoseconds).
type FileID struct {
	Dev, Ino    uint64
	Size, MTime int64
}

// Get returns the value of kind for the file at path: the stored one when
// the file has not changed; otherwise what read returns, continued from
// the stored state when the file only grew. The value is stored for the
// next run when read succeeds. A nil Index, or a path that is not a
// regular file, reads.
func (ix *Index) Get(path string, kind Kind, tag string, read Read) ([]byte, error) {
	return ix.GetFile(path, nil, kind, tag, read)
}

// GetFile is Get of a regular file the caller knows from its own lstat
// (id; nil: Get takes one), so that a run that has just listed its files
// does not stat each of them again.
func (ix *Index) GetFile(path string, id *FileID, kind Kind, tag string, read Read) ([]byte, error) {
	if ix == nil {
		v, _, _, err := read(nil, 0)
		return v, err
	}
	if id == nil {
		fi, err := os.Lstat(path)
		if err == nil && fi.Mode().IsRegular() {
			dev, ino := devIno(fi)
			id = &FileID{Dev: dev, Ino: ino, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
		}
	}
	if id == nil || id.Ino == 0 { // not a regular file, or no inode to know it by
		v, _, _, err := read(nil, 0)
		return v, err
	}
	var kb [keyLen]byte
	kb[0] = byte(kind)
	binary.BigEndian.PutUint64(kb[1:9], id.Dev)
	binary.BigEndian.PutUint64(kb[9:17], id.Ino)
	key := kb[:]
	size, mtime := id.Size, id.MTime

	old, found := ix.lookup(key, &hitOf{tag: tag, size: size, mtime: mtime, path: path})
	if found && old.tag == tag && old.size == size && old.mtime == mtime {
		ix.count(func(s *Stats) { s.Hits++ })
		if old.path != path {
			// renamed (a rotation): the sweep looks for it here now
			moved := old
			moved.path = path
			ix.put(key, &moved)
		}
		return old.value, nil
	}
	var state []byte
	var from int64
	// only a file that grew is continued: one of the same size with
	// another time was written in place
	if found && old.tag == tag && old.resumeAt > 0 && size > old.size && ix.unchangedBefore(path, old) {
		state, from = old.state, old.resumeAt
		ix.count(func(s *Stats) { s.Grown++ })
	} else {
		ix.count(func(s *Stats) { s.Misses++ })
	}
	value, rstate, resumeAt, err := read(state, from)
	if err != nil {
		return value, err
	}
	e := entry{size: size, mtime: mtime, tag: tag, path: path, value: value}
	if !ix.hashes(path, &e, resumeAt) {
		return value, nil
	}
	if resumeAt > 0 {
		e.state = rstate
	}
	ix.put(key, &e)
	return value, nil
}

func (ix *Index) count(f func(*Stats)) {
	ix.mu.Lock()
	f(&ix.stats)
	ix.mu.Unlock()
}

// lookup returns the stored entry under key (a copy: bbolt's bytes are
// valid only in its transaction).
func (ix *Index) lookup(key []byte, want *hitOf) (e entry, ok bool) {
	ix.mu.Lock()
	b, pending := ix.pending[string(key)]
	ix.mu.Unlock()
	if pending {
		return decodeEntry(b)
	}
	e, ok, damaged := ix.lookupView(key, want)
	if damaged {
		// a damaged page: give the index up, and delete it at Close
		ix.mu.Lock()
		ix.broken = true
		ix.closeView()
		ix.mu.Unlock()
	}
	return e, ok
}

// lookupView looks key up in the view, in a transaction no other
// look-up uses at the same time.
func (ix *Index) lookupView(key []byte, want *hitOf) (e entry, ok, damaged bool) {
	ix.view.RLock()
	defer ix.view.RUnlock()
	if ix.db == nil {
		return e, false, false
	}
	vt, ok := ix.takeTx()
	if !ok {
		return e, false, false
	}
	defer func() {
		if recover() != nil {
			e, ok, damaged = entry{}, false, true
		}
		ix.giveTx(vt)
	}()
	e, ok = decodeEntryFor(vt.files.Get(key), want, vt.blobs)
	touched := int64(pageSize)
	if !ok {
		touched = missTouched
	}
	if len(e.value) >= blobMin {
		touched += int64(len(e.value)) + pageSize
	}
	if ix.looked.Add(1)%shedEvery == 0 || ix.unshed.Add(touched) >= shedBytes ||
		ix.unprobed.Add(touched) >= probeBytes && ix.overResident() {
		ix.shedView(vt)
	}
	return e, ok, false
}

// overResident reports whether the files this process maps hold
// residentBytes more than after the last shed, or than the least seen
// since (the kernel may reclaim pages of its own accord).
func (ix *Index) overResident() bool {
	ix.unprobed.Store(0)
	r := fileResident()
	if r < 0 {
		return false
	}
	base := ix.resident.Load()
	if r < base {
		ix.resident.CompareAndSwap(base, r)
		return false
	}
	limit := residentBytes
	if ix.holdLess.Load() {
		limit /= 2
	}
	return r-base >= limit
}

// HoldLess makes the run shed the pages of the index it has read at half
// of residentBytes: for a run whose own state leaves less room (stats over
// many sessions). Over 100,000 sessions a warm stats peaked at 61.8 MiB
// instead of 64.8, in the same time (paired); over 70,000, at 50.0 instead
// of 53.4 but in 9 % more time, which is why it is not for every run.
func (ix *Index) HoldLess() {
	if ix != nil {
		ix.holdLess.Store(true)
	}
}

// shedView sheds the pages of the view the run has read. Called with the
// view held open.
func (ix *Index) shedView(vt viewTx) {
	// every page below the transaction's size is in the mapping
	ix.unshed.Store(0)
	ix.unprobed.Store(0)
	ix.sheds.Add(1)
	shed(ix.db.Info().Data, vt.tx.Size(), ix.mapped)
	ix.resident.Store(fileResident())
}

// Flush writes the entries pending now rather than at Close, and gives
// back the pages of the index the run's look-ups mapped: for a caller done
// looking files up, with more to do before it closes the index. A look-up
// maps the pages around its own too, so the look-ups since the last shed
// (shedEvery, shedBytes) can hold megabytes, and a write reads leaves of
// the files bucket (writeChunk, writeTouched): at the end of a first stats over 40,000
// sessions, which then merged the requests and made the results, its
// peak, that was 6-8 MB of the view and then 3-5 MB of the write at its
// close. Look-ups may still follow; they map again what they read.
func (ix *Index) Flush() error {
	if ix == nil {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.pending) > 0 || ix.spool != nil {
		// the view is closed, and opened anew after the write
		return ix.flush(true)
	}
	ix.inView(ix.shedView)
	return nil
}

// inView calls fn with a transaction of the view, when the view is open
// and one can be had. The locks go in the order mu, view: a caller may
// hold mu, and fn must not take it.
func (ix *Index) inView(fn func(vt viewTx)) {
	ix.view.RLock()
	defer ix.view.RUnlock()
	if ix.db == nil {
		return
	}
	vt, ok := ix.takeTx()
	if !ok {
		return
	}
	defer ix.giveTx(vt)
	fn(vt)
}

// takeTx returns an idle transaction of the view, or a new one. Called
// with view held for reading.
func (ix *Index) takeTx() (viewTx, bool) {
	ix.txMu.Lock()
	if n := len(ix.idle); n > 0 {
		vt := ix.idle[n-1]
		ix.idle = ix.idle[:n-1]
		ix.txMu.Unlock()
		return vt, true
	}
	ix.txMu.Unlock()
	tx, err := ix.db.Begin(false)
	if err != nil {
		return viewTx{}, false
	}
	files, blobs := tx.Bucket(bucketFiles), tx.Bucket(bucketBlobs)
	if files == nil || blobs == nil {
		tx.Rollback()
		return viewTx{}, false
	}
	return viewTx{tx, files, blobs}, true
}

// giveTx hands a transaction back for the next look-up (closeView rolls
// it back).
func (ix *Index) giveTx(vt viewTx) {
	ix.txMu.Lock()
	ix.idle = append(ix.idle, vt)
	ix.txMu.Unlock()
}

func (ix *Index) put(key []byte, e *entry) {
	b := e.encode()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return
	}
	k := string(key)
	ix.size += len(b) - len(ix.pending[k])
	ix.pending[k] = b
	if ix.size >= spillAt {
		ix.spill()
	}
}

// spill appends the pending entries to the run's spool, made on the first
// spill; when it cannot be made or written, the run's entries up to now
// are dropped (the next run reads those files again). Called with mu held.
func (ix *Index) spill() {
	if ix.spool == nil && !ix.unspooled {
		sp, err := makeSpool(filepath.Dir(ix.path)) // the index's own directory
		ix.spool, ix.unspooled = sp, err != nil
	}
	if ix.spool != nil && ix.spool.add(ix.pending) != nil {
		ix.spool.close()
		ix.spool, ix.unspooled = nil, true
	}
	ix.pending, ix.size = map[string][]byte{}, 0
}

// hashes sets e's head and tail hashes from the file; false when the file
// cannot be read.
func (ix *Index) hashes(path string, e *entry, resumeAt int64) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	e.headLen = min(e.size, headSize)
	if e.headHash, err = hashAt(f, 0, e.headLen); err != nil {
		return false
	}
	if resumeAt > 0 {
		e.resumeAt = resumeAt
		start := max(0, resumeAt-headSize)
		if e.tailHash, err = hashAt(f, start, resumeAt-start); err != nil {
			return false
		}
	}
	return true
}

// unchangedBefore reports whether the file still holds, at its head and
// just before the point to continue from, the bytes it held when e was
// stored.
func (ix *Index) unchangedBefore(path string, e entry) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	h, err := hashAt(f, 0, e.headLen)
	if err != nil || h != e.headHash {
		return false
	}
	start := max(0, e.resumeAt-headSize)
	h, err = hashAt(f, start, e.resumeAt-start)
	return err == nil && h == e.tailHash
}

// hashAt returns the hash of the n bytes of f at off, n at most headSize.
// Its buffer is one of a pool's: a first run over 100,000 files hashed
// each head and tail in a buffer of its own (273 MB of garbage).
func hashAt(f *os.File, off, n int64) (uint64, error) {
	if n < 0 || n > headSize {
		// no entry names more (one that does is damaged): not read
		return 0, fmt.Errorf("hashing %d bytes", n)
	}
	bp := hashBufs.Get().(*[]byte)
	defer hashBufs.Put(bp)
	buf := (*bp)[:n]
	if _, err := f.ReadAt(buf, off); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return 0, err
	}
	return xxhash.Sum64(buf), nil
}

var hashBufs = sync.Pool{New: func() any {
	b := make([]byte, headSize)
	return &b
}}

const entryVersion = 3

// entry flags
const (
	stateIsValue = 1 // the state to continue from is the value (the file ends with a newline)
	inBlob       = 2 // the body is in the blobs bucket, under the 8 bytes that follow the head
)

func (e *entry) encode() []byte {
	state := e.state
	var flags byte
	if e.resumeAt > 0 && bytes.Equal(state, e.value) {
		flags, state = stateIsValue, nil
	}
	b := make([]byte, 0, 64+len(e.path)+len(e.tag)+len(state)+len(e.value))
	b = append(b, entryVersion, flags)
	// the path first, then the rest of the head: the sweep reads no body
	b = binary.AppendUvarint(b, uint64(len(e.path)))
	b = append(b, e.path...)
	b = binary.AppendVarint(b, e.size)
	b = binary.AppendVarint(b, e.mtime)
	b = binary.AppendVarint(b, e.headLen)
	b = binary.BigEndian.AppendUint64(b, e.headHash)
	b = binary.AppendVarint(b, e.resumeAt)
	b = binary.BigEndian.AppendUint64(b, e.tailHash)
	for _, s := range [][]byte{[]byte(e.tag), state, e.value} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodeEntry decodes a stored entry, copying its bytes; false for none or
// for bytes it cannot read.
func decodeEntry(b []byte) (e entry, ok bool) { return decodeEntryFor(b, nil, nil) }

// hitOf is what Get looks an entry up for: the file's tag, size,
// modification time and path.
type hitOf struct {
	tag         string
	size, mtime int64
	path        string
}

// decodeEntryFor is decodeEntry, except that an entry that is a hit for
// want (its tag, size, time and path) copies only its value: the state and
// the rest a hit does not use are left out (e.state nil), and the strings
// are want's. A warm ls over 100,000 sessions copied each entry whole.
// The body of an entry kept apart is read from blobs (nil: none can be).
func decodeEntryFor(b []byte, want *hitOf, blobs *bolt.Bucket) (e entry, ok bool) {
	e, flags, rawPath, body, ok := entryHead(b)
	if !ok {
		return entry{}, false
	}
	if flags&inBlob != 0 {
		if blobs == nil {
			return entry{}, false
		}
		body = blobs.Get(body) // nil when missing: not an entry
	}
	rawTag, rawState, rawValue, ok := entryBody(body)
	if !ok {
		return entry{}, false
	}
	if want != nil && string(rawTag) == want.tag && e.size == want.size && e.mtime == want.mtime && string(rawPath) == want.path {
		e.tag, e.path, e.value = want.tag, want.path, bytes.Clone(rawValue)
		return e, true
	}
	e.path, e.tag = string(rawPath), string(rawTag)
	e.state, e.value = bytes.Clone(rawState), bytes.Clone(rawValue)
	if flags&stateIsValue != 0 {
		e.state = e.value
	}
	return e, true
}

// entryHead reads the head of a stored entry (all but its tag, state and
// value); body is the rest: the body itself, or the key of its blob when
// flags hold inBlob.
func entryHead(b []byte) (e entry, flags byte, rawPath, body []byte, ok bool) {
	if len(b) < 2 || b[0] != entryVersion {
		return e, 0, nil, nil, false
	}
	flags = b[1]
	v, k := binary.Uvarint(b[2:])
	if k <= 0 || v > uint64(len(b)-2-k) {
		return e, 0, nil, nil, false
	}
	rawPath = b[2+k : 2+k+int(v)]
	b = b[2+k+int(v):]
	bad := false
	varint := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	u64 := func() uint64 {
		if len(b) < 8 {
			bad = true
			return 0
		}
		v := binary.BigEndian.Uint64(b)
		b = b[8:]
		return v
	}
	e.size, e.mtime, e.headLen = varint(), varint(), varint()
	e.headHash = u64()
	e.resumeAt = varint()
	e.tailHash = u64()
	if bad || e.headLen < 0 || e.headLen > headSize || e.resumeAt < 0 || flags&inBlob != 0 && len(b) != 8 {
		return entry{}, 0, nil, nil, false
	}
	return e, flags, rawPath, b, true
}

// entryBody reads an entry's body: its tag, state and value.
func entryBody(b []byte) (tag, state, value []byte, ok bool) {
	bad := false
	rawOf := func() []byte {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > uint64(len(b)-n) {
			bad = true
			return nil
		}
		out := b[n : n+int(v)]
		b = b[n+int(v):]
		return out
	}
	tag, state, value = rawOf(), rawOf(), rawOf()
	if bad || len(b) != 0 {
		return nil, nil, nil, false
	}
	return tag, state, value, true
}

// withBlob returns the encoded entry v as the files bucket keeps it: with
// a body of blobMin bytes or more put in blobs under the next sequence
// number, and that number in its place. Called in flush's transaction; v
// stays valid until it commits.
func withBlob(blobs *bolt.Bucket, v []byte) ([]byte, error) {
	_, flags, _, body, ok := entryHead(v)
	if !ok || flags&inBlob != 0 || len(body) < blobMin {
		return v, nil
	}
	seq, err := blobs.NextSequence()
	if err != nil {
		return nil, err
	}
	key := binary.BigEndian.AppendUint64(nil, seq)
	if err := blobs.Put(key, body); err != nil {
		return nil, err
	}
	head := v[:len(v)-len(body)]
	out := make([]byte, 0, len(head)+len(key))
	out = append(append(out, head...), key...)
	out[1] |= inBlob
	return out, nil
}

// dropBlob deletes the blob of the entry stored under key, if it has one:
// before the entry is replaced or deleted.
func dropBlob(files, blobs *bolt.Bucket, key []byte) error {
	_, flags, _, body, ok := entryHead(files.Get(key))
	if !ok || flags&inBlob == 0 {
		return nil
	}
	return blobs.Delete(bytes.Clone(body))
}

func devIno(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
