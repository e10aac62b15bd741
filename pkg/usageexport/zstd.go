package usageexport

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdCodec is Parquet's ZSTD codec with a small window. parquet-go's own
// (compress/zstd) keeps the encoder's default window of 8 MB, and each
// encoder then holds 16 MB of history, more than the rest of an export
// together. A page is compressed alone (EncodeAll) and is about pageBytes
// long, so a window of 256 KiB holds all of it and finds every match the
// large one does: the bytes written are the same (a frame of known size
// carries no window size), and readers need no setting.
type zstdCodec struct {
	enc sync.Pool // *zstd.Encoder
	dec sync.Pool // *zstd.Decoder
}

const zstdWindow = 256 << 10

func (c *zstdCodec) String() string                            { return "ZSTD" }
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.enc.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(zstdWindow),
			zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false))
		if err != nil {
			return nil, err
		}
	}
	defer c.enc.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}

func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	d, _ := c.dec.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		if d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1)); err != nil {
			return nil, err
		}
	}
	defer c.dec.Put(d)
	return d.DecodeAll(src, dst[:0])
}
