package index

import (
	"bufio"
	"bytes"
	"cmp"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
)

// keyLen is the length of an entry's key: its kind, and its file's device
// and inode (GetFile).
const keyLen = 17

// spillAt is how many bytes of new entries a run holds in memory before it
// appends them to its spool, and the run's entries are written to the
// index only when the run flushes or closes, all at once and in key order
// (Index.flush).
//
// Entries are keyed by device and inode, which follow neither the order a
// run reads its files in nor any other it has, so a run that wrote its
// entries as it went (every 8 MiB of them, as sessctl did) put each part
// into most leaves of the files bucket: a first stats over 100,000
// sessions read the whole bucket again for each part, through the mapping
// (14 MiB of the index resident at a commit, its peak), and wrote twice
// the index's size. Written all at once and in order, a first run's
// entries are appended at the tree's right edge, and a later run's fall
// into as few leaves as they can.
var spillAt = 1 << 20

// spool holds the entries a run has spilled: their values in a file of the
// index's directory that has no name (removed as soon as it is made, where
// the system allows: a run that dies leaves nothing behind), and in memory
// each entry's key and where its value lies: 32 bytes an entry, and no
// pointers for the collector to follow.
type spool struct {
	f    *os.File
	size int64
	recs []spoolRec
	w    *bufio.Writer
}

// spoolRec is where an entry's value lies in the spool.
type spoolRec struct {
	key [keyLen]byte
	n   uint32
	off int64
}

// makeSpool is newSpool; a variable, for tests.
var makeSpool = newSpool

// newSpool makes an empty spool in dir.
func newSpool(dir string) (*spool, error) {
	f, err := os.CreateTemp(dir, ".spool-*")
	if err != nil {
		return nil, err
	}
	if runtime.GOOS != "windows" { // an open file cannot be removed there
		os.Remove(f.Name())
	}
	return &spool{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// add appends the entries of pending.
func (s *spool) add(pending map[string][]byte) error {
	for k, v := range pending {
		if len(k) != keyLen || int64(len(v)) > math.MaxUint32 {
			continue // not made by GetFile, or past any entry's size: never the case
		}
		if _, err := s.w.Write(v); err != nil {
			return err
		}
		var r spoolRec
		copy(r.key[:], k)
		r.n, r.off = uint32(len(v)), s.size
		s.recs = append(s.recs, r)
		s.size += int64(len(v))
	}
	return nil
}

// close closes and removes the spool's file.
func (s *spool) close() {
	if s == nil {
		return
	}
	s.f.Close()
	os.Remove(s.f.Name()) // removed already, but where the system did not let it be
}

// source returns the spool's entries to write, in key order, each key
// once with the value it was last given, and lets go of the spool's list.
func (s *spool) source() (*spoolSource, error) {
	if err := s.w.Flush(); err != nil {
		return nil, err
	}
	s.w = nil
	recs := s.recs
	s.recs = nil
	// by key and, for one key, by when it was given (offset); the last of
	// each key is kept
	slices.SortFunc(recs, func(a, b spoolRec) int {
		if c := bytes.Compare(a.key[:], b.key[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.off, b.off)
	})
	kept := recs[:0]
	for i, r := range recs {
		if i+1 < len(recs) && recs[i+1].key == r.key {
			continue
		}
		kept = append(kept, r)
	}
	return &spoolSource{f: s.f, recs: kept}, nil
}

// entrySource gives write the entries to put, in key order, a part at a
// time.
type entrySource interface {
	len() int
	// part returns the keys and values of entries from i on: at most n
	// of them, and fewer when their values pass partBytes (one at least).
	// They are valid until the next call.
	part(i, n int) (keys, values [][]byte, err error)
	// has reports whether key is among the entries.
	has(key []byte) bool
}

// partBytes is how many bytes of values a part of a spooled write reads
// from the spool at most (more only for one value larger than it).
const partBytes = 1 << 20

// mapSource is the entries a run held in memory.
type mapSource struct {
	keys []string // sorted
	m    map[string][]byte
	k, v [][]byte
}

func newMapSource(m map[string][]byte) *mapSource {
	return &mapSource{keys: slices.Sorted(maps.Keys(m)), m: m}
}

func (s *mapSource) len() int { return len(s.keys) }

func (s *mapSource) part(i, n int) (keys, values [][]byte, err error) {
	s.k, s.v = s.k[:0], s.v[:0]
	for _, k := range s.keys[i:min(i+n, len(s.keys))] {
		s.k, s.v = append(s.k, []byte(k)), append(s.v, s.m[k])
	}
	return s.k, s.v, nil
}

func (s *mapSource) has(key []byte) bool {
	_, ok := s.m[string(key)]
	return ok
}

// spoolSource is the entries of a spool, sorted (spool.source).
type spoolSource struct {
	f    *os.File
	recs []spoolRec
	buf  []byte
	k, v [][]byte
}

func (s *spoolSource) len() int { return len(s.recs) }

func (s *spoolSource) part(i, n int) (keys, values [][]byte, err error) {
	j, size := i, 0
	for j < min(i+n, len(s.recs)) && (j == i || size+int(s.recs[j].n) <= partBytes) {
		size += int(s.recs[j].n)
		j++
	}
	if cap(s.buf) < size {
		s.buf = make([]byte, size)
	}
	buf := s.buf[:size]
	s.k, s.v = s.k[:0], s.v[:0]
	for k := i; k < j; k++ {
		r := &s.recs[k]
		v := buf[:r.n:r.n]
		buf = buf[r.n:]
		if _, err := s.f.ReadAt(v, r.off); err != nil {
			return nil, nil, err
		}
		s.k, s.v = append(s.k, r.key[:]), append(s.v, v)
	}
	return s.k, s.v, nil
}

func (s *spoolSource) has(key []byte) bool {
	_, ok := slices.BinarySearchFunc(s.recs, key, func(r spoolRec, k []byte) int { return bytes.Compare(r.key[:], k) })
	return ok
}
