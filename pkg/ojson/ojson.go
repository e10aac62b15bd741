// Package ojson is a JSON value that keeps what a client wrote: the order of
// object keys and the exact text of every value it parsed. A line can be
// parsed, changed in one place, and written back either byte for byte where
// nothing changed (Compact's verbatim copy) or re-serialised the way a given
// client serialises JSON (JSON.stringify, serde_json, pydantic, Python's
// json.dumps).
//
// The homes' writers (compaction today; repair and redaction later) use it
// for every line they change or make, so that there is one copy of these
// rules. It imports nothing of sessctl's.
package ojson

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a Value.
type Kind uint8

// Kinds.
const (
	Null    Kind = iota
	Literal      // true, false (and text wrapped by Raw)
	Number
	String
	Array
	Object
)

// Value is a JSON value that remembers the order of object keys and the
// exact bytes it was parsed from. A changed value forgets its bytes, and so
// do the values that contain it, so that a verbatim writer copies only what
// is still as it was read.
type Value struct {
	kind Kind
	str  string   // String: the decoded string
	lit  []byte   // Number, Literal, Null: the text (123, 1.5e3, true, null)
	obj  []Member // Object
	arr  []*Value // Array
	// raw is the original text of the value, nil when the value was built
	// or changed.
	raw    []byte
	parent *Value
}

// Member is one key and value of an object.
type Member struct {
	Key string
	Val *Value
}

// --- building ---

// Str returns a string value.
func Str(s string) *Value { return &Value{kind: String, str: s} }

// Int returns a number value.
func Int(n int64) *Value { return &Value{kind: Number, lit: strconv.AppendInt(nil, n, 10)} }

// Bool returns true or false.
func Bool(b bool) *Value {
	if b {
		return &Value{kind: Literal, lit: []byte("true")}
	}
	return &Value{kind: Literal, lit: []byte("false")}
}

// NullValue returns null.
func NullValue() *Value { return &Value{kind: Null, lit: []byte("null")} }

// Arr returns an array of vs.
func Arr(vs ...*Value) *Value {
	v := &Value{kind: Array, arr: vs}
	for _, e := range vs {
		e.parent = v
	}
	return v
}

// Obj returns an object with the members ms, in that order.
func Obj(ms ...Member) *Value {
	v := &Value{kind: Object, obj: ms}
	for _, m := range ms {
		m.Val.parent = v
	}
	return v
}

// KV is a member.
func KV(k string, v *Value) Member { return Member{k, v} }

// Raw wraps text that is already JSON; every writer copies it as it is.
func Raw(b []byte) *Value { return &Value{kind: Literal, lit: b, raw: b} }

// --- reading ---

// Kind is the value's JSON type (Null for a nil Value).
func (v *Value) Kind() Kind {
	if v == nil {
		return Null
	}
	return v.kind
}

// Is reports whether v is a non-nil value of kind k.
func (v *Value) Is(k Kind) bool { return v != nil && v.kind == k }

// Text is the decoded string of a String value, "" otherwise.
func (v *Value) Text() string {
	if v.Is(String) {
		return v.str
	}
	return ""
}

// Bytes is the original text of a value parsed and not changed since, or
// nil.
func (v *Value) Bytes() []byte {
	if v == nil {
		return nil
	}
	return v.raw
}

// Members are an object's members in order (nil for other kinds). Change a
// member with Set, not through the slice.
func (v *Value) Members() []Member {
	if v.Is(Object) {
		return v.obj
	}
	return nil
}

// Elems are an array's elements in order (nil for other kinds).
func (v *Value) Elems() []*Value {
	if v.Is(Array) {
		return v.arr
	}
	return nil
}

// Get returns the member k of an object, or nil.
func (v *Value) Get(k string) *Value {
	if !v.Is(Object) {
		return nil
	}
	for _, m := range v.obj {
		if m.Key == k {
			return m.Val
		}
	}
	return nil
}

// GetString returns the string member k, or "".
func (v *Value) GetString(k string) string { return v.Get(k).Text() }

// --- changing ---

// changed forgets the original text of v and of every value that holds it.
func (v *Value) changed() {
	for p := v; p != nil; p = p.parent {
		p.raw = nil
	}
}

// Set replaces member k of an object (keeping its place) or appends it.
func (v *Value) Set(k string, nv *Value) {
	if !v.Is(Object) {
		return
	}
	nv.parent = v
	v.changed()
	for i := range v.obj {
		if v.obj[i].Key == k {
			v.obj[i].Val = nv
			return
		}
	}
	v.obj = append(v.obj, Member{k, nv})
}

// SetElem replaces element i of an array.
func (v *Value) SetElem(i int, nv *Value) {
	if !v.Is(Array) || i < 0 || i >= len(v.arr) {
		return
	}
	nv.parent = v
	v.changed()
	v.arr[i] = nv
}

// Del removes member k of an object.
func (v *Value) Del(k string) {
	if !v.Is(Object) {
		return
	}
	for i := range v.obj {
		if v.obj[i].Key == k {
			v.obj = append(v.obj[:i], v.obj[i+1:]...)
			v.changed()
			return
		}
	}
}

// Clone returns a deep copy of v (with its original text) that is not part
// of v's parent.
func (v *Value) Clone() *Value {
	if v == nil {
		return nil
	}
	c := &Value{kind: v.kind, str: v.str, lit: v.lit, raw: v.raw}
	if v.obj != nil {
		c.obj = make([]Member, len(v.obj))
		for i, m := range v.obj {
			mv := m.Val.Clone()
			mv.parent = c
			c.obj[i] = Member{m.Key, mv}
		}
	}
	if v.arr != nil {
		c.arr = make([]*Value, len(v.arr))
		for i, e := range v.arr {
			ev := e.Clone()
			ev.parent = c
			c.arr[i] = ev
		}
	}
	return c
}

// --- parsing ---

// ErrSyntax is returned for text that is not one JSON value.
var ErrSyntax = errors.New("invalid JSON")

// maxDepth bounds nesting (deeper text is refused, not recursed into).
const maxDepth = 10000

// Parse parses one JSON value. Raw control characters inside strings are
// accepted (Kimi writes them; Python reads them). The Value keeps slices of
// b: b must not change while the Value is used.
func Parse(b []byte) (*Value, error) {
	p := parser{b: b}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, ErrSyntax
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

func (p *parser) value(depth int) (*Value, error) {
	if depth > maxDepth || p.i >= len(p.b) {
		return nil, ErrSyntax
	}
	start := p.i
	var v *Value
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		v = &Value{kind: Object}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			break
		}
		for {
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return nil, ErrSyntax
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, ErrSyntax
			}
			p.i++
			p.ws()
			mv, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			mv.parent = v
			v.obj = append(v.obj, Member{k, mv})
			p.ws()
			if p.i >= len(p.b) {
				return nil, ErrSyntax
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == '}' {
				p.i++
				break
			}
			return nil, ErrSyntax
		}
	case c == '[':
		p.i++
		v = &Value{kind: Array}
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
			ev.parent = v
			v.arr = append(v.arr, ev)
			p.ws()
			if p.i >= len(p.b) {
				return nil, ErrSyntax
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] == ']' {
				p.i++
				break
			}
			return nil, ErrSyntax
		}
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		v = &Value{kind: String, str: s}
	case c == 't' || c == 'f' || c == 'n':
		for _, w := range []string{"true", "false", "null"} {
			if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
				p.i += len(w)
				v = &Value{kind: Literal, lit: p.b[start:p.i]}
				if w == "null" {
					v.kind = Null
				}
				break
			}
		}
		if v == nil {
			return nil, ErrSyntax
		}
	default:
		for p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] == '+' || p.b[p.i] == '.' ||
			p.b[p.i] == 'e' || p.b[p.i] == 'E' || p.b[p.i] >= '0' && p.b[p.i] <= '9') {
			p.i++
		}
		if p.i == start {
			return nil, ErrSyntax
		}
		v = &Value{kind: Number, lit: p.b[start:p.i]}
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
				return "", ErrSyntax
			}
			e := p.b[p.i+1]
			p.i += 2
			if b, ok := ShortEscape(e); ok {
				buf = append(buf, b)
				break
			}
			switch e {
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", ErrSyntax
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
				return "", ErrSyntax
			}
		default:
			buf = append(buf, c)
			p.i++
		}
	}
	return "", ErrSyntax
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

// SetMember returns the JSON object raw with member k set to nv (in its
// place, or appended), every other byte as it was: the edit a writer makes
// to one field of a line a client wrote compactly.
func SetMember(raw []byte, k string, nv *Value) ([]byte, error) {
	v, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if !v.Is(Object) {
		return nil, errors.New("not a JSON object")
	}
	v.Set(k, nv)
	return Compact.Encode(v), nil
}

// ShortEscape returns the byte a two-byte JSON escape \e stands for (\n,
// \", ...); false for \u and for what is not an escape.
func ShortEscape(e byte) (byte, bool) {
	switch e {
	case '"', '\\', '/':
		return e, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}
