package ojson

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Style is how a client serialises JSON.
type Style struct {
	// Spaced uses Python json.dumps separators ", " and ": ".
	Spaced bool
	// ASCII escapes every non-ASCII character as \uXXXX (lowercase hex,
	// surrogate pairs above U+FFFF) and DEL as \u007f: Python's
	// ensure_ascii.
	ASCII bool
	// Verbatim copies the original text of unchanged values. Only valid
	// when the source was written in the same style.
	Verbatim bool
}

var (
	// Compact is JSON.stringify (Claude Code, clawdcode), serde_json
	// (Codex) and pydantic's model_dump_json (Kimi message lines): no
	// spaces, raw UTF-8, \b \f \n \r \t and \u00xx for other control
	// characters; unchanged values are copied byte for byte.
	Compact = Style{Verbatim: true}
	// Fresh is Compact without the verbatim copy: every value is written
	// anew.
	Fresh = Style{}
	// Python is json.dumps with its defaults (Kimi's private records).
	Python = Style{Spaced: true, ASCII: true}
)

// Encode returns v written in style st.
func (st Style) Encode(v *Value) []byte { return st.Append(nil, v) }

// Append appends v written in style st.
func (st Style) Append(dst []byte, v *Value) []byte {
	if st.Verbatim && v.raw != nil {
		return append(dst, v.raw...)
	}
	switch v.kind {
	case Null, Literal, Number:
		return append(dst, v.lit...)
	case String:
		return st.appendString(dst, v.str)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.arr {
			if i > 0 {
				dst = st.comma(dst)
			}
			dst = st.Append(dst, e)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i, m := range v.obj {
			if i > 0 {
				dst = st.comma(dst)
			}
			dst = st.appendString(dst, m.Key)
			dst = append(dst, ':')
			if st.Spaced {
				dst = append(dst, ' ')
			}
			dst = st.Append(dst, m.Val)
		}
		return append(dst, '}')
	}
	return dst
}

func (st Style) comma(dst []byte) []byte {
	if st.Spaced {
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
func (st Style) appendString(dst []byte, s string) []byte {
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
			case c < 0x20 || (c == 0x7f && st.ASCII):
				dst = appendU(dst, rune(c))
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !st.ASCII:
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
