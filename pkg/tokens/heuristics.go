package tokens

import (
	"unicode/utf16"
	"unicode/utf8"
)

// CodexApprox is Codex's estimate: ceil(bytes / 4) over the UTF-8 bytes, as
// in codex-rs/utils/string/src/truncate.rs. It is a heuristic, not a count.
func CodexApprox(s string) int { return (len(s) + 3) / 4 }

// KimiApprox is Kimi CLI's estimate: code points / 4, rounded down, as
// Python's len(text) // 4. It is a heuristic, not a count.
func KimiApprox(s string) int { return utf8.RuneCountInString(s) / 4 }

// CJKApprox is clawdcode's quick estimate: ceil(cjk/1.5 + other/4), where cjk
// counts the characters U+4E00–U+9FA5 and other every other UTF-16 code unit
// (JavaScript's string length; a character above U+FFFF counts 2). It is a
// heuristic, not a count. It is computed in integers: the floating-point
// formula is never within rounding error of an integer it does not equal.
func CJKApprox(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		switch {
		case r >= 0x4E00 && r <= 0x9FA5:
			cjk++
		case utf16.RuneLen(r) == 2:
			other += 2
		default:
			other++
		}
	}
	// ceil(cjk/1.5 + other/4) = ceil((8·cjk + 3·other) / 12)
	return (8*cjk + 3*other + 11) / 12
}
