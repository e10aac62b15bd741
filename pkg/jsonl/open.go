package jsonl

import (
	"context"
	"io"
	"os"

	"github.com/sessctl/sessctl/pkg/fsroot"
)

// Open opens a session file for reading. Anything that is not a regular file
// is refused at once with a *NotRegularError (errors.Is ErrNotRegular): a
// named pipe would hang in open or read, and /dev/zero or /dev/urandom would
// be read until the process is killed. The file is opened with O_NONBLOCK,
// checked with fstat and set back to blocking mode, so not even the open
// can block.
//
// A compressed file (IsCompressedName: ".zst", or a rotation of one) is
// read as its decompressed content, streaming and with bounded memory; its
// File has no ReadAt or Seek, and the offsets of its lines are offsets in
// the content. A plain file's File is its *os.File.
func Open(path string) (File, error) {
	f, err := fsroot.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	if IsCompressedName(path) {
		return openCompressed(f)
	}
	return f, nil
}

// OpenRaw opens the file on disk as it is, compressed or not (for copying
// its bytes).
func OpenRaw(path string) (*os.File, error) { return fsroot.OpenRegular(path) }

// NotRegularError refuses a path that is not a regular file.
type NotRegularError = fsroot.NotRegularError

// ErrNotRegular matches a NotRegularError.
var ErrNotRegular = fsroot.ErrNotRegular

// OpenRandom opens a session file for random access (ReadAt, Seek): a plain
// file as it is; a compressed one is decompressed, streaming, into an
// unnamed temporary file (removed at once; the disk space it takes goes with
// the last Close), for operations that read a file backwards or by offset.
// A damaged compressed stream is an error (a *CompressedError).
func OpenRandom(path string) (*os.File, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	if plain, ok := f.(*os.File); ok {
		return plain, nil
	}
	defer f.Close()
	tmp, err := os.CreateTemp("", "sessctl-unzst-*")
	if err != nil {
		return nil, err
	}
	os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, f); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		tmp.Close()
		return nil, err
	}
	return tmp, nil
}

// ContextReader reads R until Ctx is done; from then on every Read returns
// Ctx.Err(), so that a copy of a large file stops at Ctrl-C within one
// buffer.
type ContextReader struct {
	Ctx context.Context
	R   io.Reader
}

func (c *ContextReader) Read(p []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(p)
}
