package jsonl

import (
	"bytes"
	"io"
)

// Backward reads the lines of a file from its end towards its start: for
// a reader that needs only the end of a long file (the context gauge of
// `watch` needs the records after the last recorded usage). Memory is
// bounded by the longest line kept (MaxLineSize); a longer line is
// reported TooLong without its bytes. Line numbers are not known reading
// backwards: Num is 0.
type Backward struct {
	// MaxLineSize bounds the bytes kept for one line; zero means
	// DefaultMaxLineSize.
	MaxLineSize int

	src  io.ReaderAt
	buf  []byte // the file's bytes [start, end) not yet returned
	from int64  // file offset of buf[0]
	end  int64  // end of the complete lines not yet returned
	line Line
}

// NewBackward reads the lines of src that end before offset size (the
// file's size).
func NewBackward(src io.ReaderAt, size int64) *Backward {
	return &Backward{src: src, from: size, end: size}
}

// chunk is how much Backward reads at a time.
const backChunk = 64 << 10

// more reads up to n bytes before the window; false at the start of the
// file.
func (b *Backward) more(n int) (bool, error) {
	if b.from == 0 {
		return false, nil
	}
	k := int64(min(n, backChunk<<4))
	k = min(k, b.from)
	nb := make([]byte, int(k)+len(b.buf))
	if _, err := b.src.ReadAt(nb[:k], b.from-k); err != nil && err != io.EOF {
		return false, err
	}
	copy(nb[k:], b.buf)
	b.buf, b.from = nb, b.from-k
	return true, nil
}

// Partial returns the bytes after the last newline (an unterminated last
// line: a record still being written, or a torn one) and its offset;
// call it first. ok is false when it is longer than MaxLineSize (its bytes
// are not returned then).
func (b *Backward) Partial() (raw []byte, off int64, ok bool, err error) {
	limit := b.max()
	for {
		if i := bytes.LastIndexByte(b.buf, '\n'); i >= 0 {
			raw = b.buf[i+1:]
			b.end = b.from + int64(i) + 1
			b.buf = b.buf[:i+1]
			return raw, b.end, true, nil
		}
		if len(b.buf) > limit {
			if err := b.skipBack(); err != nil {
				return nil, 0, false, err
			}
			off := b.from + int64(len(b.buf))
			b.end = off
			return nil, off, false, nil
		}
		got, err := b.more(max(backChunk, len(b.buf)))
		if err != nil {
			return nil, 0, false, err
		}
		if !got {
			raw = b.buf
			b.end, b.buf = 0, nil
			return raw, 0, true, nil
		}
	}
}

func (b *Backward) max() int {
	if b.MaxLineSize > 0 {
		return b.MaxLineSize
	}
	return DefaultMaxLineSize
}

// skipBack drops the window and reads back to the newline before it,
// keeping only the bytes up to and including that newline in the window
// (nothing, at the start of the file).
func (b *Backward) skipBack() error {
	b.buf = b.buf[:0]
	scratch := make([]byte, backChunk)
	for b.from > 0 {
		k := min(int64(backChunk), b.from)
		if _, err := b.src.ReadAt(scratch[:k], b.from-k); err != nil && err != io.EOF {
			return err
		}
		b.from -= k
		if i := bytes.LastIndexByte(scratch[:k], '\n'); i >= 0 {
			b.buf = append(b.buf, scratch[:i+1]...)
			return nil
		}
	}
	return nil
}

// Prev returns the line before the last one returned (the first call: the
// last complete line), classified as a Reader would, or io.EOF at the start
// of the file. The Line is valid until the next call.
func (b *Backward) Prev() (*Line, error) {
	if b.end <= 0 {
		return nil, io.EOF
	}
	// the window ends with the line's newline
	limit := b.max()
	for {
		body := b.buf[:len(b.buf)-1] // without the newline
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 || b.from == 0 {
			start := i + 1 // 0 when no newline: the first line of the file
			raw := body[start:]
			off := b.from + int64(start)
			b.buf = b.buf[:start]
			b.end = off
			return b.make(raw, off), nil
		}
		if len(body) > limit {
			if err := b.skipBack(); err != nil {
				return nil, err
			}
			off := b.from + int64(len(b.buf))
			l := &b.line
			*l = Line{Offset: off, Len: b.end - off - 1, EOL: LF, Status: TooLong}
			b.end = off
			return l, nil
		}
		if _, err := b.more(max(backChunk, len(b.buf))); err != nil {
			return nil, err
		}
	}
}

func (b *Backward) make(raw []byte, off int64) *Line {
	l := &b.line
	*l = Line{Offset: off, EOL: LF}
	if len(raw) > 0 && raw[len(raw)-1] == '\r' {
		raw = raw[:len(raw)-1]
		l.EOL = CRLF
	}
	l.Raw, l.Len = raw, int64(len(raw))
	l.Status, l.RawControl = classify(raw, true, false)
	return l
}
