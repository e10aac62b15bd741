package jsonl

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
)

// genFile is a file-like source of a session whose first line is huge,
// generated from its offset: {"a":"xxx…x"}\n{"b":1}\n. It never holds the
// line; like an *os.File it can be read ahead (ReadAt) and asked for its
// offset (Seek), or hidden behind a plain io.Reader.
type genFile struct {
	xs   int64 // length of the run of x
	off  int64
	fill []byte
}

const (
	genHead = `{"a":"`
	genTail = "\"}\n{\"b\":1}\n"
)

func newGenFile(xs int64) *genFile {
	return &genFile{xs: xs, fill: bytes.Repeat([]byte{'x'}, 64<<10)}
}

func (g *genFile) size() int64 { return int64(len(genHead)) + g.xs + int64(len(genTail)) }

func (g *genFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) && off < g.size() {
		var m int
		switch {
		case off < int64(len(genHead)):
			m = copy(p[n:], genHead[off:])
		case off < int64(len(genHead))+g.xs:
			left := int64(len(genHead)) + g.xs - off
			m = copy(p[n:], g.fill[:min(int64(len(g.fill)), left)])
		default:
			m = copy(p[n:], genTail[off-int64(len(genHead))-g.xs:])
		}
		n += m
		off += int64(m)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (g *genFile) Read(p []byte) (int, error) {
	n, err := g.ReadAt(p, g.off)
	g.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (g *genFile) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekCurrent {
		off += g.off
	}
	g.off = off
	return off, nil
}

// allocated is what fn allocates (runtime TotalAlloc).
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// readLines reads every line, keeping copies of the short ones.
func readLines(t *testing.T, rd *Reader) []Line {
	t.Helper()
	var out []Line
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		c := *l
		if len(l.Raw) < 1024 {
			c = l.Clone()
		} else {
			c.Raw = nil
		}
		out = append(out, c)
	}
}

// A 300 MB line, longer than the default maximum (256 MiB), in a file: it is
// skipped by streaming to its newline, not gathered into a 256 MiB buffer
// first (issue 11: check on a 1 GiB line peaked at 930 MB). The reader must
// allocate a few MiB at most, and still see the line after it.
func TestTooLongLineInAFileIsSkippedWithoutBuffering(t *testing.T) {
	const xs = 300 << 20
	g := newGenFile(xs)
	var lines []Line
	alloc := allocated(func() { lines = readLines(t, NewReader(g)) })
	if alloc > 16<<20 {
		t.Errorf("skipping a %d MB line allocated %d MiB", xs>>20, alloc>>20)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	first := int64(len(genHead)) + xs + 2
	if lines[0].Status != TooLong || lines[0].Len != first || lines[0].EOL != LF {
		t.Errorf("line 1: %+v", lines[0])
	}
	if lines[1].Status != OK || string(lines[1].Raw) != `{"b":1}` || lines[1].Offset != first+1 || lines[1].Num != 2 {
		t.Errorf("line 2: %+v %q", lines[1], lines[1].Raw)
	}
}

// Without read-ahead (a plain stream) a too-long line still costs no more
// than MaxLineSize: past it, the rest streams by.
func TestTooLongLineInAStreamCostsAtMostMaxLineSize(t *testing.T) {
	g := newGenFile(64 << 20)
	var lines []Line
	alloc := allocated(func() {
		rd := NewReader(struct{ io.Reader }{g})
		rd.MaxLineSize = 1 << 20
		lines = readLines(t, rd)
	})
	if alloc > 8<<20 {
		t.Errorf("skipping a 64 MiB line past a 1 MiB maximum allocated %d MiB", alloc>>20)
	}
	if len(lines) != 2 || lines[0].Status != TooLong || lines[1].Status != OK {
		t.Fatalf("lines %+v", lines)
	}
}

// A long line that fits is measured first and gathered into one buffer of
// its size (no doubling), with the same bytes as from a stream; the buffer is
// not kept for the rest of the file.
func TestLongLineInAFileIsGatheredOnce(t *testing.T) {
	const xs = 24 << 20
	want := genHead + strings.Repeat("x", xs) + `"}`
	for _, name := range []string{"file", "stream"} {
		g := newGenFile(xs)
		var rd *Reader
		if name == "file" {
			rd = NewReader(g)
		} else {
			rd = NewReader(struct{ io.Reader }{g})
		}
		var l *Line
		var err error
		alloc := allocated(func() { l, err = rd.Next() })
		if err != nil || l.Status != OK || string(l.Raw) != want {
			t.Fatalf("%s: %v %v (%d bytes)", name, err, l.Status, len(l.Raw))
		}
		if name == "file" && alloc > xs+1<<20 {
			t.Errorf("file: gathering a %d MiB line allocated %d MiB", xs>>20, alloc>>20)
		}
		// a stream (a pipe, a compressed file) keeps the pieces in blocks
		// that never move (the last one at most 8 MiB, partly unused), then
		// joins them once: twice the line and a block at most
		if name == "stream" && alloc > 2*xs+9<<20 {
			t.Errorf("stream: gathering a %d MiB line allocated %d MiB", xs>>20, alloc>>20)
		}
		if l, err = rd.Next(); err != nil || string(l.Raw) != `{"b":1}` {
			t.Fatalf("%s: line 2 %v %q", name, err, l.Raw)
		}
		if cap(rd.big) > keepBig {
			t.Errorf("%s: a %d MiB buffer is kept after the line", name, cap(rd.big)>>20)
		}
	}
}

// A stream (no read-ahead: the pieces of a long line are gathered in
// blocks) reads exactly like a file (measured first), with a buffer small
// enough that most lines are long, for every line limit.
func FuzzStreamMatchesFile(f *testing.F) {
	f.Add([]byte("{\"a\":1}\r\n{\"b\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n\n{\"c\":"), uint8(20))
	f.Add([]byte(strings.Repeat("{\"k\":\"vvvvvvvvvvvvvvvvvvvvvvvv\"}\n", 5)), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		read := func(r io.Reader) []Line {
			rd := NewReaderSize(r, 16)
			rd.MaxLineSize = int(max)
			var out []Line
			for {
				l, err := rd.Next()
				if err == io.EOF {
					return out
				}
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, l.Clone())
			}
		}
		file, stream := read(bytes.NewReader(data)), read(struct{ io.Reader }{bytes.NewReader(data)})
		if len(file) != len(stream) {
			t.Fatalf("%d lines from a file, %d from a stream", len(file), len(stream))
		}
		for i := range file {
			a, b := file[i], stream[i]
			if !bytes.Equal(a.Raw, b.Raw) || a.Status != b.Status || a.Offset != b.Offset || a.Len != b.Len || a.EOL != b.EOL {
				t.Fatalf("line %d: file %+v, stream %+v", i+1, a, b)
			}
		}
	})
}
