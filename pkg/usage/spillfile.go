package usage

import (
	"errors"
	"fmt"
)

// SpillFile is a file for a caller's own data that is too large to hold
// in memory, made as the ledger's spills are (spill.go): unnamed, in a
// private directory under $TMPDIR, gone when it is closed or the process
// ends. It is written from the start, then read at offsets.
type SpillFile struct {
	dir spillDir
	f   *spillFile
}

// NewSpillFile makes an empty SpillFile; nothing is created on disk
// before the first Write.
func NewSpillFile() *SpillFile { return &SpillFile{dir: spillDir{uncounted: true}} }

// Write appends b and returns the offset it starts at.
func (s *SpillFile) Write(b []byte) (int64, error) {
	if s.f == nil {
		f, err := newSpillFile(&s.dir, 256<<10)
		if err != nil {
			return 0, err
		}
		s.f = f
	}
	at := s.f.off
	return at, s.f.write(b)
}

// ReadAt reads len(b) bytes at offset off, written before by Write.
func (s *SpillFile) ReadAt(b []byte, off int64) error {
	if s.f == nil {
		return errSpillRange
	}
	if s.f.w.Buffered() > 0 {
		if err := s.f.flush(); err != nil {
			return err
		}
	}
	if _, err := s.f.f.ReadAt(b, off); err != nil {
		return fmt.Errorf("reading back what was spilled to disk: %w", err)
	}
	return nil
}

// Close removes the file.
func (s *SpillFile) Close() error {
	s.f = nil
	return s.dir.close()
}

var errSpillRange = errors.New("reading back what was spilled to disk: nothing was written")
