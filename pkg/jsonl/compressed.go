package jsonl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// CompressedSuffix ends the name of a zstd-compressed JSONL file. Codex
// 0.169's rollout maintenance compresses rollouts it considers cold to
// rollout-….jsonl.zst (codex-rs/rollout/src/compression.rs); when both
// forms exist the plain file wins.
const CompressedSuffix = ".zst"

// MaxWindow bounds the zstd window a compressed file may ask for, and with
// it the decoder's memory: a frame header asking for more is reported as a
// damaged stream instead of being honoured. 128 MiB admits everything the
// zstd command line writes up to --ultra -22 (window log 27); Codex writes
// level 3 (a few MiB).
const MaxWindow = 128 << 20

var compressedRotationRe = regexp.MustCompile(`\.zst\.\d+$`)

// IsCompressedName reports whether a file name (or path) names a
// zstd-compressed JSONL file: it ends in ".zst", or it is one of sessctl's
// rotations of such a file (<name>.zst.N).
func IsCompressedName(name string) bool {
	return strings.HasSuffix(name, CompressedSuffix) || compressedRotationRe.MatchString(name)
}

// PlainName is name without the ".zst" of a compressed file: the name of
// the plain file that wins over it when both exist.
func PlainName(name string) string { return strings.TrimSuffix(name, CompressedSuffix) }

// File is a session file opened for reading: a plain file as it is (an
// *os.File, with ReadAt and Seek), a compressed one as its decompressed
// content (Read only). Stat and Name are the file on disk's.
type File interface {
	io.ReadCloser
	Stat() (os.FileInfo, error)
	Name() string
}

// CompressedError is a damaged zstd stream: Offset is the byte of the
// decompressed content at which it cannot be read further. A Reader turns
// it into a last line with Status Undecodable.
type CompressedError struct {
	Path   string
	Offset int64
	Err    error
}

func (e *CompressedError) Error() string {
	return fmt.Sprintf("%s: compressed stream damaged at byte %d of the content: %v", e.Path, e.Offset, e.Err)
}

func (e *CompressedError) Unwrap() error { return e.Err }

// NewDecoder returns a streaming zstd decoder with sessctl's bounds: one
// goroutine, low-memory buffers, at most MaxWindow of window.
func NewDecoder(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(MaxWindow),
		zstd.WithDecoderMaxMemory(MaxWindow),
	)
}

// Decompressed wraps r, the bytes of a compressed file called name, so that
// reading it yields the content; a damaged stream is a *CompressedError
// (and stays one). Close releases the decoder, not r.
func Decompressed(r io.Reader, name string) (io.ReadCloser, error) {
	dec, err := NewDecoder(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &decompressor{dec: dec, name: name}, nil
}

type decompressor struct {
	dec  *zstd.Decoder
	name string
	off  int64 // decompressed bytes returned so far
	err  error // sticky: a damaged stream stays damaged
}

func (d *decompressor) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.dec.Read(p)
	d.off += int64(n)
	if err != nil && err != io.EOF {
		d.err = &CompressedError{Path: d.name, Offset: d.off, Err: err}
		return n, d.err
	}
	return n, err
}

func (d *decompressor) Close() error {
	if d.dec != nil {
		d.dec.Close()
		d.dec = nil
	}
	return nil
}

// zstFile is the decompressed content of a .zst file on disk.
type zstFile struct {
	*decompressor
	f *os.File
}

func openCompressed(f *os.File) (File, error) {
	d, err := Decompressed(f, f.Name())
	if err != nil {
		f.Close()
		return nil, err
	}
	return &zstFile{decompressor: d.(*decompressor), f: f}, nil
}

func (z *zstFile) Close() error {
	z.decompressor.Close()
	return z.f.Close()
}

func (z *zstFile) Stat() (os.FileInfo, error) { return z.f.Stat() }
func (z *zstFile) Name() string               { return z.f.Name() }

// IsCompressedError reports whether err is (or wraps) a damaged stream.
func IsCompressedError(err error) bool {
	var ce *CompressedError
	return errors.As(err, &ce)
}
