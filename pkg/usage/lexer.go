package usage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// Lexer is a minimal JSON reader for the few fields recorded-usage
// accounting needs. It walks one line without building values: strings are
// skipped with bytes.IndexByte, so a line with a large tool output costs
// little more than finding its quotes. It is not a validator; callers that
// need to know that a line is valid JSON check that separately (End, or
// ValidLine), or use a strict Lexer (NewStrictLexer).
//
// The agents' scanners read one line with one Lexer, calling Object with a
// function that reads the fields it wants and leaves the others, which
// Object skips.
type Lexer struct {
	b   []byte
	i   int
	bad bool
	// byte patterns noted on the way (see Watch)
	watch               bool
	braceKey            []byte
	nullKey             func(key []byte) bool
	braceSeen, nullSeen bool
	// deepest is the deepest nesting met inside the containers skipped
	deepest int
	// strict: every value read or skipped is validated by chk
	strict bool
	chk    jsonl.Checker
}

// NewLexer returns a Lexer at the start of line.
func NewLexer(line []byte) Lexer { return Lexer{b: line} }

// NewStrictLexer returns a Lexer at the start of line that validates what
// it reads and skips as the jsonl validator does, instead of only finding
// its ends: a line it walked whole (End) is valid JSON, and Status says
// what a validating jsonl.Reader makes of it. One pass of it costs about
// what validating the line alone did, so a caller that needs both the
// line's status and a few of its fields saves the second pass. A strict
// Lexer does not Watch.
func NewStrictLexer(line []byte) Lexer {
	return Lexer{b: line, strict: true, chk: jsonl.NewChecker(line)}
}

// Status is the Status and RawControl a validating jsonl.Reader gives the
// line, for a strict Lexer that read one object and reached the line's
// End. Of any other it means nothing.
func (l *Lexer) Status() (jsonl.Status, bool) { return l.chk.Status() }

// Watch makes the lexer note two byte patterns that ccusage's prefilters
// look for, wherever they occur in the line, also inside values it skips:
// the key braceKey followed by exactly `:{` (BraceSeen), and a key for
// which nullKey reports true followed by exactly `:null` (NullSeen).
func (l *Lexer) Watch(braceKey []byte, nullKey func(key []byte) bool) {
	l.watch, l.braceKey, l.nullKey = true, braceKey, nullKey
}

// BraceSeen reports whether Watch's braceKey was seen followed by `:{`.
func (l *Lexer) BraceSeen() bool { return l.braceSeen }

// NullSeen reports whether a key Watch's nullKey names was seen followed
// by `:null`.
func (l *Lexer) NullSeen() bool { return l.nullSeen }

// afterKey notes the watched byte patterns after a string that may be a key.
func (l *Lexer) afterKey(s []byte) {
	rest := l.b[l.i:]
	if len(rest) < 2 || rest[0] != ':' {
		return
	}
	if rest[1] == '{' && bytes.Equal(s, l.braceKey) {
		l.braceSeen = true
	}
	if rest[1] == 'n' && l.nullKey != nil && bytes.HasPrefix(rest, []byte(":null")) && l.nullKey(s) {
		l.nullSeen = true
	}
}

// Bad reports whether the lexer met something that is not JSON.
func (l *Lexer) Bad() bool { return l.bad }

// End reports whether the line was read to its end (trailing white space
// allowed) without meeting anything that is not JSON.
func (l *Lexer) End() bool {
	l.ws()
	return !l.bad && l.i == len(l.b)
}

func (l *Lexer) ws() {
	for l.i < len(l.b) {
		// clients write JSON without spaces: one test in the common case
		if c := l.b[l.i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		l.i++
	}
}

func (l *Lexer) fail() { l.bad = true; l.i = len(l.b) }

// Peek returns the next non-space byte, or 0 at the end.
func (l *Lexer) Peek() byte {
	if l.i < len(l.b) {
		if c := l.b[l.i]; c > ' ' {
			return c
		}
	}
	l.ws()
	if l.i >= len(l.b) {
		return 0
	}
	return l.b[l.i]
}

// Str reads a string and returns its raw bytes (escapes left as they are).
func (l *Lexer) Str() (raw []byte) {
	if l.i >= len(l.b) || l.b[l.i] != '"' {
		if l.Peek() != '"' {
			l.fail()
			return nil
		}
	}
	b := l.b
	if l.strict {
		end, ok := l.chk.String(l.i)
		if !ok {
			l.fail()
			return nil
		}
		raw, l.i = b[l.i+1:end-1], end
		return raw
	}
	start := l.i + 1
	j := start
	for {
		k := -1
		if j+16 <= len(b) {
			// most keys and values end within 16 bytes: look for the quote
			// eight bytes at a time before calling IndexByte
			w := binary.LittleEndian.Uint64(b[j:j+8]) ^ 0x2222222222222222
			if t := (w - 0x0101010101010101) &^ w & 0x8080808080808080; t != 0 {
				k = bits.TrailingZeros64(t) >> 3
			} else {
				w = binary.LittleEndian.Uint64(b[j+8:j+16]) ^ 0x2222222222222222
				if t := (w - 0x0101010101010101) &^ w & 0x8080808080808080; t != 0 {
					k = 8 + bits.TrailingZeros64(t)>>3
				} else if k = bytes.IndexByte(b[j+16:], '"'); k >= 0 {
					k += 16
				}
			}
		} else {
			k = bytes.IndexByte(b[j:], '"')
		}
		if k < 0 {
			l.fail()
			return nil
		}
		end := j + k
		if end == start || b[end-1] != '\\' {
			l.i = end + 1
			return b[start:end]
		}
		// count the backslashes before the quote
		n := 0
		for p := end - 1; p >= start && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			l.i = end + 1
			return b[start:end]
		}
		j = end + 1
	}
}

// Text reads a string value as Go text (escapes decoded only when present).
func (l *Lexer) Text() string {
	raw := l.Str()
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	return UnescapeJSON(raw)
}

// Skip skips one value of any kind.
func (l *Lexer) Skip() {
	if l.strict {
		if l.Peek() == 0 {
			l.fail()
			return
		}
		end, ok := l.chk.Value(l.i)
		if !ok {
			l.fail()
			return
		}
		l.i, l.deepest = end, l.chk.Deepest()
		return
	}
	if c := l.Peek(); c == '{' || c == '[' {
		l.skipContainer()
		return
	}
	depth := 0
	for {
		c := l.Peek()
		switch c {
		case 0:
			l.fail()
			return
		case '"':
			s := l.Str()
			if l.watch && !l.bad {
				l.afterKey(s)
			}
		case '{', '[':
			depth++
			l.i++
			continue
		case '}', ']':
			depth--
			l.i++
		case ',', ':':
			if depth == 0 {
				l.fail()
				return
			}
			l.i++
			continue
		default:
			// a number or literal: up to the next delimiter
			for l.i < len(l.b) {
				switch l.b[l.i] {
				case ',', '}', ']', ' ', '\t', '\n', '\r', ':':
					goto done
				}
				l.i++
			}
		done:
		}
		if l.bad {
			return
		}
		if depth <= 0 {
			if depth < 0 {
				l.fail()
			}
			return
		}
	}
}

// skipContainer skips an object or array in one loop: it follows strings
// and bracket depth and passes over everything else, as Skip does, without
// a call per token. Objects and arrays are most of what the lexer skips
// (message contents, tool inputs).
func (l *Lexer) skipContainer() {
	b := l.b
	depth := 0
	for i := l.i; i < len(b); {
		switch b[i] {
		case '"':
			start := i + 1
			j := start
			for {
				k := bytes.IndexByte(b[j:], '"')
				if k < 0 {
					l.fail()
					return
				}
				end := j + k
				n := 0 // backslashes before the quote
				for p := end - 1; p >= start && b[p] == '\\'; p-- {
					n++
				}
				if n%2 == 0 {
					i = end + 1
					if l.watch {
						l.i = i
						l.afterKey(b[start:end])
					}
					break
				}
				j = end + 1
			}
			continue
		case '{', '[':
			depth++
			if depth > l.deepest {
				l.deepest = depth
			}
		case '}', ']':
			depth--
			if depth == 0 {
				l.i = i + 1
				return
			}
		}
		i++
	}
	l.fail()
}

// Object calls fn for every key of an object; fn must consume the value
// (by reading it or calling Skip). It returns false if the value is not an
// object or is malformed.
func (l *Lexer) Object(fn func(key []byte)) bool {
	if l.Peek() != '{' {
		return false
	}
	l.i++
	if l.Peek() == '}' {
		l.i++
		return true
	}
	for !l.bad {
		key := l.Str()
		if l.watch && !l.bad {
			l.afterKey(key)
		}
		if l.Peek() != ':' {
			l.fail()
			return false
		}
		l.i++
		at := l.i
		fn(key)
		if l.i == at && !l.bad { // fn did not consume the value
			l.Skip()
		}
		switch l.Peek() {
		case ',':
			l.i++
		case '}':
			l.i++
			return true
		default:
			l.fail()
		}
	}
	return false
}

// Array calls fn for every element of an array; fn must consume the
// element (by reading it or calling Skip). It returns false if the value
// is not an array or is malformed.
func (l *Lexer) Array(fn func()) bool {
	if l.Peek() != '[' {
		return false
	}
	l.i++
	if l.Peek() == ']' {
		l.i++
		return true
	}
	for !l.bad {
		at := l.i
		fn()
		if l.i == at && !l.bad { // fn did not consume the element
			l.Skip()
		}
		switch l.Peek() {
		case ',':
			l.i++
		case ']':
			l.i++
			return true
		default:
			l.fail()
		}
	}
	return false
}

// Pos is the offset in the line of the next value to read (after white
// space).
func (l *Lexer) Pos() int {
	l.Peek()
	return l.i
}

// Deepest is the deepest nesting met inside the objects and arrays the
// lexer skipped, counted from the skipped value (1: an object or array
// with no other inside).
func (l *Lexer) Deepest() int { return l.deepest }

// Literal reads null, true or false; ok is false for anything else.
func (l *Lexer) Literal() (s string, ok bool) {
	l.ws()
	for _, lit := range [...]string{"null", "true", "false"} {
		if bytes.HasPrefix(l.b[l.i:], []byte(lit)) {
			l.i += len(lit)
			return lit, true
		}
	}
	return "", false
}

// NumKind says what a usage field held.
type NumKind uint8

// What a field read with Number held.
const (
	NumOK       NumKind = iota // a non-negative integer
	NumMissing                 // field absent (never returned by Number: the zero state of a caller's field)
	NumNull                    // null
	NumNegative                // a negative number
	NumFraction                // a number with a fraction or exponent
	NumString                  // a string (numeric or not)
	NumTooLarge                // an integer too large for int64
	NumOther                   // true, false, an object or an array
)

var numKindNames = [...]string{
	NumOK: "ok", NumMissing: "missing", NumNull: "null", NumNegative: "negative",
	NumFraction: "not an integer", NumString: "a string", NumTooLarge: "too large", NumOther: "not a number",
}

// String says what the field held, for a rejection reason.
func (k NumKind) String() string { return numKindNames[k] }

// OKOrMissing reports whether a field is usable: a non-negative integer,
// or absent.
func (k NumKind) OKOrMissing() bool { return k == NumOK || k == NumMissing }

// Number reads a value that should be a non-negative integer.
func (l *Lexer) Number() (int64, NumKind) {
	c := l.Peek()
	switch {
	case c == '"':
		l.Str()
		return 0, NumString
	case c == 'n':
		l.Literal()
		return 0, NumNull
	case c == '-' || (c >= '0' && c <= '9'):
	default:
		l.Skip()
		return 0, NumOther
	}
	tok := l.numberToken()
	if len(tok) == 0 { // a strict lexer met no number
		return 0, NumOther
	}
	if tok[0] == '-' {
		if len(tok) == 2 && tok[1] == '0' {
			return 0, NumOK
		}
		return 0, NumNegative
	}
	var v int64
	for _, d := range tok {
		if d < '0' || d > '9' {
			return 0, NumFraction
		}
		if v > (1<<63-1-9)/10 {
			return 0, NumTooLarge
		}
		v = v*10 + int64(d-'0')
	}
	return v, NumOK
}

// numberToken reads the bytes of a number (or of what passes for one,
// unless the lexer is strict: then it fails on anything but a number).
func (l *Lexer) numberToken() []byte {
	start := l.i
	if l.strict {
		end, ok := l.chk.Number(start)
		if !ok {
			l.fail()
			return l.b[start:start]
		}
		l.i = end
		return l.b[start:end]
	}
	for l.i < len(l.b) {
		switch c := l.b[l.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			l.i++
			continue
		}
		break
	}
	return l.b[start:l.i]
}

// UnescapeJSON decodes the escapes of a JSON string body with
// encoding/json (surrogate pairs included). A body that is not valid JSON
// string content is returned as it is.
func UnescapeJSON(raw []byte) string {
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	var s string
	if json.Unmarshal(q, &s) != nil {
		return string(raw)
	}
	return s
}

// Float reads a JSON number as a float64 (0 for anything else), rounded
// as JSON.parse rounds it (strconv.ParseFloat: correctly rounded, with
// exponents). Claude Code's costUSD is read with it, and JavaScript writes
// a cost under 1e-6 with an exponent (5e-7): summing digit by digit, as it
// did before, read those as 0 and others a bit off the nearest float64,
// so that costs differed from ccusage's in their last digits.
func (l *Lexer) Float() float64 {
	c := l.Peek()
	if c != '-' && (c < '0' || c > '9') {
		l.Skip()
		return 0
	}
	tok := l.numberToken()
	f, err := strconv.ParseFloat(string(tok), 64) // no allocation: the string does not escape
	if err != nil {
		return 0
	}
	return f
}

// ValidLine is a cheap check that line is one JSON value, for where a
// line's shape matters (a torn last line).
func ValidLine(line []byte) bool {
	l := Lexer{b: line}
	l.Skip()
	return l.End()
}

// PlainKey reports whether an object key is one a scanner can judge as
// the full decoder would: ASCII without escapes, and equal to none of
// names without regard to case (encoding/json and goccy match keys to
// fields that way). A key equal to one of names is the caller's to
// handle first.
func PlainKey(key []byte, names []string) bool {
	for _, c := range key {
		if c >= 0x80 || c == '\\' {
			return false
		}
	}
	for _, n := range names {
		if len(n) == len(key) && bytes.EqualFold(key, []byte(n)) {
			return false
		}
	}
	return true
}

// FieldKey matches an object key against names, the JSON names of the
// fields of the struct the full decoder fills: the index of the name the
// key is, or -1 for a key of no field. ok is false where the full
// decoder's rules decide what a scanner cannot follow: a field given
// twice (seen has a bit per name), or a key that is not PlainKey.
func FieldKey(key []byte, names []string, seen *uint64) (i int, ok bool) {
	for i, n := range names {
		if string(key) == n {
			ok = *seen&(1<<i) == 0
			*seen |= 1 << i
			return i, ok
		}
	}
	return -1, PlainKey(key, names)
}
