package usage

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/sessctl/sessctl/internal/binenc"
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
	e := encoder{binenc.Encoder{B: make([]byte, 0, 64+len(fu.Requests)*48)}}
	e.B = append(e.B, encodingVersion)
	e.Int(int64(fu.Lines))
	e.Int(int64(fu.UsageLines))
	e.drops(fu.Rejected)
	e.Int(int64(fu.RejectedCount))
	e.Int(int64(fu.CCUsageOnly))
	e.Int(int64(fu.SessctlOnly))
	e.drops(fu.SessctlOnlyLines)
	e.Int(int64(fu.Corrupt))
	e.Int(int64(fu.PerResponse))
	e.Int(fu.PerResponseView)
	e.Int(fu.CumulativeView)
	e.Int(fu.LastActivity)
	e.Int(fu.Context)
	e.Str(fu.ContextSource)
	e.Int(fu.Window)
	e.Str(fu.CWD)
	e.Int(int64(fu.models.Len()))
	for _, n := range fu.models.Names() {
		e.Str(n)
	}
	e.Int(int64(len(fu.Requests)))
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
		e.B = binary.AppendUvarint(e.B, flags)
		u := r.Usage
		e.Int(u.Input)
		e.Int(u.Output)
		e.Int(u.CacheRead)
		e.Int(u.CacheCreation)
		e.Int(u.Reasoning)
		e.Int(u.CacheCreation1h)
		e.Int(int64(r.Model))
		e.Int(r.Time)
		e.Int(int64(r.Line))
		if r.Key != 0 {
			e.U64(r.Key)
		}
		if r.MsgKey != 0 {
			e.U64(r.MsgKey)
		}
		if r.line != 0 {
			e.U64(r.line)
		}
		if r.CostUSD != 0 {
			e.U64(math.Float64bits(r.CostUSD))
		}
	}
	return e.B, nil
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
	d := decoder{binenc.NewDecoder(b[1:], errEncoding)}
	fu.Lines = int(d.Int())
	fu.UsageLines = int(d.Int())
	fu.Rejected = d.drops()
	fu.RejectedCount = int(d.Int())
	fu.CCUsageOnly = int(d.Int())
	fu.SessctlOnly = int(d.Int())
	fu.SessctlOnlyLines = d.drops()
	fu.Corrupt = int(d.Int())
	fu.PerResponse = int(d.Int())
	fu.PerResponseView = d.Int()
	fu.CumulativeView = d.Int()
	fu.LastActivity = d.Int()
	fu.Context = d.Int()
	fu.ContextSource = d.Str()
	fu.Window = d.Int()
	fu.CWD = d.Str()
	fu.models = modelTable{}
	for n := d.Count(); n > 0 && d.Err == nil; n-- {
		fu.models.ID(d.Str())
	}
	n := d.Count()
	if d.Err != nil {
		return d.Err
	}
	if cap(fu.Requests) >= n {
		fu.Requests = fu.Requests[:n]
	} else {
		fu.Requests = make([]Request, n)
	}
	for i := range fu.Requests {
		r := &fu.Requests[i]
		*r = Request{}
		flags := d.Uint()
		r.Sidechain, r.Speed, r.HasCost = flags&1 != 0, flags&2 != 0, flags&4 != 0
		r.Counted, r.CCUsage = flags&8 != 0, flags&16 != 0
		r.Usage.Input = d.Int()
		r.Usage.Output = d.Int()
		r.Usage.CacheRead = d.Int()
		r.Usage.CacheCreation = d.Int()
		r.Usage.Reasoning = d.Int()
		r.Usage.CacheCreation1h = d.Int()
		r.Model = ModelID(d.Int())
		r.Time = d.Int()
		r.Line = int32(d.Int())
		if flags&32 != 0 {
			r.Key = d.U64()
		}
		if flags&64 != 0 {
			r.MsgKey = d.U64()
		}
		if flags&128 != 0 {
			r.line = d.U64()
		}
		if flags&256 != 0 {
			r.CostUSD = math.Float64frombits(d.U64())
		}
		if d.Err != nil {
			return d.Err
		}
	}
	if len(d.B) != 0 {
		return errEncoding
	}
	return d.Err
}

type encoder struct{ binenc.Encoder }

func (e *encoder) drops(ds []Drop) {
	e.Int(int64(len(ds)))
	for _, d := range ds {
		e.Int(int64(d.Line))
		e.Str(d.Reason)
	}
}

type decoder struct{ binenc.Decoder }

func (d *decoder) drops() []Drop {
	n := d.Count()
	if n == 0 {
		return nil
	}
	out := make([]Drop, 0, n)
	for ; n > 0 && d.Err == nil; n-- {
		line := int(d.Int())
		out = append(out, Drop{line, d.Str()})
	}
	return out
}
