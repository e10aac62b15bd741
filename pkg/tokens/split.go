package tokens

import (
	"unicode"
	"unicode/utf8"
)

// A splitter cuts text into the pieces that the BPE merge then encodes. It is
// a hand-written equivalent of the encoding's splitting regexp (see
// docs/tokens.md): next returns the end of the piece that starts at s[i].
// s must be valid UTF-8 and i < len(s). Every piece is non-empty.
type splitter struct {
	bmp *[0x10000]uint8
	o2  bool // o200k_base rules rather than cl100k_base
}

// isPrefix reports whether a rune may be the optional leading [^\r\n\p{L}\p{N}]
// of a word piece.
func isPrefix(r rune, c uint8) bool {
	return r != '\r' && r != '\n' && c&(clsL|clsN) == 0
}

// isPunct reports whether a rune is in [^\s\p{L}\p{N}].
func isPunct(c uint8) bool { return c&(clsL|clsN|clsSpace) == 0 }

func (sp *splitter) next(s string, i int) int {
	if sp.o2 {
		return sp.nextO200k(s, i)
	}
	return sp.nextCl100k(s, i)
}

// nextCl100k follows
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func (sp *splitter) nextCl100k(s string, i int) int {
	r0, n0, c0 := runeAt(s, i, sp.bmp)
	if r0 == '\'' {
		if n := contraction(s, i+1); n > 0 {
			return i + 1 + n
		}
	}
	if j := i + n0; isPrefix(r0, c0) && j < len(s) {
		if _, _, c1 := runeAt(s, j, sp.bmp); c1&clsL != 0 {
			return sp.run(s, j, clsL)
		}
	}
	if c0&clsL != 0 {
		return sp.run(s, i, clsL)
	}
	if c0&clsN != 0 {
		return sp.digits(s, i)
	}
	if e := sp.punct(s, i, r0, c0, false); e > 0 {
		return e
	}
	return sp.space(s, i)
}

// nextO200k follows
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func (sp *splitter) nextO200k(s string, i int) int {
	r0, n0, c0 := runeAt(s, i, sp.bmp)
	prefix := isPrefix(r0, c0)
	// The first alternative, with and then without the optional prefix;
	// then the second alternative the same way.
	if prefix {
		if e := sp.wordLower(s, i+n0); e > 0 {
			return e
		}
	}
	if c0&(clsUpper|clsLower) != 0 {
		if e := sp.wordLower(s, i); e > 0 {
			return e
		}
	}
	if prefix {
		if e := sp.wordUpper(s, i+n0); e > 0 {
			return e
		}
	}
	if c0&clsUpper != 0 {
		if e := sp.wordUpper(s, i); e > 0 {
			return e
		}
	}
	if c0&clsN != 0 {
		return sp.digits(s, i)
	}
	if e := sp.punct(s, i, r0, c0, true); e > 0 {
		return e
	}
	return sp.space(s, i)
}

// wordLower matches [upper]*[lower]+contraction? at s[i:] as a backtracking
// regexp engine does, returning its end or -1.
func (sp *splitter) wordLower(s string, i int) int {
	// [upper]* takes the longest run first. If no [lower] follows it, the
	// engine gives back runes one at a time until [lower]+ can start on the
	// last rune given back that is itself [lower] (Lm, Lo or M); [lower]+
	// then takes just that rune, since none of the runes after it is [lower].
	u, lastLower := i, -1
	for u < len(s) {
		_, n, c := runeAt(s, u, sp.bmp)
		if c&clsUpper == 0 {
			break
		}
		u += n
		if c&clsLower != 0 {
			lastLower = u
		}
	}
	if u < len(s) {
		if _, _, c := runeAt(s, u, sp.bmp); c&clsLower != 0 {
			return contractionEnd(s, sp.run(s, u, clsLower))
		}
	}
	if lastLower > 0 {
		return contractionEnd(s, lastLower)
	}
	return -1
}

// wordUpper matches [upper]+[lower]*contraction? at s[i:], returning its end
// or -1.
func (sp *splitter) wordUpper(s string, i int) int {
	u := sp.run(s, i, clsUpper)
	if u == i {
		return -1
	}
	return contractionEnd(s, sp.run(s, u, clsLower))
}

// run returns the end of the longest run of runes of class cls at s[i:].
func (sp *splitter) run(s string, i int, cls uint8) int {
	for i < len(s) {
		_, n, c := runeAt(s, i, sp.bmp)
		if c&cls == 0 {
			break
		}
		i += n
	}
	return i
}

// digits matches \p{N}{1,3}; s[i] is a number.
func (sp *splitter) digits(s string, i int) int {
	for k := 0; k < 3 && i < len(s); k++ {
		_, n, c := runeAt(s, i, sp.bmp)
		if c&clsN == 0 {
			break
		}
		i += n
	}
	return i
}

// punct matches " ?[^\s\p{L}\p{N}]+[\r\n]*" (with slash, "[\r\n/]*") at s[i],
// returning its end or -1.
func (sp *splitter) punct(s string, i int, r0 rune, c0 uint8, slash bool) int {
	j := i
	if r0 == ' ' {
		j++
		if j == len(s) {
			return -1
		}
		_, _, c0 = runeAt(s, j, sp.bmp)
	}
	if !isPunct(c0) {
		return -1
	}
	for j < len(s) {
		_, n, c := runeAt(s, j, sp.bmp)
		if !isPunct(c) {
			break
		}
		j += n
	}
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || slash && s[j] == '/') {
		j++
	}
	return j
}

// space matches \s*[\r\n]+|\s+(?!\S)|\s+ at s[i]; s[i] is white space (every
// other rune is a letter, a number or punctuation and matched before).
func (sp *splitter) space(s string, i int) int {
	j, lastNL, lastStart := i, -1, i
	for j < len(s) {
		r, n, c := runeAt(s, j, sp.bmp)
		if c&clsSpace == 0 {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = j
		}
		lastStart = j
		j += n
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+ ends after the last line break of the run
		return lastNL + 1
	case j == len(s): // \s+(?!\S) at the end of the text
		return j
	case lastStart > i: // \s+(?!\S) leaves the last space to the next piece
		return lastStart
	default: // \s+
		return j
	}
}

// contraction matches (?i:'s|'t|'re|'ve|'m|'ll|'d) after the apostrophe, at
// s[i:], and returns the length matched after the apostrophe or 0.
func contraction(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	r, n := decodeLower(s, i)
	switch r {
	case 's', 't', 'm', 'd':
		return n
	case 'r', 'v', 'l':
		if i+n >= len(s) {
			return 0
		}
		r2, n2 := decodeLower(s, i+n)
		if r == 'r' && r2 == 'e' || r == 'v' && r2 == 'e' || r == 'l' && r2 == 'l' {
			return n + n2
		}
	}
	return 0
}

// contractionEnd extends a word ending at e by an optional contraction.
func contractionEnd(s string, e int) int {
	if e < len(s) && s[e] == '\'' {
		if n := contraction(s, e+1); n > 0 {
			return e + 1 + n
		}
	}
	return e
}

// decodeLower decodes the rune at s[i] lowered as regexp2 does for (?i):
// unicode.ToLower, so 'S' matches 's' but the long s 'ſ' does not.
func decodeLower(s string, i int) (rune, int) {
	if c := s[i]; c < 0x80 {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return rune(c), 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return unicode.ToLower(r), n
}
