package session

import (
	"encoding/binary"
	"strings"
	"time"
	"unsafe"

	"github.com/sessctl/sessctl/internal/binenc"
	"github.com/sessctl/sessctl/internal/intern"
)

// List is a list of sessions that need not all be Go values at once:
// a []*Session (Slice), or sessions kept encoded (Packed), each made a
// value only when asked for.
type List interface {
	Len() int
	At(i int) *Session
}

// Slice is a []*Session as a List.
type Slice []*Session

func (s Slice) Len() int          { return len(s) }
func (s Slice) At(i int) *Session { return s[i] }

// Release lets the session at place i go.
func (s Slice) Release(i int) { s[i] = nil }

// Sessions returns the sessions of l as values: l itself when it is a
// Slice.
func Sessions(l List) []*Session {
	if s, ok := l.(Slice); ok {
		return s
	}
	out := make([]*Session, l.Len())
	for i := range out {
		out[i] = l.At(i)
	}
	return out
}

// Packed keeps sessions encoded, about 90 bytes for a session of one
// file against some 330 as a Session, its File and their strings: over
// 150,000 sessions discovery's result held 50 MB as values, the largest
// part of the memory of stats over such a store (docs/index.md). At
// makes a session a value again, with strings of its own.
//
// A session's main file is kept as its directory (a string of a table,
// once for every session in it) and its name; its id, sidecar directory
// and other files' paths as parts of the main file's path where they are;
// agents, projects and roots in the same table. Each file's size and time
// are in fixed-width fields, so that they can be written in place (patch).
type Packed struct {
	chunks [][]byte
	at     []uint64 // the chunk (high 32 bits) and the offset of each
	strs   intern.Table[uint32]
	enc    binenc.Encoder // scratch
	live   []int32        // by chunk, the sessions not let go (Release)
}

// packChunk is the size of the chunks of a Packed's encoding.
const packChunk = 64 << 10

// Len is the number of sessions.
func (p *Packed) Len() int { return len(p.at) }

// Add appends s.
func (p *Packed) Add(s *Session) { p.at = append(p.at, p.put(s)) }

// Set replaces the session at place i by s (its old encoding stays, unused).
func (p *Packed) Set(i int, s *Session) { p.at[i] = p.put(s) }

// Reorder puts the sessions in the order of places: the session at place
// k is the one at place order[k] before.
func (p *Packed) Reorder(order []int32) {
	at := make([]uint64, len(order))
	for k, i := range order {
		at[k] = p.at[i]
	}
	p.at = at
}

// Keep keeps the sessions at the places where keep says so, in order.
func (p *Packed) Keep(keep func(i int) bool) {
	n := 0
	for i, v := range p.at {
		if keep(i) {
			p.at[n] = v
			n++
		}
	}
	p.at = p.at[:n:n]
}

func (p *Packed) put(s *Session) uint64 {
	e := &p.enc
	e.B = e.B[:0]
	e.Uint(uint64(p.strs.ID(string(s.Agent))))
	dir, base := splitPath(s.Main)
	p.path(dir, base)
	p.part(s.Main, s.ID)
	p.part(s.Main, s.Dir)
	e.Uint(uint64(p.strs.ID(s.Project)))
	e.Uint(uint64(p.strs.ID(s.Root)))
	e.Uint(uint64(len(s.Files)))
	for _, f := range s.Files {
		switch {
		case f.Path == s.Main:
			e.Uint(0)
		case dir != "" && strings.HasPrefix(f.Path, dir):
			e.Uint(1)
			e.Str(f.Path[len(dir):])
		default:
			e.Uint(2)
			p.path(splitPath(f.Path))
		}
		flags := uint64(f.Role)
		if f.Dir {
			flags |= 0x80
		}
		e.Uint(flags)
		e.Uint(uint64(uint32(f.Rotation)))
		e.Uint(f.dev)
		e.Uint(f.ino)
		e.B = appendFixed(e.B, f.Size, f.ModTime)
	}
	b := e.B
	last := len(p.chunks) - 1
	if last < 0 || len(p.chunks[last])+len(b) > cap(p.chunks[last]) {
		p.chunks = append(p.chunks, make([]byte, 0, max(packChunk, len(b))))
		last++
	}
	off := len(p.chunks[last])
	p.chunks[last] = append(p.chunks[last], b...)
	return uint64(last)<<32 | uint64(off)
}

// fixedSize is the bytes of a file's size and time.
const fixedSize = 8 + 8 + 4

func appendFixed(b []byte, size int64, t time.Time) []byte {
	var sec int64
	var nsec uint32 // 1 more: 0 is the zero time
	if !t.IsZero() {
		sec, nsec = t.Unix(), uint32(t.Nanosecond())+1
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	b = binary.LittleEndian.AppendUint64(b, uint64(sec))
	return binary.LittleEndian.AppendUint32(b, nsec)
}

// splitPath splits p after its last slash: dir keeps it ("": none).
func splitPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/') + 1
	return p[:i], p[i:]
}

// path writes a path as its directory (its number in the table) and its
// name.
func (p *Packed) path(dir, name string) {
	p.enc.Uint(uint64(p.strs.ID(dir)))
	p.enc.Str(name)
}

// part writes s as 1 + where it is in main and its length when it is a
// part of main, else as 0 and s.
func (p *Packed) part(main, s string) {
	if s != "" {
		if i := strings.Index(main, s); i >= 0 {
			p.enc.Uint(1 + uint64(i))
			p.enc.Uint(uint64(len(s)))
			return
		}
	}
	p.enc.Uint(0)
	p.enc.Str(s)
}

// packReader decodes one session's encoding.
type packReader struct {
	b []byte
	p *Packed
}

func (r *packReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	r.b = r.b[n:]
	return v
}

// str returns the next string, sharing the encoding's bytes: the caller
// copies it, or holds it no longer than the Packed.
func (r *packReader) str() string {
	n := r.uint()
	s := unsafe.String(unsafe.SliceData(r.b), int(n))
	r.b = r.b[n:]
	return s
}

func (r *packReader) path() (dir, name string) {
	dir = r.p.strs.Name(uint32(r.uint()))
	return dir, r.str()
}

// part returns a string written by Packed.part, of its own.
func (r *packReader) part(main string) string {
	if i := r.uint(); i > 0 {
		n := r.uint()
		return main[i-1 : i-1+n]
	}
	return strings.Clone(r.str())
}

func (p *Packed) reader(i int) *packReader {
	v := p.at[i]
	return &packReader{b: p.chunks[v>>32][uint32(v):], p: p}
}

// At makes the session at place i a value.
func (p *Packed) At(i int) *Session {
	s, _ := p.decode(i, false)
	return s
}

// decode is At; with fixed it returns where each file's size and time
// are in its chunk instead of reading them (files).
func (p *Packed) decode(i int, fixed bool) (*Session, []int) {
	r := p.reader(i)
	start := len(r.b)
	s := &Session{Agent: Agent(p.strs.Name(uint32(r.uint())))}
	dir, name := r.path()
	s.Main = dir + name
	s.ID = r.part(s.Main)
	s.Dir = r.part(s.Main)
	s.Project, s.Root = p.strs.Name(uint32(r.uint())), p.strs.Name(uint32(r.uint()))
	s.Files = make([]File, r.uint())
	var offs []int
	if fixed {
		offs = make([]int, len(s.Files))
	}
	for k := range s.Files {
		f := &s.Files[k]
		switch r.uint() {
		case 0:
			f.Path = s.Main
		case 1:
			f.Path = dir + r.str()
		default:
			d, n := r.path()
			f.Path = d + n
		}
		flags := r.uint()
		f.Role, f.Dir = FileRole(flags&0x7f), flags&0x80 != 0
		f.Rotation = int32(uint32(r.uint()))
		f.dev, f.ino = r.uint(), r.uint()
		if fixed {
			offs[k] = int(uint32(p.at[i])) + start - len(r.b)
			r.b = r.b[fixedSize:]
			continue
		}
		f.Size = int64(binary.LittleEndian.Uint64(r.b))
		sec := int64(binary.LittleEndian.Uint64(r.b[8:]))
		if nsec := binary.LittleEndian.Uint32(r.b[16:]); nsec != 0 {
			f.ModTime = time.Unix(sec, int64(nsec-1))
		}
		r.b = r.b[fixedSize:]
	}
	return s, offs
}

// Agent returns the agent of the session at place i.
func (p *Packed) Agent(i int) Agent { return Agent(p.strs.Name(uint32(p.reader(i).uint()))) }

// Main returns the main file of the session at place i as its directory
// and name, sharing the encoding's bytes.
func (p *Packed) Main(i int) (dir, name string) {
	r := p.reader(i)
	r.uint()
	return r.path()
}

// MainPath is Main joined.
func (p *Packed) MainPath(i int) string {
	d, n := p.Main(i)
	return d + n
}

// CompareMain compares the main files of the sessions at places i and j
// as strings, without joining them.
func (p *Packed) CompareMain(i, j int) int {
	d1, n1 := p.Main(i)
	d2, n2 := p.Main(j)
	if d1 == d2 {
		return strings.Compare(n1, n2)
	}
	return compareJoined(d1, n1, d2, n2)
}

// compareJoined compares d1+n1 and d2+n2.
func compareJoined(d1, n1, d2, n2 string) int {
	// the directories decide where they differ before either ends
	k := 0
	for k < len(d1) && k < len(d2) && d1[k] == d2[k] {
		k++
	}
	if k < len(d1) && k < len(d2) {
		return int(d1[k]) - int(d2[k])
	}
	return strings.Compare(d1+n1, d2+n2)
}

// packedFile is where a file's size and time are in a Packed's encoding.
type packedFile struct{ chunk, off int32 }

// files returns the session at place i, with no sizes and times, and
// where each of its files' size and time is: what another goroutine may
// be writing (patch) is not read.
func (p *Packed) files(i int) (*Session, []packedFile) {
	s, offs := p.decode(i, true)
	out := make([]packedFile, len(offs))
	for k, off := range offs {
		out[k] = packedFile{int32(p.at[i] >> 32), int32(off)}
	}
	return s, out
}

// patch writes a file's size and time in place. Calls for different files
// may run side by side.
func (p *Packed) patch(f packedFile, size int64, t time.Time) {
	appendFixed(p.chunks[f.chunk][f.off:f.off], size, t)
}

// Release lets the session at place i go, which is not asked for again:
// a chunk of the encoding goes with the last of its sessions. A scan's
// plan takes the sessions one after another, and holds their paths as it
// goes; the chunks held to its end were 13 MB over 150,000 sessions, on
// top of the paths.
func (p *Packed) Release(i int) {
	if p.live == nil {
		p.live = make([]int32, len(p.chunks))
		for _, v := range p.at {
			p.live[v>>32]++
		}
	}
	c := p.at[i] >> 32
	if p.live[c]--; p.live[c] == 0 {
		p.chunks[c] = nil
	}
}

// Drop lets every session go: the list is empty from here on. A session
// made a value before (At) keeps none of the encoding's bytes.
func (p *Packed) Drop() { *p = Packed{} }
