package jsonl

import "testing"

// Expected outputs are Python's: b"...".decode("utf-8", "replace").
func TestPythonReplace(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe4\xb8", "\uFFFD"},                 // truncated 3-byte sequence: one maximal subpart
		{"\xe4\xb8x", "\uFFFDx"},               // likewise, followed by ASCII
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // a surrogate: E0 A0 is not a valid start after ED
		{"\xf0\x9f\x98", "\uFFFD"},             // truncated emoji
		{"\xc0\xaf", "\uFFFD\uFFFD"},           // overlong
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	}
	for _, c := range cases {
		got, changed := PythonReplace([]byte(c.in))
		if string(got) != c.want || changed != (c.in != c.want) {
			t.Errorf("%q: got %q (changed %v), want %q", c.in, got, changed, c.want)
		}
	}
}
