// Package jsonl reads and writes JSON Lines files without losing a byte.
//
// The Reader streams a file line by line and reports, for every line, its
// number, byte offset, exact bytes, line ending and a Status saying whether it
// is a usable JSON object. Bad lines never stop the read. Memory is bounded by
// the longest line (and by Reader.MaxLineSize), never by the file.
//
// The package imports nothing else from sessctl.
package jsonl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Status classifies one line.
type Status uint8

// Line statuses. Every status other than OK and Blank is a corrupt line.
const (
	OK          Status = iota // a JSON object
	Blank                     // empty or white space only
	InvalidJSON               // not valid JSON
	NotObject                 // valid JSON, but not an object
	InvalidUTF8               // valid JSON syntax, but the bytes are not valid UTF-8
	ContainsNUL               // holds a NUL byte (binary garbage, a torn write into a sparse file)
	Truncated                 // the last line, without a newline and not valid JSON: a crash mid-write
	TooLong                   // longer than Reader.MaxLineSize; its bytes were skipped, not kept
	Undecodable               // a compressed file's stream is damaged here: this line and the rest cannot be read
)

var statusNames = [...]string{
	OK:          "ok",
	Blank:       "blank",
	InvalidJSON: "invalid_json",
	NotObject:   "not_object",
	InvalidUTF8: "invalid_utf8",
	ContainsNUL: "contains_nul",
	Truncated:   "truncated",
	TooLong:     "too_long",
	Undecodable: "undecodable",
}

// String returns the stable name used in JSON output.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", s)
}

// Corrupt reports whether a line with this status is damaged.
func (s Status) Corrupt() bool { return s != OK && s != Blank }

// Describe says in words what is wrong with a line of this status.
func (s Status) Describe() string {
	switch s {
	case OK:
		return "a JSON object"
	case Blank:
		return "blank line"
	case InvalidJSON:
		return "not valid JSON"
	case NotObject:
		return "valid JSON but not an object"
	case InvalidUTF8:
		return "invalid UTF-8"
	case ContainsNUL:
		return "contains NUL bytes"
	case Truncated:
		return "truncated last line (no newline, incomplete JSON: a crash mid-write?)"
	case TooLong:
		return "line longer than the maximum line size"
	case Undecodable:
		return "compressed stream damaged here (truncated or corrupt .zst): nothing from this point on can be read"
	}
	return s.String()
}

// EOL is the terminator a line ended with.
type EOL uint8

// Line terminators.
const (
	NoEOL EOL = iota // the last line of a file that does not end with a newline
	LF
	CRLF
)

// Len is the number of bytes of the terminator.
func (e EOL) Len() int {
	switch e {
	case LF:
		return 1
	case CRLF:
		return 2
	}
	return 0
}

// Bytes returns the terminator itself.
func (e EOL) Bytes() []byte {
	switch e {
	case LF:
		return []byte{'\n'}
	case CRLF:
		return []byte{'\r', '\n'}
	}
	return nil
}

// Line is one line of a file. Raw is only valid until the next call of
// Reader.Next: copy it (or use Clone) to keep it.
type Line struct {
	Num    int    // 1-based line number
	Offset int64  // byte offset of the first byte of the line
	Raw    []byte // the line's bytes without the terminator (nil for TooLong)
	Len    int64  // length of the line without the terminator (also for TooLong)
	EOL    EOL
	Status Status
	// RawControl is set on OK lines whose strings hold raw control
	// characters: accepted the way Python's json.loads(strict=False) accepts
	// them, but encoding/json needs Strict(Raw) to decode them.
	RawControl bool
}

// End is the offset just after the line's terminator.
func (l *Line) End() int64 { return l.Offset + l.Len + int64(l.EOL.Len()) }

// Clone returns a copy of the line that owns its bytes.
func (l *Line) Clone() Line {
	c := *l
	c.Raw = bytes.Clone(l.Raw)
	return c
}

// LineError locates a problem in a file. Callers test for it with errors.As.
type LineError struct {
	Path   string
	Line   int
	Offset int64
	Err    error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d (byte %d): %v", e.Path, e.Line, e.Offset, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// DefaultMaxLineSize is the longest line a Reader keeps in memory by default.
// Longer lines are skipped up to their newline and reported as TooLong.
const DefaultMaxLineSize = 256 << 20

// Reader reads lines from an io.Reader.
type Reader struct {
	// MaxLineSize bounds the bytes kept for one line. Zero means
	// DefaultMaxLineSize.
	MaxLineSize int
	// SkipValidation leaves every non-blank line's Status as OK unless it is
	// TooLong or a final line without newline; for callers that only count
	// lines or copy bytes.
	SkipValidation bool

	br     *bufio.Reader
	big    []byte
	num    int
	offset int64
	line   Line
	err    error
	damage *CompressedError // the damaged compressed stream that ended the read

	// src is the source when it can be read ahead without consuming it (a
	// file: io.ReaderAt and io.Seeker), and base the source offset of the
	// Reader's first byte; a long line is measured there before it is
	// gathered (see readLine). scratch is the buffer for that.
	src     io.ReaderAt
	base    int64
	scratch []byte
	pooled  bool // br is pooledBufs' (Release)
}

// NewReader returns a Reader with a 64 KiB buffer.
func NewReader(r io.Reader) *Reader {
	return NewReaderSize(r, 64<<10)
}

// NewReaderSize returns a Reader with a buffer of size bytes (at least 16);
// for small files, a buffer the size of the file saves allocation. Lines
// longer than the buffer are still read whole.
func NewReaderSize(r io.Reader, size int) *Reader {
	return newReader(r, bufio.NewReaderSize(r, size))
}

// pooledBufs are the buffers of NewPooledReader's Readers.
var pooledBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// NewPooledReader is NewReader with a buffer taken from a pool, which
// Release gives back: for a caller that reads many files one after
// another on each of a few goroutines (ls summarizes 100,000 of them: a
// buffer each was 890 MB of garbage in its first run).
func NewPooledReader(r io.Reader) *Reader {
	br := pooledBufs.Get().(*bufio.Reader)
	br.Reset(r)
	rd := newReader(r, br)
	rd.pooled = true
	return rd
}

// Release gives the buffer of a NewPooledReader Reader back to its pool
// (for any other Reader it does nothing). Neither the Reader nor a line it
// gave may be used after it.
func (r *Reader) Release() {
	if !r.pooled || r.br == nil {
		return
	}
	r.br.Reset(nil)
	pooledBufs.Put(r.br)
	r.br, r.line = nil, Line{}
}

func newReader(r io.Reader, br *bufio.Reader) *Reader {
	rd := &Reader{br: br}
	if ra, ok := r.(io.ReaderAt); ok {
		if sk, ok := r.(io.Seeker); ok {
			if off, err := sk.Seek(0, io.SeekCurrent); err == nil {
				rd.src, rd.base = ra, off
			}
		}
	}
	return rd
}

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int64 { return r.offset }

// StartAt tells a new Reader whose source begins inside a file where it
// begins: the byte offset and the number of lines before it, so that
// Line.Num and Line.Offset count from the start of the file.
func (r *Reader) StartAt(offset int64, lines int) {
	r.offset, r.num = offset, lines
}

// SkipTo reads src up to byte offset from, counting newlines without
// decoding anything, and returns a Reader for the rest whose lines are
// numbered and placed as in the whole file. A line that straddles from is
// skipped whole. src should be at its start; a file is read through
// ReadAt and left positioned at the first line returned.
func SkipTo(src io.Reader, from int64) (*Reader, error) {
	if from <= 0 {
		return NewReader(src), nil
	}
	file, seekable := src.(interface {
		io.ReaderAt
		io.Seeker
	})
	br := bufio.NewReaderSize(io.LimitReader(src, from), 64<<10)
	if seekable {
		br = bufio.NewReaderSize(io.NewSectionReader(file, 0, from), 64<<10)
	}
	lines := 0
	var last byte = '\n'
	var n int64
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			n += int64(len(chunk))
			last = chunk[len(chunk)-1]
			if last == '\n' {
				lines++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return nil, err
		}
	}
	if seekable {
		if _, err := file.Seek(n, io.SeekStart); err != nil {
			return nil, err
		}
	}
	r := NewReader(src)
	r.StartAt(n, lines)
	if last != '\n' {
		// from is inside a line: skip the rest of it
		if _, err := r.Next(); err != nil && err != io.EOF {
			return nil, err
		}
	}
	return r, nil
}

// Next returns the next line, or io.EOF after the last one. Other errors come
// from the underlying reader. The returned Line is reused by the next call.
func (r *Reader) Next() (*Line, error) {
	if r.err != nil {
		return nil, r.err
	}
	max := r.MaxLineSize
	if max <= 0 {
		max = DefaultMaxLineSize
	}
	raw, n, sawNewline, tooLong, err := r.readLine(max)
	if err != nil && err != io.EOF {
		if errors.As(err, &r.damage) {
			return r.undecodable(raw, n, tooLong), nil
		}
		r.err = err
		return nil, err
	}
	if n == 0 && !sawNewline {
		r.err = io.EOF
		return nil, io.EOF
	}
	r.num++
	l := &r.line
	*l = Line{Num: r.num, Offset: r.offset}
	r.offset += n
	if sawNewline {
		l.EOL = LF
		if tooLong {
			// raw is not kept; whether a CR preceded the LF is unknown and irrelevant
			l.Len = n - 1
		} else {
			raw = raw[:len(raw)-1]
			l.Len = int64(len(raw))
			if len(raw) > 0 && raw[len(raw)-1] == '\r' {
				raw = raw[:len(raw)-1]
				l.EOL = CRLF
				l.Len--
			}
		}
	} else {
		l.Len = n
	}
	if tooLong {
		l.Status = TooLong
		return l, nil
	}
	l.Raw = raw
	l.Status, l.RawControl = classify(raw, sawNewline, r.SkipValidation)
	return l, nil
}

// undecodable ends the read at a damaged compressed stream: what was
// decoded of the line the damage cut is the last line, Undecodable (its
// bytes kept unless too long), and the next call returns io.EOF.
func (r *Reader) undecodable(raw []byte, n int64, tooLong bool) *Line {
	r.err = io.EOF
	r.num++
	l := &r.line
	*l = Line{Num: r.num, Offset: r.offset, Len: n, Status: Undecodable}
	if !tooLong {
		l.Raw = raw
	}
	r.offset += n
	return l
}

// Damage is the damaged compressed stream that ended the read (the cause of
// the last line's Undecodable), or nil.
func (r *Reader) Damage() *CompressedError { return r.damage }

// keepBig is the largest line buffer kept from one line to the next; the
// buffer of a longer line is dropped (Line.Raw is only valid until the next
// call of Next), so one huge line does not hold its memory for the rest of
// the file.
const keepBig = 4 << 20

// readLine returns the bytes up to and including the next newline. When the
// line exceeds max bytes the rest is discarded and tooLong is set; n is always
// the full number of bytes consumed.
//
// A too-long line is skipped by streaming to its newline through the
// buffer, never gathered. When the source is a file, a line longer than the
// buffer is first measured by reading ahead (ReadAt, nothing kept) up to its
// newline or past max: a line known to be too long then streams by, and one
// that fits is gathered into one buffer of exactly its size (no growing and
// copying). Other sources gather up to max before they know.
func (r *Reader) readLine(max int) (raw []byte, n int64, sawNewline, tooLong bool, err error) {
	if cap(r.big) > keepBig {
		r.big = nil
	}
	frag, err := r.br.ReadSlice('\n')
	if err == nil {
		return frag, int64(len(frag)), true, false, nil
	}
	if err != bufio.ErrBufferFull {
		return frag, int64(len(frag)), false, false, err
	}
	// a long line: gather the pieces
	n = int64(len(frag))
	limit := int64(max) + 2 // +2 leaves room for the terminator
	if r.src == nil {
		return r.gather(frag, n, limit)
	}
	if r.src != nil {
		if total, ok := r.measure(n, limit); ok {
			switch {
			case total > limit:
				tooLong = true
			case int(total) > cap(r.big):
				r.big = make([]byte, 0, total)
			}
		}
	}
	if !tooLong {
		r.big = append(r.big[:0], frag...)
	}
	for {
		frag, err = r.br.ReadSlice('\n')
		n += int64(len(frag))
		if !tooLong {
			if int64(len(r.big)+len(frag)) > limit {
				tooLong = true
				r.big = nil
			} else {
				r.big = grow(r.big, len(frag), limit)
				r.big = append(r.big, frag...)
			}
		}
		switch err {
		case nil:
			return r.big, n, true, tooLong, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return r.big, n, false, tooLong, err
		}
	}
}

// gather reads the rest of a long line from a source that cannot be
// measured ahead (a pipe, a compressed file): the pieces are kept in blocks
// that never move, so a line that turns out too long has held at most limit
// bytes (no buffer doubled and copied on the way), and one that fits is
// joined once into a buffer of its exact size. frag is the first piece, n
// its length.
func (r *Reader) gather(frag []byte, n, limit int64) (raw []byte, total int64, sawNewline, tooLong bool, err error) {
	var blocks [][]byte
	held := int64(0)
	keep := func(p []byte) {
		for len(p) > 0 {
			if len(blocks) == 0 || len(blocks[len(blocks)-1]) == cap(blocks[len(blocks)-1]) {
				size := int64(64 << 10)
				if len(blocks) > 0 {
					size = min(int64(2*cap(blocks[len(blocks)-1])), 8<<20)
				}
				blocks = append(blocks, make([]byte, 0, min(size, limit-held+int64(len(p)))))
			}
			b := &blocks[len(blocks)-1]
			k := min(len(p), cap(*b)-len(*b))
			*b = append(*b, p[:k]...)
			p = p[k:]
		}
	}
	keep(frag)
	held = n
	for {
		frag, err = r.br.ReadSlice('\n')
		n += int64(len(frag))
		if !tooLong {
			if held+int64(len(frag)) > limit {
				tooLong, blocks = true, nil
			} else {
				keep(frag)
				held += int64(len(frag))
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if !tooLong {
			if int64(cap(r.big)) < held {
				r.big = make([]byte, 0, held)
			}
			r.big = r.big[:0]
			for _, b := range blocks {
				r.big = append(r.big, b...)
			}
			raw = r.big
		}
		switch err {
		case nil:
			return raw, n, true, tooLong, nil
		default:
			return raw, n, false, tooLong, err
		}
	}
}

// grow makes room for n more bytes in b, doubling its capacity but never
// past limit: a line gathered from a source that cannot be measured first
// (a pipe, a compressed file) takes at most limit bytes plus the copy it
// grew from, not twice the limit that append's doubling would allocate.
func grow(b []byte, n int, limit int64) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	c := int64(max(2*cap(b), need, 64<<10))
	if c > limit {
		c = max(limit, int64(need))
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// measure reads ahead in the source, without consuming anything, for the
// length of the current line, of which n bytes were consumed: up to and
// including its newline, or to the end of the source. It stops once the
// length passes limit. ok is false when the source could not be read.
func (r *Reader) measure(n, limit int64) (total int64, ok bool) {
	if r.scratch == nil {
		r.scratch = make([]byte, 64<<10)
	}
	pos := r.base + r.offset + n
	total = n
	for total <= limit {
		k, err := r.src.ReadAt(r.scratch, pos)
		if i := bytes.IndexByte(r.scratch[:k], '\n'); i >= 0 {
			return total + int64(i) + 1, true
		}
		total += int64(k)
		pos += int64(k)
		if err == io.EOF {
			return total, true
		}
		if err != nil || k == 0 {
			return 0, false
		}
	}
	return total, true
}

// classify decides the status of one line (without its terminator).
func classify(raw []byte, terminated, skipValidation bool) (Status, bool) {
	if isBlank(raw) {
		return Blank, false
	}
	if skipValidation {
		if !terminated {
			if validate(raw).ok {
				return OK, false
			}
			return Truncated, false
		}
		return OK, false
	}
	// One pass of the validator decides it all for a line that is JSON:
	// its NULs and its bytes of 0x80 and more can only be in strings,
	// where the validator looks at them. The order of the statuses (a NUL
	// first, then a cut or invalid JSON, then UTF-8) is that of the
	// separate scans this replaces; TestClassifyOneScan holds it to them.
	res := validate(raw)
	switch {
	case !res.ok && !terminated:
		return Truncated, false
	case !res.ok && bytes.IndexByte(raw, 0) >= 0:
		return ContainsNUL, false
	case !res.ok:
		return InvalidJSON, false
	case res.nul:
		return ContainsNUL, false
	case res.badUTF8:
		return InvalidUTF8, false
	case !res.object:
		return NotObject, false
	}
	return OK, res.rawControl
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// Revalidate gives a line read by a Reader with SkipValidation the Status
// and RawControl a validating Reader would have given it, so that the
// validation can run on another goroutine than the reading (a line that
// was not OK is left as it is).
func (l *Line) Revalidate() {
	if l.Status == OK {
		l.Status, l.RawControl = classify(l.Raw, l.EOL != NoEOL, false)
	}
}

// Valid reports whether b is one JSON value (raw control characters in
// strings accepted).
func Valid(b []byte) bool { return validate(b).ok }

// Classify returns the Status a line's bytes (without terminator) would get
// from a Reader; terminated says whether a newline followed them.
func Classify(raw []byte, terminated bool) Status {
	s, _ := classify(raw, terminated, false)
	return s
}

// Strict returns raw with every raw control character inside strings escaped
// as \u00XX so that encoding/json accepts it. raw must have been validated.
// When nothing needs escaping raw itself is returned.
func Strict(raw []byte) []byte {
	need := false
	for _, c := range raw {
		if c < 0x20 {
			need = true
			break
		}
	}
	if !need {
		return raw
	}
	out := make([]byte, 0, len(raw)+16)
	inStr := false
	const hex = "0123456789abcdef"
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if inStr {
			switch {
			case c == '\\':
				out = append(out, c)
				if i+1 < len(raw) {
					i++
					out = append(out, raw[i])
				}
				continue
			case c == '"':
				inStr = false
			case c < 0x20:
				out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
				continue
			}
		} else if c == '"' {
			inStr = true
		}
		out = append(out, c)
	}
	return out
}

// ErrStop may be returned by a Scan callback to end the scan early without
// an error.
var ErrStop = errors.New("stop")

// Scan calls fn for every line of r. It stops at the first error fn returns
// (ErrStop ends the scan with a nil error).
func Scan(r io.Reader, fn func(*Line) error) error {
	rd := NewReader(r)
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(l); err != nil {
			if err == ErrStop {
				return nil
			}
			return err
		}
	}
}
