package tokens

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
)

// lexer is a minimal JSON reader for the few fields recorded-usage
// accounting needs. It walks one line without building values: strings are
// skipped with bytes.IndexByte, so a line with a large tool output costs
// little more than finding its quotes. It is not a validator; callers that
// need to know that a line is valid JSON check that separately.
type lexer struct {
	b   []byte
	i   int
	bad bool
	// Byte patterns ccusage looks for, noted on the way (watch must be
	// set): nullKey is set when a key of ccusageNullKeys is followed by
	// exactly `:null`; usageBrace when a key "usage" is followed by `:{`.
	watch, nullKey, usageBrace bool
}

// afterKey notes the ccusage byte patterns after a string that may be a key.
func (l *lexer) afterKey(s []byte) {
	rest := l.b[l.i:]
	if len(rest) < 2 || rest[0] != ':' {
		return
	}
	if rest[1] == '{' && string(s) == "usage" {
		l.usageBrace = true
	}
	if rest[1] == 'n' && bytes.HasPrefix(rest, []byte(":null")) && ccusageNullKey(s) {
		l.nullKey = true
	}
}

func (l *lexer) ws() {
	for l.i < len(l.b) {
		// clients write JSON without spaces: one test in the common case
		if c := l.b[l.i]; c > ' ' || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return
		}
		l.i++
	}
}

func (l *lexer) fail() { l.bad = true; l.i = len(l.b) }

// peek returns the next non-space byte, or 0 at the end.
func (l *lexer) peek() byte {
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

// str reads a string and returns its raw bytes (escapes left as they are).
func (l *lexer) str() (raw []byte) {
	if l.i >= len(l.b) || l.b[l.i] != '"' {
		if l.peek() != '"' {
			l.fail()
			return nil
		}
	}
	b := l.b
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

// text reads a string value as Go text (escapes decoded only when present).
func (l *lexer) text() string {
	raw := l.str()
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	return unescapeJSON(raw)
}

// skip skips one value of any kind.
func (l *lexer) skip() {
	if c := l.peek(); c == '{' || c == '[' {
		l.skipContainer()
		return
	}
	depth := 0
	for {
		c := l.peek()
		switch c {
		case 0:
			l.fail()
			return
		case '"':
			s := l.str()
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
// and bracket depth and passes over everything else, as skip does, without
// a call per token. Objects and arrays are most of what the lexer skips
// (message contents, tool inputs).
func (l *lexer) skipContainer() {
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

// object calls fn for every key of an object; fn must consume the value
// (by reading it or calling skip). It returns false if the value is not an
// object or is malformed.
func (l *lexer) object(fn func(key []byte)) bool {
	if l.peek() != '{' {
		return false
	}
	l.i++
	if l.peek() == '}' {
		l.i++
		return true
	}
	for !l.bad {
		key := l.str()
		if l.watch && !l.bad {
			l.afterKey(key)
		}
		if l.peek() != ':' {
			l.fail()
			return false
		}
		l.i++
		at := l.i
		fn(key)
		if l.i == at && !l.bad { // fn did not consume the value
			l.skip()
		}
		switch l.peek() {
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

// literal reads null, true or false; ok is false for anything else.
func (l *lexer) literal() (s string, ok bool) {
	l.ws()
	for _, lit := range [...]string{"null", "true", "false"} {
		if bytes.HasPrefix(l.b[l.i:], []byte(lit)) {
			l.i += len(lit)
			return lit, true
		}
	}
	return "", false
}

// numKind says what a usage field held.
type numKind uint8

const (
	numOK       numKind = iota // a non-negative integer
	numMissing                 // field absent
	numNull                    // null
	numNegative                // a negative number
	numFraction                // a number with a fraction or exponent
	numString                  // a string (numeric or not)
	numTooLarge                // an integer too large for int64
	numOther                   // true, false, an object or an array
)

var numKindNames = [...]string{
	numOK: "ok", numMissing: "missing", numNull: "null", numNegative: "negative",
	numFraction: "not an integer", numString: "a string", numTooLarge: "too large", numOther: "not a number",
}

func (k numKind) String() string { return numKindNames[k] }

// number reads a value that should be a non-negative integer.
func (l *lexer) number() (int64, numKind) {
	c := l.peek()
	switch {
	case c == '"':
		l.str()
		return 0, numString
	case c == 'n':
		l.literal()
		return 0, numNull
	case c == '-' || (c >= '0' && c <= '9'):
	default:
		l.skip()
		return 0, numOther
	}
	start := l.i
	for l.i < len(l.b) {
		switch c := l.b[l.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			l.i++
			continue
		}
		break
	}
	tok := l.b[start:l.i]
	if tok[0] == '-' {
		if len(tok) == 2 && tok[1] == '0' {
			return 0, numOK
		}
		return 0, numNegative
	}
	var v int64
	for _, d := range tok {
		if d < '0' || d > '9' {
			return 0, numFraction
		}
		if v > (1<<63-1-9)/10 {
			return 0, numTooLarge
		}
		v = v*10 + int64(d-'0')
	}
	return v, numOK
}

// unescapeJSON decodes the escapes of a JSON string body with
// encoding/json (surrogate pairs included). A body that is not valid JSON
// string content is returned as it is.
func unescapeJSON(raw []byte) string {
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	var s string
	if json.Unmarshal(q, &s) != nil {
		return string(raw)
	}
	return s
}
