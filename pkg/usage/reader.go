package usage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// LineReader yields the lines of a stream with their numbers from one
// reusable buffer, which grows only to hold the longest line it keeps.
// Lines keep no terminator (a trailing CR is kept; JSON white space makes
// it harmless). A line longer than Max is not kept: it is read through to
// its newline and skipped (TooLong counts it), so that its size never
// chooses the reader's memory. The reader checks its context at every
// refill of its buffer.
type LineReader struct {
	r          io.Reader
	ctx        context.Context
	buf        []byte
	start, end int // unread bytes are buf[start:end]
	eof        bool
	max        int
	num        int
	torn       bool   // the last line had no newline
	tail       []byte // that line, when NextMatch skipped it
	tooLong    int
	tooLongAt  []int
	big        *BigLines // shared among readers; nil: none
	holding    bool      // this reader holds big
	damage     *jsonl.CompressedError
	// src reads ahead in a file without consuming it (nil for other
	// sources), pos is the file offset of buf[end], and skipNow says that
	// the line at start was measured and is too long
	src     io.ReaderAt
	pos     int64
	skipNow bool
	scratch []byte
}

// BigLines lets readers that run side by side take turns at holding a long
// line, so that memory holds one of them at a time rather than one per
// reader. A reader whose buffer must grow past BigLineSize waits for its
// turn, and keeps it until Release (the end of its file). Its zero value
// is ready to use.
type BigLines struct {
	once sync.Once
	turn chan struct{}
}

// BigLineSize is the buffer size past which a reader takes its turn.
const BigLineSize = 4 << 20

func (b *BigLines) acquire(ctx context.Context) error {
	b.once.Do(func() { b.turn = make(chan struct{}, 1) })
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case b.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release gives up the reader's turn at holding a long line, if it has it,
// and drops a buffer grown for one.
func (lr *LineReader) Release() {
	if lr.holding {
		lr.holding = false
		<-lr.big.turn
	}
}

// NewLineReader reads r with buf as its first buffer (it grows up to max,
// then long lines are skipped; max ≤ 0 means no bound). ctx, when it is
// done, stops the reader with ctx.Err().
func NewLineReader(ctx context.Context, r io.Reader, buf []byte, max int) *LineReader {
	if len(buf) == 0 {
		buf = make([]byte, 64<<10)
	}
	lr := &LineReader{r: r, ctx: ctx, buf: buf, max: max}
	if ra, ok := r.(io.ReaderAt); ok && max > 0 {
		if sk, ok := r.(io.Seeker); ok {
			if pos, err := sk.Seek(0, io.SeekCurrent); err == nil {
				lr.src, lr.pos = ra, pos
			}
		}
	}
	return lr
}

// Num is the number of the last line returned (or skipped by NextMatch).
func (lr *LineReader) Num() int { return lr.num }

// Torn reports whether the last line had no newline.
func (lr *LineReader) Torn() bool { return lr.torn }

// Tail is the last line when it had no newline and NextMatch skipped it.
func (lr *LineReader) Tail() []byte { return lr.tail }

// TooLong is the number of lines skipped for being longer than the reader's
// bound, and TooLongLines the numbers of the first of them.
func (lr *LineReader) TooLong() int { return lr.tooLong }

// TooLongLines lists the numbers of the first lines TooLong counts.
func (lr *LineReader) TooLongLines() []int { return lr.tooLongAt }

// Next returns the next line, or io.EOF. The line is valid until the next
// call.
func (lr *LineReader) Next() ([]byte, error) {
	scanFrom := lr.start
	for {
		if i := bytes.IndexByte(lr.buf[scanFrom:lr.end], '\n'); i >= 0 {
			line := lr.buf[lr.start : scanFrom+i]
			lr.start = scanFrom + i + 1
			lr.num++
			return line, nil
		}
		if lr.eof {
			if lr.start == lr.end {
				return nil, io.EOF
			}
			line := lr.buf[lr.start:lr.end]
			lr.start = lr.end
			lr.num++
			lr.torn = true
			return line, nil
		}
		scanned := lr.end - lr.start // no newline in these
		if lr.overlong() {
			if err := lr.skipLong(); err != nil {
				return nil, err
			}
			scanFrom = lr.start
			continue
		}
		if err := lr.fill(); err != nil {
			return nil, err
		}
		scanFrom = lr.start + scanned
	}
}

// NextMatch returns the next line that contains pat, skipping the lines
// before it in one search over the buffer (they are counted, not looked
// at). A last line without newline and without pat is left in Tail.
func (lr *LineReader) NextMatch(pat []byte) ([]byte, error) {
	for {
		buf := lr.buf[lr.start:lr.end]
		if i := bytes.Index(buf, pat); i >= 0 {
			// skip whole lines up to the one holding the match (forward:
			// IndexByte is vectorised, LastIndexByte is not)
			ls := 0
			for {
				k := bytes.IndexByte(buf[ls:i], '\n')
				if k < 0 {
					break
				}
				ls += k + 1
				lr.num++
			}
			lr.start += ls
			// the line ends after the match: look for its newline from there
			if k := bytes.IndexByte(buf[i:], '\n'); k >= 0 {
				line := buf[ls : i+k]
				lr.start += i + k + 1 - ls
				lr.num++
				return line, nil
			}
			return lr.Next()
		}
		if last := bytes.LastIndexByte(buf, '\n'); last >= 0 {
			lr.num += bytes.Count(buf[:last+1], []byte{'\n'})
			lr.start += last + 1
		}
		if lr.eof {
			if lr.start < lr.end {
				lr.num++
				lr.torn = true
				lr.tail = lr.buf[lr.start:lr.end]
				lr.start = lr.end
			}
			return nil, io.EOF
		}
		// a line longer than the buffer: it may still hold pat further on,
		// so it is kept whole (up to the bound)
		if lr.overlong() {
			if err := lr.skipLong(); err != nil {
				return nil, err
			}
			continue
		}
		if err := lr.fill(); err != nil {
			return nil, err
		}
	}
}

// overlong reports whether the unread bytes, which hold no newline, are
// already more than the longest line the reader keeps.
func (lr *LineReader) overlong() bool {
	return lr.skipNow || lr.max > 0 && lr.end-lr.start > lr.max
}

// skipLong skips the line that starts at lr.start, known to be longer than
// the bound, reading through to its newline with the buffer as it is.
func (lr *LineReader) skipLong() error {
	lr.skipNow = false
	lr.num++
	lr.tooLong++
	if len(lr.tooLongAt) < maxDrops {
		lr.tooLongAt = append(lr.tooLongAt, lr.num)
	}
	lr.start, lr.end = 0, 0
	for {
		if lr.eof {
			lr.torn = true
			return nil
		}
		if err := lr.read(); err != nil {
			return err
		}
		if i := bytes.IndexByte(lr.buf[:lr.end], '\n'); i >= 0 {
			lr.start = i + 1
			return nil
		}
		lr.end = 0
	}
}

// fill reads more input after the unread bytes, moving them to the front
// and growing the buffer when it is full: doubling while small, by a
// quarter once large, and never past the bound (plus room for the newline),
// so that a line of n bytes costs at most about 2.25 n while the buffer
// grows and 1.25 n after.
func (lr *LineReader) fill() error {
	n := lr.end - lr.start
	if lr.start > 0 {
		copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start, lr.end = 0, n
	}
	if lr.end == len(lr.buf) {
		size := len(lr.buf) * 2
		if len(lr.buf) >= 16<<20 {
			size = len(lr.buf) + len(lr.buf)/4
		}
		if lr.max > 0 {
			size = min(size, lr.max+2)
		}
		if lr.src != nil {
			// a file: measure the line by reading ahead (nothing kept); one
			// too long streams by in skipLong, one that fits gets a buffer of
			// its size at once
			if total, ok := lr.measure(n); ok {
				if total > int64(lr.max) {
					lr.skipNow = true
					return nil
				}
				size = max(int(total)+1, len(lr.buf)+1)
			}
		}
		if size > BigLineSize && lr.big != nil && !lr.holding {
			if err := lr.big.acquire(lr.ctx); err != nil {
				return err
			}
			lr.holding = true
		}
		nb := make([]byte, size)
		copy(nb, lr.buf[:lr.end])
		lr.buf = nb
	}
	return lr.read()
}

// read reads into the free end of the buffer, after a look at the context.
func (lr *LineReader) read() error {
	if lr.ctx != nil {
		if err := lr.ctx.Err(); err != nil {
			return err
		}
	}
	if lr.end == len(lr.buf) {
		return errors.New("usage: line reader has no room to read into") // a bug: fill grows, skipLong empties
	}
	m, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += m
	lr.pos += int64(m)
	if err == io.EOF {
		lr.eof = true
	} else if errors.As(err, &lr.damage) {
		// a damaged compressed stream ends the file where it stops being
		// readable; the reader's owner reports it like a corrupt line
		lr.eof = true
	} else if err != nil {
		return err
	}
	return nil
}

// Damage is the damaged compressed stream that ended the file early, or nil.
func (lr *LineReader) Damage() *jsonl.CompressedError { return lr.damage }

// measure reads ahead in the file, without consuming anything, for the
// length without its newline of the line at lr.start, of which n bytes are
// in the buffer. It stops once the length passes lr.max. ok is false when
// the file could not be read.
func (lr *LineReader) measure(n int) (length int64, ok bool) {
	if lr.scratch == nil {
		lr.scratch = make([]byte, 64<<10)
	}
	pos, length := lr.pos, int64(n)
	for length <= int64(lr.max) {
		if lr.ctx != nil && lr.ctx.Err() != nil {
			return 0, false // the next read returns the error
		}
		k, err := lr.src.ReadAt(lr.scratch, pos)
		if i := bytes.IndexByte(lr.scratch[:k], '\n'); i >= 0 {
			return length + int64(i), true
		}
		length += int64(k)
		pos += int64(k)
		if err == io.EOF {
			return length, true
		}
		if err != nil || k == 0 {
			return 0, false
		}
	}
	return length, true
}
