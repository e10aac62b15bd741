// Package binenc is the small binary layout of what sessctl writes for
// itself: the index's cached scans (pkg/usage) and the results a stats
// report keeps on disk (pkg/stats). Numbers are varints (zigzag for
// signed ones) or 8 little-endian bytes, strings their length and bytes.
// A Decoder never reads past its bytes nor makes a list longer than they
// could hold: bytes it was not given by an Encoder are an error, never a
// panic nor an allocation of their choosing.
package binenc

import "encoding/binary"

// Encoder appends to B.
type Encoder struct{ B []byte }

func (e *Encoder) Int(v int64)   { e.B = binary.AppendVarint(e.B, v) }
func (e *Encoder) Uint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }
func (e *Encoder) U64(v uint64)  { e.B = binary.LittleEndian.AppendUint64(e.B, v) }
func (e *Encoder) Str(s string) {
	e.B = binary.AppendUvarint(e.B, uint64(len(s)))
	e.B = append(e.B, s...)
}

// Decoder reads B from its start. Past its first error (Err: the Bad it
// was made with) it reads zeros.
type Decoder struct {
	B   []byte
	Err error
	bad error
}

// NewDecoder reads b; bytes that are not an Encoder's are the error bad.
func NewDecoder(b []byte, bad error) Decoder { return Decoder{B: b, bad: bad} }

// Fail sets the error and stops the reading.
func (d *Decoder) Fail() { d.Err, d.B = d.bad, nil }

func (d *Decoder) Int() int64 {
	if len(d.B) > 0 && d.B[0] < 0x80 { // one byte: most fields
		u := int64(d.B[0])
		d.B = d.B[1:]
		return u>>1 ^ -(u & 1)
	}
	v, n := binary.Varint(d.B)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

func (d *Decoder) Uint() uint64 {
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Count reads a length written by Int, which cannot exceed the bytes left
// (every element takes at least one).
func (d *Decoder) Count() int {
	v := d.Int()
	if v < 0 || v > int64(len(d.B)) {
		d.Fail()
		return 0
	}
	return int(v)
}

func (d *Decoder) U64() uint64 {
	if len(d.B) < 8 {
		d.Fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.B)
	d.B = d.B[8:]
	return v
}

func (d *Decoder) Str() string {
	v, n := binary.Uvarint(d.B)
	if n <= 0 || v > uint64(len(d.B)-n) {
		d.Fail()
		return ""
	}
	s := string(d.B[n : n+int(v)])
	d.B = d.B[n+int(v):]
	return s
}
