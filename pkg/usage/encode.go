package usage

import (
	"encoding/binary"
	"errors"
	"math"
)

// The binary form of a FileUsage, for an on-disk cache of scans
// (pkg/index). It holds everything a scan leaves in a FileUsage that
// Ledger.Add and stats read, except its Path and Class, which the caller
// knows: a cached scan is reused for the same file under a new name. A
// field added to FileUsage, Request or session.Usage must be added here too
// (TestEncodingCoversFields fails until it is).

// encodingVersion is the first byte of the encoding; a cache holding
// another one is read as a miss.
const encodingVersion = 2

// MarshalBinary encodes what a scan found in fu. Call it before the file is
// added to a Ledger (Add rewrites the requests' model ids and releases
// them).
func (fu *FileUsage) MarshalBinary() ([]byte, error) {
	e := encoder{b: make([]byte, 0, 64+len(fu.Requests)*48)}
	e.b = append(e.b, encodingVersion)
	e.int(int64(fu.Lines))
	e.int(int64(fu.UsageLines))
	e.drops(fu.Rejected)
	e.int(int64(fu.RejectedCount))
	e.int(int64(fu.CCUsageOnly))
	e.int(int64(fu.SessctlOnly))
	e.drops(fu.SessctlOnlyLines)
	e.int(int64(fu.Corrupt))
	e.int(int64(fu.PerResponse))
	e.int(fu.PerResponseView)
	e.int(fu.CumulativeView)
	e.int(fu.LastActivity)
	e.int(fu.Context)
	e.str(fu.ContextSource)
	e.int(fu.Window)
	e.str(fu.CWD)
	e.int(int64(len(fu.models.names)))
	for _, n := range fu.models.names {
		e.str(n)
	}
	e.int(int64(len(fu.Requests)))
	for i := range fu.Requests {
		r := &fu.Requests[i]
		// which fields follow, and the flags: most requests have no cost
		// of their own, and either keys or a line hash
		var flags uint64
		for i, f := range []bool{r.Sidechain, r.Speed, r.HasCost, r.Counted, r.CCUsage,
			r.Key != 0, r.MsgKey != 0, r.line != 0, r.CostUSD != 0} {
			if f {
				flags |= 1 << i
			}
		}
		e.b = binary.AppendUvarint(e.b, flags)
		u := r.Usage
		e.int(u.Input)
		e.int(u.Output)
		e.int(u.CacheRead)
		e.int(u.CacheCreation)
		e.int(u.Reasoning)
		e.int(u.CacheCreation1h)
		e.int(int64(r.Model))
		e.int(r.Time)
		e.int(int64(r.Line))
		if r.Key != 0 {
			e.u64(r.Key)
		}
		if r.MsgKey != 0 {
			e.u64(r.MsgKey)
		}
		if r.line != 0 {
			e.u64(r.line)
		}
		if r.CostUSD != 0 {
			e.u64(math.Float64bits(r.CostUSD))
		}
	}
	return e.b, nil
}

// errEncoding is returned for bytes MarshalBinary did not write.
var errEncoding = errors.New("usage: bad cached scan")

// Decode restores the FileUsage of the file at path, of class class, from
// what MarshalBinary wrote, into the request list given to Reuse when there
// is one (so that a run over cached scans makes as little garbage as one
// that reads the files).
func (rd *Reader) Decode(b []byte, path string, class FileClass) (*FileUsage, error) {
	fu := &FileUsage{Path: path, Class: class}
	if rd.reqs != nil {
		fu.Requests, rd.reqs = rd.reqs[:0], nil
	}
	if err := fu.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return fu, nil
}

// UnmarshalBinary restores a FileUsage written by MarshalBinary (reusing
// fu.Requests' room); the caller sets Path and Class. Bytes that are not such an encoding (another
// version, cut short) are an error and leave fu unusable.
func (fu *FileUsage) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != encodingVersion {
		return errEncoding
	}
	d := decoder{b: b[1:]}
	fu.Lines = int(d.int())
	fu.UsageLines = int(d.int())
	fu.Rejected = d.drops()
	fu.RejectedCount = int(d.int())
	fu.CCUsageOnly = int(d.int())
	fu.SessctlOnly = int(d.int())
	fu.SessctlOnlyLines = d.drops()
	fu.Corrupt = int(d.int())
	fu.PerResponse = int(d.int())
	fu.PerResponseView = d.int()
	fu.CumulativeView = d.int()
	fu.LastActivity = d.int()
	fu.Context = d.int()
	fu.ContextSource = d.str()
	fu.Window = d.int()
	fu.CWD = d.str()
	fu.models = modelTable{}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		fu.models.id(d.str())
	}
	n := d.count()
	if d.err != nil {
		return d.err
	}
	if cap(fu.Requests) >= n {
		fu.Requests = fu.Requests[:n]
	} else {
		fu.Requests = make([]Request, n)
	}
	for i := range fu.Requests {
		r := &fu.Requests[i]
		*r = Request{}
		flags := d.uint()
		r.Sidechain, r.Speed, r.HasCost = flags&1 != 0, flags&2 != 0, flags&4 != 0
		r.Counted, r.CCUsage = flags&8 != 0, flags&16 != 0
		r.Usage.Input = d.int()
		r.Usage.Output = d.int()
		r.Usage.CacheRead = d.int()
		r.Usage.CacheCreation = d.int()
		r.Usage.Reasoning = d.int()
		r.Usage.CacheCreation1h = d.int()
		r.Model = ModelID(d.int())
		r.Time = d.int()
		r.Line = int32(d.int())
		if flags&32 != 0 {
			r.Key = d.u64()
		}
		if flags&64 != 0 {
			r.MsgKey = d.u64()
		}
		if flags&128 != 0 {
			r.line = d.u64()
		}
		if flags&256 != 0 {
			r.CostUSD = math.Float64frombits(d.u64())
		}
		if d.err != nil {
			return d.err
		}
	}
	if len(d.b) != 0 {
		return errEncoding
	}
	return d.err
}

type encoder struct{ b []byte }

func (e *encoder) int(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) str(s string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) drops(ds []Drop) {
	e.int(int64(len(ds)))
	for _, d := range ds {
		e.int(int64(d.Line))
		e.str(d.Reason)
	}
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errEncoding, nil }

func (d *decoder) int() int64 {
	if len(d.b) > 0 && d.b[0] < 0x80 { // one byte: most fields
		u := int64(d.b[0])
		d.b = d.b[1:]
		return u>>1 ^ -(u & 1)
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length, which cannot exceed the bytes left (every element
// takes at least one).
func (d *decoder) count() int {
	v := d.int()
	if v < 0 || v > int64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) u64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) str() string {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > uint64(len(d.b)-n) {
		d.fail()
		return ""
	}
	s := string(d.b[n : n+int(v)])
	d.b = d.b[n+int(v):]
	return s
}

func (d *decoder) drops() []Drop {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]Drop, 0, n)
	for ; n > 0 && d.err == nil; n-- {
		line := int(d.int())
		out = append(out, Drop{line, d.str()})
	}
	return out
}
