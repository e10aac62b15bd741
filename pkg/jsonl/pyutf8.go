package jsonl

import "unicode/utf8"

// PythonReplace decodes b the way Python's UTF-8 codec with errors="replace"
// does (Kimi CLI reads its files so): each maximal invalid subpart becomes one
// U+FFFD. changed reports whether anything was replaced; when nothing was, b
// itself is returned.
func PythonReplace(b []byte) (out []byte, changed bool) {
	if utf8.Valid(b) {
		return b, false
	}
	out = make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			out = append(out, b[i:i+size]...)
			i += size
			continue
		}
		out = append(out, "\uFFFD"...)
		i += maximalSubpart(b[i:])
	}
	return out, true
}

// maximalSubpart is the length (at least 1) of the longest prefix of b that
// could begin a well-formed UTF-8 sequence (Unicode's "maximal subpart", the
// replacement unit of Python's decoder).
func maximalSubpart(b []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i <= need && i < len(b); i++ {
		x := b[i]
		if i == 1 && (x < lo || x > hi) || i > 1 && (x < 0x80 || x > 0xBF) {
			break
		}
	}
	return i
}
