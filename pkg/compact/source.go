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
	var pending [][]byte // the pieces of the line being read, last piece first
	line := func(first []byte) []byte {
		n := len(first)
		for _, p := range pending {
			n += len(p)
		}
		out := make([]byte, 0, n)
		out = append(out, first...)
		for i := len(pending) - 1; i >= 0; i-- {
			out = append(out, pending[i]...)
		}
		pending = pending[:0]
		return bytes.TrimSuffix(out, []byte{'\r'})
	}
	pos := s.size
	for n := 1; pos > 0; n++ {
		if n%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		k := min(int64(block), pos)
		pos -= k
		b := make([]byte, k)
		if _, err := s.f.ReadAt(b, pos); err != nil && err != io.EOF {
			return err
		}
		j := len(b)
		for {
			i := bytes.LastIndexByte(b[:j], '\n')
			if i < 0 {
				pending = append(pending, b[:j])
				break
			}
			start := pos + int64(i) + 1
			l := line(b[i+1 : j])
			if start < s.size { // not the nothing after a final newline
				if stop, err := fn(start, l); stop || err != nil {
					return err
				}
			}
			j = i
		}
	}
	if s.size > 0 {
		_, err := fn(0, line(nil))
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
