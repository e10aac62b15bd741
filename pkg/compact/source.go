package compact

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// fileSource is a layout.Source over an open file.
type fileSource struct {
	path string
	f    *os.File
	size int64
	// the lines read by LineAt, by offset (the kept tail, a few more)
	cache map[int64][]byte
}

func openSource(path string) (*fileSource, error) {
	// a compressed rollout is read backwards from a decompressed temporary copy
	f, err := jsonl.OpenRandom(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileSource{path: path, f: f, size: fi.Size(), cache: map[int64][]byte{}}, nil
}

func (s *fileSource) Close() error { return s.f.Close() }

func (s *fileSource) Path() string { return s.path }

// errNoLine is returned for an offset past the end of the file.
var errNoLine = errors.New("no line at that offset")

func (s *fileSource) LineAt(off int64) ([]byte, error) {
	if b, ok := s.cache[off]; ok {
		return b, nil
	}
	if off < 0 || off >= s.size {
		return nil, errNoLine
	}
	// find the newline first, then read the line into one buffer of its
	// size (appending a long line a block at a time cost several times it)
	var line []byte
	buf := make([]byte, 64<<10)
	end, blocks := s.size, 0
	for pos := off; pos < s.size; blocks++ {
		n, err := s.f.ReadAt(buf, pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			end = pos + int64(i)
			break
		}
		pos += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, io.ErrUnexpectedEOF
		}
	}
	if blocks == 0 { // the first block held it all (a break skips blocks++)
		line = append([]byte(nil), buf[:end-off]...)
	} else {
		line = make([]byte, end-off)
		if _, err := s.f.ReadAt(line, off); err != nil && err != io.EOF {
			return nil, err
		}
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	s.cache[off] = line
	return line, nil
}

func (s *fileSource) Backward(ctx context.Context, fn func(off int64, raw []byte) (bool, error)) error {
	const block = 64 << 10
	buf := make([]byte, block)
	// each line is handed over as a buffer of its own size, read once:
	// a line that spans blocks is read again from the file when its start
	// is found, rather than kept block by block and then joined (which held
	// a huge line twice)
	lineOf := func(start, end, blockPos int64, b []byte) ([]byte, error) {
		var l []byte
		if start >= blockPos && end <= blockPos+int64(len(b)) {
			l = append([]byte(nil), b[start-blockPos:end-blockPos]...)
		} else {
			l = make([]byte, end-start)
			if _, err := s.f.ReadAt(l, start); err != nil && err != io.EOF {
				return nil, err
			}
		}
		return bytes.TrimSuffix(l, []byte{'\r'}), nil
	}
	pos, end := s.size, s.size // end: where the line being looked for ends (its newline, or EOF)
	for n := 1; pos > 0; n++ {
		if n%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		k := min(int64(block), pos)
		pos -= k
		b := buf[:k]
		if _, err := s.f.ReadAt(b, pos); err != nil && err != io.EOF {
			return err
		}
		j := len(b)
		for {
			i := bytes.LastIndexByte(b[:j], '\n')
			if i < 0 {
				break // the line goes on before this block
			}
			start := pos + int64(i) + 1
			if start < s.size { // not the nothing after a final newline
				l, err := lineOf(start, end, pos, b)
				if err != nil {
					return err
				}
				if stop, err := fn(start, l); stop || err != nil {
					return err
				}
			}
			end = pos + int64(i)
			j = i
		}
	}
	if s.size > 0 {
		l, err := lineOf(0, end, pos, buf[:0])
		if err != nil {
			return err
		}
		_, err = fn(0, l)
		return err
	}
	return nil
}

func (s *fileSource) Forward(ctx context.Context, from int64, fn func(l *jsonl.Line) error) error {
	if from < 0 || from > s.size {
		return errNoLine
	}
	rd := jsonl.NewReader(io.NewSectionReader(s.f, from, s.size-from))
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if l.Num%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		l.Offset += from
		if err := fn(l); err != nil {
			if err == jsonl.ErrStop {
				return nil
			}
			return err
		}
	}
}
