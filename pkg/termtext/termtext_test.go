package termtext

import (
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"重构 src/utils.ts", "重构 src/utils.ts"},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"\x1b[2J", `\x1b[2J`},
		{"\x1b]52;c;cHduZWQ=\x07", `\x1b]52;c;cHduZWQ=\a`},
		{"a\x00b", `a\x00b`},
		{"a\nb\tc\r", `a\nb\tc\r`},
		{"del\x7f", `del\x7f`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"csi \u009b2J", `csi \u009b2J`},
		{"\xc2\x9b", `\u009b`},
		{"rtl \u202eevil", `rtl \u202eevil`},
		{"iso \u2066x\u2069", `iso \u2066x\u2069`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
		{"replacement \uFFFD kept", "replacement \uFFFD kept"},
		{`back\slash`, `back\slash`},
		{"", ""},
	}
	for _, c := range cases {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestBlockKeepsNewlinesAndTabs(t *testing.T) {
	in := "line 1\n\tline 2\r\n\x1b[31mred\x1b[0m"
	want := "line 1\n\tline 2\\r\n\\x1b[31mred\\x1b[0m"
	if got := Block(in); got != want {
		t.Fatalf("Block = %q, want %q", got, want)
	}
}

func TestSafe(t *testing.T) {
	if !Safe("ok é 中") || Safe("\x1b") || Safe("a\n") || Safe("\xff") {
		t.Fatal("Safe is wrong")
	}
}

// FuzzLine: whatever goes in, no byte a terminal acts on comes out, the
// result is valid UTF-8, and safe text is left alone.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"\x1b]0;t\x07", "\xc2\x9b", "\u202e", "\xff", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, block := range []bool{false, true} {
			out := clean(s, block)
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 out of %q: %q", s, out)
			}
			for _, r := range out {
				if r < 0x20 && !(block && (r == '\n' || r == '\t')) || r == 0x7f || special(r) {
					t.Fatalf("clean(%q, %v) = %q keeps %U", s, block, out, r)
				}
			}
			if safePrefix(s, block) == len(s) && out != s {
				t.Fatalf("safe text changed: %q -> %q", s, out)
			}
		}
	})
}

func TestGroupAndCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 12345678901: "12,345,678,901"} {
		if got := Group(n); got != want {
			t.Errorf("Group(%d) = %q, want %q", n, got, want)
		}
	}
	if Count(1, "request") != "1 request" || Count(0, "request") != "0 requests" || Count(int64(2500), "token") != "2,500 tokens" {
		t.Error("Count")
	}
}
