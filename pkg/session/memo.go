package session

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"sync"
	"unsafe"
)

// A Memo keeps, from one run to the next, a value a command worked out
// for each session from its files: ls keeps the cells of each session's
// row, so that a warm ls over 100,000 sessions neither looks up nor
// renders a row whose session did not change. Each value is kept with a
// fingerprint of the session's files (path, role, device, inode, size,
// modification time), the session's side title (TitleSource), and what
// the caller adds (salt); a value is given back only when the fingerprint
// is the same. The memo is stored through a SnapshotCache (the index),
// with its checksum and build stamp.
type Memo struct {
	key string
	// the memo loaded: every main path and value in one string (a store
	// of 100,000 sessions makes one of about 18 MB), so that holding it
	// costs the garbage collector next to nothing
	arena string
	index map[string]int32 // main path -> its entry
	ents  []memoRef
	used  []bool // the entries a Get gave this run (one per session: no lock)

	mu    sync.Mutex
	added []memoAdded // values put this run
}

type memoRef struct {
	fp         [16]byte
	off, n     uint32 // the value in arena
	mOff, mLen uint32 // the main path in arena
}

type memoAdded struct {
	main  string
	fp    [16]byte
	value string
}

// memoMagic heads a stored Memo.
const memoMagic = "sessctl-memo-3"

// LoadMemo loads the memo of name kept for roots (an empty one when there
// is none, or c is nil).
func LoadMemo(c SnapshotCache, name string, roots []Root) *Memo {
	m := &Memo{key: name + "\x00" + snapshotKey(roots, false)}
	if c == nil || !snapshots {
		return m
	}
	rc := c.LoadSnapshot(m.key)
	if rc == nil {
		return m
	}
	defer rc.Close()
	d := &snapDecoder{r: bufio.NewReaderSize(rc, 64<<10)}
	if string(d.bytes(nil)) != memoMagic {
		return m
	}
	n, size := d.count(), d.uint()
	if size > 1<<31 {
		return m
	}
	arena := make([]byte, 0, min(size, 64<<20))
	ents := make([]memoRef, 0, min(n, 1<<20))
	for i := 0; i < n && d.err == nil; i++ {
		var e memoRef
		main := d.path()
		e.mOff, e.mLen = uint32(len(arena)), uint32(len(main))
		arena = append(arena, main...)
		if _, err := io.ReadFull(d.r, e.fp[:]); err != nil {
			return m
		}
		e.off = uint32(len(arena))
		arena = d.bytes(arena)
		e.n = uint32(len(arena)) - e.off
		if uint64(len(arena)) > 1<<31 {
			return m
		}
		ents = append(ents, e)
	}
	if d.err != nil {
		return m
	}
	if _, err := d.r.ReadByte(); err != io.EOF {
		return m // damaged: the checksum did not hold
	}
	m.arena = unsafe.String(unsafe.SliceData(arena), len(arena)) // never written again
	m.ents = ents
	m.used = make([]bool, len(ents))
	m.index = make(map[string]int32, len(ents))
	for i, e := range ents {
		m.index[m.arena[e.mOff:e.mOff+e.mLen]] = int32(i)
	}
	return m
}

// fingerprint is what a value of s depends on: a SHA-256 of it, cut to
// 128 bits; zero when s has a file known by no inode (not found by
// discovery), whose value is never taken.
func fingerprint(s *Session, salt string) (fp [16]byte) {
	var buf [1024]byte
	b := buf[:0]
	str := func(v string) {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	str(string(s.Agent))
	str(s.ID)
	str(s.Project)
	if ts, ok := As[TitleSource](s.Agent); ok {
		t, src := ts.SideTitle(s)
		str(t)
		str(src)
	}
	str(salt)
	for _, f := range s.Files {
		if f.ino == 0 && !f.Dir {
			return [16]byte{}
		}
		str(f.Path)
		str(f.Role.String())
		b = binary.AppendUvarint(b, f.dev)
		b = binary.AppendUvarint(b, f.ino)
		b = binary.AppendVarint(b, f.Size)
		b = binary.AppendVarint(b, f.ModTime.Unix())
		b = binary.AppendVarint(b, int64(f.ModTime.Nanosecond()))
		b = binary.AppendVarint(b, int64(f.Rotation))
		if f.Dir {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	sum := sha256.Sum256(b)
	copy(fp[:], sum[:])
	return fp
}

// Get returns the value kept for s and salt, when its files are as they
// were; the value is kept for the next run as well. Safe for concurrent
// use, each session once.
func (m *Memo) Get(s *Session, salt string) (string, bool) {
	if m == nil {
		return "", false
	}
	i, ok := m.index[s.Main]
	if !ok {
		return "", false
	}
	e := &m.ents[i]
	if fp := fingerprint(s, salt); fp == ([16]byte{}) || fp != e.fp {
		return "", false
	}
	m.used[i] = true
	return m.arena[e.off : e.off+e.n], true
}

// Put keeps value for s and salt for the next run. Safe for concurrent
// use.
func (m *Memo) Put(s *Session, salt string, value string) {
	if m == nil {
		return
	}
	fp := fingerprint(s, salt)
	if fp == ([16]byte{}) {
		return
	}
	m.mu.Lock()
	m.added = append(m.added, memoAdded{s.Main, fp, value})
	m.mu.Unlock()
}

// Save stores what this run gave and found, in place of what was loaded,
// unless that is the same. The caller saves only a run that went over
// every session of its roots: the values of sessions a run did not reach
// are not kept.
func (m *Memo) Save(c SnapshotCache) {
	if m == nil || c == nil || !snapshots {
		return
	}
	used := 0
	for _, u := range m.used {
		if u {
			used++
		}
	}
	if len(m.added) == 0 && used == len(m.ents) {
		return
	}
	c.SaveSnapshot(m.key, func(w io.Writer) error {
		e := &snapEncoder{w: bufio.NewWriterSize(w, 64<<10), table: map[string]uint64{}}
		e.bytes([]byte(memoMagic))
		size := 0 // of the arena LoadMemo makes
		for i, r := range m.ents {
			if m.used[i] {
				size += int(r.mLen + r.n)
			}
		}
		for _, a := range m.added {
			size += len(a.main) + len(a.value)
		}
		e.uint(uint64(used + len(m.added)))
		e.uint(uint64(size))
		for i, r := range m.ents {
			if m.used[i] {
				e.path(m.arena[r.mOff : r.mOff+r.mLen])
				e.raw(r.fp[:])
				e.bytes([]byte(m.arena[r.off : r.off+r.n]))
			}
		}
		for _, a := range m.added {
			e.path(a.main)
			e.raw(a.fp[:])
			e.bytes([]byte(a.value))
		}
		if e.err != nil {
			return e.err
		}
		return e.w.Flush()
	})
}
