package tokens

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Rune classes used by the splitting patterns of cl100k_base and o200k_base.
// A rune has at most one general-category bit; clsSpace (Unicode White_Space,
// the regexp \s) never overlaps a letter, mark or number.
const (
	clsLu    uint8 = 1 << iota // \p{Lu}
	clsLl                      // \p{Ll}
	clsLt                      // \p{Lt}
	clsLm                      // \p{Lm}
	clsLo                      // \p{Lo}
	clsM                       // \p{M}
	clsN                       // \p{N}
	clsSpace                   // \s

	clsL = clsLu | clsLl | clsLt | clsLm | clsLo // \p{L}
	// clsUpper is o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
	clsUpper = clsLu | clsLt | clsLm | clsLo | clsM
	// clsLower is o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}].
	clsLower = clsLl | clsLm | clsLo | clsM
)

// classOf computes the class of r from the unicode tables, the same tables
// regexp2 (and so tiktoken-go) consults.
func classOf(r rune) uint8 {
	var c uint8
	switch {
	case unicode.Is(unicode.Lu, r):
		c = clsLu
	case unicode.Is(unicode.Ll, r):
		c = clsLl
	case unicode.Is(unicode.Lt, r):
		c = clsLt
	case unicode.Is(unicode.Lm, r):
		c = clsLm
	case unicode.Is(unicode.Lo, r):
		c = clsLo
	case unicode.Is(unicode.M, r):
		c = clsM
	case unicode.Is(unicode.N, r):
		c = clsN
	}
	if unicode.IsSpace(r) {
		c |= clsSpace
	}
	return c
}

// bmpClasses is the class of every rune of the Basic Multilingual Plane,
// computed once on first use and read-only afterwards.
var bmpClasses = sync.OnceValue(func() *[0x10000]uint8 {
	var t [0x10000]uint8
	for r := range rune(len(t)) {
		t[r] = classOf(r)
	}
	return &t
})

// runeAt decodes the rune at s[i] and returns it with its byte length and
// class. s must be valid UTF-8 and i < len(s).
func runeAt(s string, i int, bmp *[0x10000]uint8) (rune, int, uint8) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1, bmp[c]
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return r, n, bmp[r]
	}
	return r, n, classOf(r)
}
