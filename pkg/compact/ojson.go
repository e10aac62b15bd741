package compact

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// value is a JSON value that remembers the order of object keys and the
// exact bytes it was parsed from, so that a line can be changed in one place
// and written back the way its client wrote it.
type value struct {
	kind kind
	str  string   // kindString: the decoded string
	lit  []byte   // kindNumber, kindLiteral: the text (123, 1.5e3, true, null)
	obj  []member // kindObject
	arr  []*value // kindArray
	// raw is the original text of the value, nil when the value was built
	// or changed. Writers in the source's own style copy raw when present.
	raw []byte
}

type kind uint8

const (
	kindNull kind = iota
	kindLiteral
	kindNumber
	kindString
	kindArray
	kindObject
)

type member struct {
	key string
	val *value
}

// --- building ---

func jstr(s string) *value { return &value{kind: kindString, str: s} }
func jint(n int64) *value  { return &value{kind: kindNumber, lit: strconv.AppendInt(nil, n, 10)} }
func jbool(b bool) *value {
	if b {
		return &value{kind: kindLiteral, lit: []byte("true")}
	}
	return &value{kind: kindLiteral, lit: []byte("false")}
}
func jnull() *value                { return &value{kind: kindNull, lit: []byte("null")} }
func jarr(vs ...*value) *value     { return &value{kind: kindArray, arr: vs} }
func jobj(ms ...member) *value     { return &value{kind: kindObject, obj: ms} }
func kv(k string, v *value) member { return member{k, v} }

// jraw wraps text that is already JSON (copied verbatim by every writer).
func jraw(b []byte) *value { return &value{kind: kindLiteral, lit: b, raw: b} }

// get returns the member k of an object, or nil.
func (v *value) get(k string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	for _, m := range v.obj {
		if m.key == k {
			return m.val
		}
	}
	return nil
}

// getStr returns the string member k, or "".
func (v *value) getStr(k string) string {
	if m := v.get(k); m != nil && m.kind == kindString {
		return m.str
	}
	return ""
}

// set replaces member k (keeping its position) or appends it.
func (v *value) set(k string, nv *value) {
	v.raw = nil
	for i := range v.obj {
		if v.obj[i].key == k {
			v.obj[i].val = nv
			return
		}
	}
	v.obj = append(v.obj, member{k, nv})
}

// del removes member k.
func (v *value) del(k string) {
	for i := range v.obj {
		if v.obj[i].key == k {
			v.obj = append(v.obj[:i], v.obj[i+1:]...)
			v.raw = nil
			return
		}
	}
}

// --- parsing ---

var errSyntax = errors.New("invalid JSON")

// parseJSON parses one JSON value. Raw control characters inside strings are
// accepted (Kimi writes them; Python reads them).
func parseJSON(b []byte) (*value, error) {
	p := parser{b: b}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, errSyntax
	}
	return v, nil
}

type parser struct {
	b []byte
	i int
}

func (p *parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*value, error) {
	if depth > 10000 || p.i >= len(p.b) {
		return nil, errSyntax
	}
	start := p.i
	var v *value
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		v = &value{kind: kindObject}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			break
		}
		for {
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return nil, errSyntax
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, errSyntax
			}
			p.i++
			p.ws()
			mv, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.obj = append(v.obj, member{k, mv})
			p.ws()
			if p.i >= len(p.b) {
				return nil, errSyntax
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == '}' {
				p.i++
				break
			}
			return nil, errSyntax
		}
	case c == '[':
		p.i++
		v = &value{kind: kindArray}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			break
		}
		for {
			p.ws()
			ev, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.arr = append(v.arr, ev)
			p.ws()
			if p.i >= len(p.b) {
				return nil, errSyntax
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == ']' {
				p.i++
				break
			}
			return nil, errSyntax
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		v = &value{kind: kindString, str: s}
	case c == 't' || c == 'f' || c == 'n':
		for _, w := range []string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
				p.i += len(w)
				v = &value{kind: kindLiteral, lit: p.b[start:p.i]}
				if w == "null" {
					v.kind = kindNull
				}
				break
			}
		}
		if v == nil {
			return nil, errSyntax
		}
	default:
		for p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] == '+' || p.b[p.i] == '.' ||
			p.b[p.i] == 'e' || p.b[p.i] == 'E' || p.b[p.i] >= '0' && p.b[p.i] <= '9') {
			p.i++
		}
		if p.i == start {
			return nil, errSyntax
		}
		v = &value{kind: kindNumber, lit: p.b[start:p.i]}
	}
	v.raw = p.b[start:p.i]
	return v, nil
}

func (p *parser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	// fast path: no escapes
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := string(p.b[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", errSyntax
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", errSyntax
				}
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						if lo, ok := p.hex4(); ok {
							if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
								r2 = d
							} else {
								p.i = save
							}
						} else {
							p.i = save
						}
					}
					r = r2
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", errSyntax
			}
		default:
			buf = append(buf, c)
			p.i++
		}
	}
	return "", errSyntax
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// --- writing ---

// style is how a client serialises JSON.
type style struct {
	// spaced uses Python json.dumps separators ", " and ": ".
	spaced bool
	// ascii escapes every non-ASCII character as \uXXXX (lowercase hex,
	// surrogate pairs above U+FFFF) and DEL as \u007f: Python's
	// ensure_ascii.
	ascii bool
	// verbatim copies the original text of unchanged values. Only valid
	// when the source was written in the same style.
	verbatim bool
}

var (
	// compactStyle is JSON.stringify (Claude Code, clawdcode), serde_json
	// (Codex) and pydantic's model_dump_json (Kimi message lines): no
	// spaces, raw UTF-8, \b \f \n \r \t and \u00xx for other control
	// characters.
	compactStyle = style{verbatim: true}
	// pythonStyle is json.dumps with its defaults (Kimi's private records).
	pythonStyle = style{spaced: true, ascii: true}
)

// encode appends v written in style st.
func (st style) encode(dst []byte, v *value) []byte {
	if st.verbatim && v.raw != nil {
		return append(dst, v.raw...)
	}
	switch v.kind {
	case kindNull, kindLiteral, kindNumber:
		return append(dst, v.lit...)
	case kindString:
		return st.appendString(dst, v.str)
	case kindArray:
		dst = append(dst, '[')
		for i, e := range v.arr {
			if i > 0 {
				dst = st.comma(dst)
			}
			dst = st.encode(dst, e)
		}
		return append(dst, ']')
	case kindObject:
		dst = append(dst, '{')
		for i, m := range v.obj {
			if i > 0 {
				dst = st.comma(dst)
			}
			dst = st.appendString(dst, m.key)
			dst = append(dst, ':')
			if st.spaced {
				dst = append(dst, ' ')
			}
			dst = st.encode(dst, m.val)
		}
		return append(dst, '}')
	}
	return dst
}

func (st style) comma(dst []byte) []byte {
	if st.spaced {
		return append(dst, ',', ' ')
	}
	return append(dst, ',')
}

const hexDigits = "0123456789abcdef"

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// it would have in every client (none can hold invalid UTF-8 in a string).
func (st style) appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				dst = append(dst, '\\', '"')
			case c == '\\':
				dst = append(dst, '\\', '\\')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20 || (c == 0x7f && st.ascii):
				dst = appendU(dst, rune(c))
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !st.ascii:
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
		case r > 0xFFFF:
			hi, lo := utf16.EncodeRune(r)
			dst = appendU(appendU(dst, hi), lo)
		default:
			dst = appendU(dst, r)
		}
		i += n
	}
	return append(dst, '"')
}
