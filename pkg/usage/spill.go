package usage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Requests spilled to disk: what keeps the memory of a Ledger and of a
// Sorter flat however many requests a store holds. Everything goes to
// unnamed files in one private directory under $TMPDIR (os.MkdirTemp, mode
// 0700; the files 0600): each file is unlinked as soon as it is created,
// so the kernel frees it when it is closed or the process ends, however it
// ends. Close removes the directory.

// requestSize is the size of a Request on disk (encodeRequest).
const requestSize = 6*8 + 4 + 8 + 4 + 4 + 8 + 8 + 8 + 8 + 1

// encodeRequest writes r into b[:requestSize].
func encodeRequest(b []byte, r *Request) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(r.Usage.Input))
	le.PutUint64(b[8:], uint64(r.Usage.Output))
	le.PutUint64(b[16:], uint64(r.Usage.CacheRead))
	le.PutUint64(b[24:], uint64(r.Usage.CacheCreation))
	le.PutUint64(b[32:], uint64(r.Usage.Reasoning))
	le.PutUint64(b[40:], uint64(r.Usage.CacheCreation1h))
	le.PutUint32(b[48:], uint32(r.Model))
	le.PutUint64(b[52:], uint64(r.Time))
	le.PutUint32(b[60:], uint32(r.Line))
	le.PutUint32(b[64:], uint32(r.File))
	le.PutUint64(b[68:], r.Key)
	le.PutUint64(b[76:], r.MsgKey)
	le.PutUint64(b[84:], math.Float64bits(r.CostUSD))
	le.PutUint64(b[92:], r.line)
	var f byte
	for i, set := range [...]bool{r.Sidechain, r.Speed, r.HasCost, r.Counted, r.CCUsage} {
		if set {
			f |= 1 << i
		}
	}
	b[100] = f
}

// decodeRequest reads what encodeRequest wrote.
func decodeRequest(b []byte, r *Request) {
	le := binary.LittleEndian
	r.Usage.Input = int64(le.Uint64(b[0:]))
	r.Usage.Output = int64(le.Uint64(b[8:]))
	r.Usage.CacheRead = int64(le.Uint64(b[16:]))
	r.Usage.CacheCreation = int64(le.Uint64(b[24:]))
	r.Usage.Reasoning = int64(le.Uint64(b[32:]))
	r.Usage.CacheCreation1h = int64(le.Uint64(b[40:]))
	r.Model = ModelID(le.Uint32(b[48:]))
	r.Time = int64(le.Uint64(b[52:]))
	r.Line = int32(le.Uint32(b[60:]))
	r.File = int32(le.Uint32(b[64:]))
	r.Key = le.Uint64(b[68:])
	r.MsgKey = le.Uint64(b[76:])
	r.CostUSD = math.Float64frombits(le.Uint64(b[84:]))
	r.line = le.Uint64(b[92:])
	f := b[100]
	r.Sidechain, r.Speed, r.HasCost, r.Counted, r.CCUsage = f&1 != 0, f&2 != 0, f&4 != 0, f&8 != 0, f&16 != 0
}

// spills counts the spill directories made (Spills).
var spills atomic.Int64

// Spills is how many ledgers and sorters of this process have spilled to
// disk so far: tests and measurements check with it that a budget made
// them spill.
func Spills() int64 { return spills.Load() }

// spillDir is the private directory of one Ledger's or Sorter's files,
// made on the first file.
type spillDir struct {
	// uncounted: not a ledger's or a sorter's (SpillFile), not in Spills
	uncounted bool
	mu        sync.Mutex
	dir       string
	n         int
	files     []*os.File
}

// create returns a new empty file for reading and writing, already
// unlinked.
func (d *spillDir) create() (*os.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dir == "" {
		dir, err := os.MkdirTemp("", "sessctl-usage-")
		if err != nil {
			return nil, fmt.Errorf("spilling usage to disk: %w", err)
		}
		d.dir = dir
		if !d.uncounted {
			spills.Add(1)
		}
	}
	d.n++
	name := filepath.Join(d.dir, fmt.Sprintf("%d", d.n))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spilling usage to disk: %w", err)
	}
	// the file lives as long as it is open, and no longer
	os.Remove(name)
	d.files = append(d.files, f)
	return f, nil
}

// close closes every file and removes the directory.
func (d *spillDir) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for _, f := range d.files {
		f.Close()
	}
	d.files = nil
	if d.dir != "" {
		errs = append(errs, os.RemoveAll(d.dir))
		d.dir = ""
	}
	return errors.Join(errs...)
}

// Dir is where the files are, "" before the first (for tests).
func (d *spillDir) path() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dir
}

// spillFile is a file written once from the start, then read back in
// sections (each with its own buffer; ReadAt reads at an offset, so
// several sections read at once).
type spillFile struct {
	f   *os.File
	w   *bufio.Writer
	off int64 // bytes written
}

func newSpillFile(d *spillDir, buf int) (*spillFile, error) {
	f, err := d.create()
	if err != nil {
		return nil, err
	}
	return &spillFile{f: f, w: bufio.NewWriterSize(f, buf)}, nil
}

func (s *spillFile) write(b []byte) error {
	n, err := s.w.Write(b)
	s.off += int64(n)
	if err != nil {
		return fmt.Errorf("spilling usage to disk: %w", err)
	}
	return nil
}

func (s *spillFile) flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("spilling usage to disk: %w", err)
	}
	return nil
}

// section returns a buffered reader of bytes [from, to).
func (s *spillFile) section(from, to int64, buf int) *bufio.Reader {
	return bufio.NewReaderSize(io.NewSectionReader(s.f, from, to-from), buf)
}
