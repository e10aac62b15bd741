package jsonl

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// validation of one JSON value, written by hand for two reasons: it is several
// times faster than encoding/json's scanner on session lines, and it can accept
// raw control characters inside strings, which Kimi CLI's Python reader
// (json.loads with strict=False) accepts and which therefore occur in real
// files.

// scanResult is what validate learned about a line.
type scanResult struct {
	ok         bool // one complete JSON value and nothing but white space after it
	object     bool // the value is an object
	rawControl bool // a string holds a raw control character (U+0000–U+001F)
	// Of a line that is ok (outside its strings a NUL or a byte of 0x80
	// or more is not JSON, so all of them are in strings):
	nul     bool // it holds a NUL byte
	badUTF8 bool // it is not valid UTF-8 (what utf8.Valid says)
}

// validate checks that b holds exactly one JSON value surrounded by optional
// white space. Raw control characters inside strings are accepted and reported.
func validate(b []byte) scanResult {
	v := validator{b: b}
	v.skipSpace()
	if v.i >= len(v.b) {
		return scanResult{}
	}
	object := v.b[v.i] == '{'
	if !v.value(0) {
		return scanResult{rawControl: v.rawControl}
	}
	v.skipSpace()
	if v.i != len(v.b) {
		return scanResult{rawControl: v.rawControl}
	}
	return scanResult{ok: true, object: object, rawControl: v.rawControl, nul: v.nul, badUTF8: v.badUTF8}
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 10000

type validator struct {
	b            []byte
	i            int
	rawControl   bool
	nul, badUTF8 bool // in a string: a NUL byte, bytes that are not UTF-8
	deepest      int  // the deepest nesting met (1: an object or array with no other inside)
}

func (v *validator) skipSpace() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *validator) value(depth int) bool {
	if depth > maxDepth || v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '{':
		v.deepest = max(v.deepest, depth+1)
		return v.object(depth + 1)
	case c == '[':
		v.deepest = max(v.deepest, depth+1)
		return v.array(depth + 1)
	case c == '"':
		return v.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *validator) literal(s string) bool {
	if len(v.b)-v.i < len(s) || string(v.b[v.i:v.i+len(s)]) != s {
		return false
	}
	v.i += len(s)
	return true
}

func (v *validator) object(depth int) bool {
	v.i++ // {
	v.skipSpace()
	if v.i < len(v.b) && v.b[v.i] == '}' {
		v.i++
		return true
	}
	for {
		v.skipSpace()
		if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
			return false
		}
		v.skipSpace()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return false
		}
		v.i++
		v.skipSpace()
		if !v.value(depth) {
			return false
		}
		v.skipSpace()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
		case '}':
			v.i++
			return true
		default:
			return false
		}
	}
}

func (v *validator) array(depth int) bool {
	v.i++ // [
	v.skipSpace()
	if v.i < len(v.b) && v.b[v.i] == ']' {
		v.i++
		return true
	}
	for {
		v.skipSpace()
		if !v.value(depth) {
			return false
		}
		v.skipSpace()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
		case ']':
			v.i++
			return true
		default:
			return false
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain8 reports whether none of the eight bytes of w is '"', '\\', below
// 0x20 or 0x80 and above (where str checks the UTF-8). (x - lsb) &^ x & msb
// is non-zero when a byte of x is zero (the classic test; it can only err
// towards "found" for bytes above a zero byte, never miss one); a byte
// below 0x20 is one whose top three bits are clear, so such a byte is zero
// in w & 0xe0...: under the same test; a byte of 0x80 or more is its own
// top bit.
func plain8(w uint64) bool { return special8(w) == 0 }

// special8 marks the bytes of w that are '"', '\\', below 0x20 or 0x80 and
// above with their top bit. A mark can be wrong only above a right one (see
// plain8), so the lowest mark is the first such byte:
// bits.TrailingZeros64/8 is its place (the word read little-endian).
func special8(w uint64) uint64 {
	q := w ^ (lsb * '"')
	bs := w ^ (lsb * '\\')
	ctl := w & (lsb * 0xe0)
	return ((q-lsb)&^q | (bs-lsb)&^bs | (ctl-lsb)&^ctl | w) & msb
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (v *validator) str() bool {
	v.i++ // opening quote
	b := v.b
	for i := v.i; i < len(b); {
		// eight bytes at a time while none of them is a quote, a
		// backslash or a control character (most of a session line is
		// plain text inside strings), then straight to the first that is
		for i+8 <= len(b) {
			if m := special8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+5 >= len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			v.rawControl = true
			v.nul = v.nul || c == 0
			i++
		case c >= 0x80:
			// the run of non-ASCII bytes (the UTF-8 check of classify,
			// done here while the string is read: outside strings such
			// bytes are not JSON)
			for i < len(b) && b[i] >= 0x80 {
				r, n := utf8.DecodeRune(b[i:])
				if r == utf8.RuneError && n == 1 {
					v.badUTF8 = true
				}
				i += n
			}
		default:
			i++
		}
	}
	return false
}

func (v *validator) number() bool {
	b := v.b
	i := v.i
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	v.i = i
	return true
}
