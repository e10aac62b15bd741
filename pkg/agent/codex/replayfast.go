package codex

import (
	"bytes"
	"encoding/json"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// The replay's decoder (replayHome) reads little of a line: the envelope's
// timestamp and type, and of the payload its type, role, name and call
// id, and the content of a user message. The full unmarshal into
// codexLine still went over every byte of the outputs twice (goccy skips
// a value byte by byte to keep it raw, then again inside the payload):
// 48 % of the CPU of a first grep of a Codex store. liteFast reads those
// fields with the Lexer, whose skip finds the end of a long string with
// IndexByte, and makes the record with the same envelope function.

// The fields of the structs the lite decoder reads into, at each level:
// a line with any key equal to one of them but for case, or escaped, or
// given twice, goes to the decoder (decode), as do lines in the legacy
// layout.
var (
	liteLineNames    = []string{"timestamp", "type", "payload", "record_type", "instructions", "role", "content"}
	litePayloadNames = []string{"type", "role", "content", "name", "call_id", "num_turns"}
)

// liteDepth bounds the nesting liteFast takes (the decoders' limits are
// their own).
const liteDepth = 512

// liteFast fills r as decode(obj, r, true) does and reports true, or
// reports false, r untouched, for a line it is not sure of. obj is a valid
// JSON line (session.Decode's). FuzzReplayFast holds it to decode.
func liteFast(obj []byte, r *session.Record) bool {
	lx := usage.NewLexer(obj)
	return liteFastWith(&lx, obj, r)
}

// DecodeLazy implements session.LazyDecoder: liteFast with a strict
// lexer, so that the first read of a rollout (the replay of the first
// search) validates each line in the pass that reads it. A line its
// strict walk found valid and free of raw control characters but liteFast
// is not sure of is decoded in full here (liteFast on it again would only
// say the same); any other line is left to the validator and Decode.
func (replayHome) DecodeLazy(l *jsonl.Line, r *session.Record) bool {
	lx := usage.NewStrictLexer(l.Raw)
	fast := liteFastWith(&lx, l.Raw, r)
	// the walk went to the end of the line whatever liteFast made of it,
	// but for a nesting deeper than liteDepth: the validator counts that
	// from the line's start, the checker from the skipped value
	if !lx.End() || lx.Deepest() > liteDepth {
		return false
	}
	if st, rc := lx.Status(); st != jsonl.OK || rc {
		return false
	}
	if !fast {
		decode(l.Raw, r, true)
	}
	return true
}

// liteFastWith is liteFast reading obj with lx.
func liteFastWith(lx *usage.Lexer, obj []byte, r *session.Record) bool {
	ok := true
	var (
		ts, typ  []byte
		payload  []byte
		seen     uint64
		p        codexPayload
		content  []byte
		pseen    uint64
		keepable = func(b []byte) bool { // a string kept as its bytes
			for _, c := range b {
				if c == '\\' || c >= 0x80 {
					return false
				}
			}
			return true
		}
	)
	str := func() []byte {
		if lx.Peek() != '"' {
			ok = false
			lx.Skip()
			return nil
		}
		b := lx.Str()
		if !keepable(b) {
			ok = false
		}
		return b
	}
	key := func(k []byte, names []string, seen *uint64) int {
		i, plain := usage.FieldKey(k, names, seen)
		ok = ok && plain
		return i
	}
	if !lx.Object(func(k []byte) {
		if !ok {
			lx.Skip()
			return
		}
		switch key(k, liteLineNames, &seen) {
		case 0:
			ts = str()
		case 1:
			typ = str()
		case 2:
			if lx.Peek() != '{' {
				ok = false
				lx.Skip()
				return
			}
			start := lx.Pos()
			if !lx.Object(func(k []byte) {
				if !ok {
					lx.Skip()
					return
				}
				switch key(k, litePayloadNames, &pseen) {
				case 0:
					p.Type = string(str())
				case 1:
					p.Role = string(str())
				case 2:
					if c := lx.Peek(); c == 'n' || c == 0 {
						ok = false // null: RawMessage's rules for it are the decoder's
					}
					from := lx.Pos()
					lx.Skip()
					content = obj[from:lx.Pos()]
				case 3:
					p.Name = string(str())
				case 4:
					p.CallID = string(str())
				default: // num_turns, and keys of no field
					if k := string(k); k == "num_turns" {
						ok = false
					}
					lx.Skip()
				}
			}) {
				ok = false
			}
			payload = bytes.TrimRight(obj[start:lx.Pos()], " \t\r\n")
		default: // the legacy fields, and keys of no field
			if seen&^0b111 != 0 {
				ok = false
			}
			lx.Skip()
		}
	}) || !ok || lx.Bad() || lx.Deepest() > liteDepth || len(typ) == 0 || len(payload) == 0 {
		return false
	}
	if content != nil {
		p.Content = json.RawMessage(bytes.TrimRight(content, " \t\r\n"))
	}
	l := codexLine{Timestamp: string(ts), Type: string(typ), Payload: payload}
	envelope(&l, &p, r, true)
	return true
}
