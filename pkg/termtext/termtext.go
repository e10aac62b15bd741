// Package termtext makes untrusted text safe to print on a terminal.
//
// Session files hold text nobody vetted (tool output, web pages, model
// replies). Printed raw, an ESC ] 0 ; … BEL retitles the terminal, ESC [ 2 J
// clears it and OSC 52 writes the clipboard. Every text (non-JSON) output of
// sessctl that shows session content or a path passes through Line or Block,
// which show such characters as visible escapes instead:
//
//	\a \b \t \n \v \f \r     the C0 controls that have a C name
//	\x00 … \x1f, \x7f        the other C0 controls (ESC is \x1b) and DEL
//	\u0080 … \u009f          C1 controls (U+009B is a one-character CSI)
//	\u202e, \u2066, …        bidi overrides, embeddings, isolates and marks,
//	                         and the line and paragraph separators U+2028/9
//	\xff                     each byte that is not valid UTF-8
//
// Everything else, including every printable non-ASCII character, is kept.
// A backslash is not doubled: the output is for eyes, not for parsing (use
// --json for exact text).
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Line renders s for a one-line field (a title, a path, a table cell): every
// control character, including newline and tab, is shown as an escape.
func Line(s string) string { return clean(s, false) }

// Block renders s for a multi-line body (a summary, a text diff): newlines
// and tabs stay, everything else is escaped as by Line.
func Block(s string) string { return clean(s, true) }

// Safe reports whether s would be printed unchanged by Line.
func Safe(s string) bool { return safePrefix(s, false) == len(s) }

// safePrefix is the length of the longest prefix of s that needs no escape.
func safePrefix(s string, block bool) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || block && (c == '\n' || c == '\t') {
			i++
			continue
		}
		if c < 0x80 {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || special(r) {
			return i
		}
		i += size
	}
	return i
}

func clean(s string, block bool) string {
	i := safePrefix(s, block)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < 0x80 {
			switch {
			case c >= 0x20 && c < 0x7f, block && (c == '\n' || c == '\t'):
				b.WriteByte(c)
			default:
				escapeByte(&b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			escapeByte(&b, c)
		case special(r):
			escapeRune(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

const hex = "0123456789abcdef"

func escapeByte(b *strings.Builder, c byte) {
	switch c {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\t':
		b.WriteString(`\t`)
	case '\n':
		b.WriteString(`\n`)
	case '\v':
		b.WriteString(`\v`)
	case '\f':
		b.WriteString(`\f`)
	case '\r':
		b.WriteString(`\r`)
	default:
		b.WriteString(`\x`)
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
}

func escapeRune(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xf])
	}
}

// special reports the non-ASCII runes that are escaped: C1 controls, the
// bidi formatting characters (which can make text read differently from
// what it is) and the Unicode line and paragraph separators.
func special(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
