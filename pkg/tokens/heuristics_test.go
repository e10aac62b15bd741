package tokens

import (
	"strings"
	"testing"
)

func TestHeuristics(t *testing.T) {
	tests := []struct {
		s                string
		codex, kimi, cjk int
	}{
		// The worked example of tokens.md §3: 14 bytes, 10 code points,
		// 10 UTF-16 units of which 2 CJK.
		{"Hello, 世界!", 4, 2, 4},
		{"", 0, 0, 0},
		{"a", 1, 0, 1},
		{"abcd", 1, 1, 1},
		{"abcde", 2, 1, 2},
		{"世界世", 3, 0, 2}, // 9 bytes; 3 CJK → exactly 2
		{"😀", 1, 0, 1},   // 4 bytes, 1 code point, 2 UTF-16 units
		{"😀😀", 2, 0, 1},  // 4 units → exactly 1
		{"龥", 1, 0, 1},   // U+9FA5, the last CJK rune counted as such
		{"龦龦龦", 3, 0, 1}, // U+9FA6 is not counted as CJK: ceil(3/4)
		{strings.Repeat("x", 400), 100, 100, 100},
		{strings.Repeat("中", 300), 225, 75, 200},
	}
	for _, tt := range tests {
		if got := CodexApprox(tt.s); got != tt.codex {
			t.Errorf("CodexApprox(%q) = %d, want %d", tt.s, got, tt.codex)
		}
		if got := KimiApprox(tt.s); got != tt.kimi {
			t.Errorf("KimiApprox(%q) = %d, want %d", tt.s, got, tt.kimi)
		}
		if got := CJKApprox(tt.s); got != tt.cjk {
			t.Errorf("CJKApprox(%q) = %d, want %d", tt.s, got, tt.cjk)
		}
	}
}
