package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
)

// TestOddFoldsAll: U+212A and U+017F are the only characters other than
// ASCII whose simple case folding orbit (what (?i) matches) holds an
// ASCII character, and they reach k and s. U+0130 and U+0131 (the Turkish
// dotted and dotless i) do not fold with i in Go.
func TestOddFoldsAll(t *testing.T) {
	orbit := func(r rune) []rune {
		o := []rune{r}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			o = append(o, f)
		}
		return o
	}
	var odd []rune
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		for _, f := range orbit(r) {
			if f < 0x80 {
				odd = append(odd, r)
				break
			}
		}
	}
	if want := []rune{0x17f, 0x212a}; !reflect.DeepEqual(odd, want) {
		t.Fatalf("characters other than ASCII folding to ASCII: %U, want %U", odd, want)
	}
	for r, want := range map[rune]string{0x212a: "Kk", 0x17f: "Ss"} {
		var got []rune
		for _, f := range orbit(r) {
			if f < 0x80 {
				got = append(got, f)
			}
		}
		if string(got) != want && string([]rune{got[1], got[0]}) != want {
			t.Errorf("%U folds to %q, want %q", r, string(got), want)
		}
	}
	if kelvin != string(rune(0x212a)) || longS != string(rune(0x17f)) {
		t.Error("kelvin, longS")
	}
	for _, s := range []string{"\u0130", "\u0131"} {
		if regexp.MustCompile(`(?i)i`).MatchString(s) {
			t.Errorf("(?i)i matches %q", s)
		}
	}
}

// refMatch is Match by the regular expression alone (the way before
// foldFinder).
func refMatch(m *Matcher, text string) (Hit, bool) {
	ref := *m
	ref.foldF = nil
	return ref.Match(text)
}

func sameAsRegexp(t *testing.T, pattern, text string) {
	t.Helper()
	m, err := Compile(Options{Pattern: pattern, IgnoreCase: true, Context: 7})
	if err != nil {
		t.Fatal(err)
	}
	got, gotOK := m.Match(text)
	want, wantOK := refMatch(m, text)
	if gotOK != wantOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("-i %q in %q:\n got %v %+v\nwant %v %+v", pattern, text, gotOK, got, wantOK, want)
	}
}

// TestFoldMatchCases holds Match with -i to the regular expression
// (?i)pattern on the hits' fields: the characters that fold to k and s,
// mixed case, overlapping matches, the ends of the text, invalid UTF-8.
func TestFoldMatchCases(t *testing.T) {
	for _, c := range []struct{ pattern, text string }{
		{"kelvin", "300 \u212aelvin and 3 kelvin"},
		{"KELVIN", "\u212aELVIN"},
		{"k", "\u212a"},
		{"k", "a\u212ab\u212a"},
		{"x", "\u212a x \u212a X"},
		{"ask", "\u017f\u212a a\u017f\u212a A\u017fK"},
		{"test", "te\u017ft TEST"},
		{"SS", "\u017f\u017f s\u017f Ss"},
		{"straße", "STRASSE"}, // not ASCII: the regular expression
		{"rebase commit", "git Rebase Commit, REBASE COMMIT; rebase  commit"},
		{"aa", "aaaaa"},
		{"aba", "ABABABA"},
		{"abc", "abc"},
		{"abc", "xxABC"},
		{"abc", "ABCxx"},
		{"abc", "ab"},
		{"abc", "\xffabc\xe2ABC\xc5"},
		{"abc", "\xe2\x84abc\xc5"}, // the first bytes of U+212A and U+017F only
		{"k", "\xe2\x84k\xe2\x84\xaa"},
		{"s", "\xc5\xbf\xc5"},
		{"a.c", "a.c abc A.C"},
		{"[x]", "[X] [x]"},
		{"@", "` @ `"},
		{"_", "_ \x7f"},
		{"z{", "Z{ Z[ z{"},
		{`say "hi"`, `SAY "HI"`},
		{"a\tb", "A\tB a b"},
		{"é", "É é"},
		{"login", "ééééééé LOGIN ééééééé login"},
	} {
		sameAsRegexp(t, c.pattern, c.text)
	}
	// the fast way is taken for an ASCII pattern
	m, _ := Compile(Options{Pattern: "Rebate", IgnoreCase: true})
	if m.foldF == nil || m.foldF.odd || m.foldF.lo != 'b' || m.foldF.up != 'B' {
		t.Errorf("foldF %+v", m.foldF)
	}
	if m, _ := Compile(Options{Pattern: "é", IgnoreCase: true}); m.foldF != nil {
		t.Error("a pattern not ASCII found by foldFinder")
	}
	if m, _ := Compile(Options{Pattern: "ab", IgnoreCase: true, Regexp: true}); m.foldF != nil {
		t.Error("a regexp found by foldFinder")
	}
	// a text the rare byte fills: slowIndex, over its windows
	f := newFoldFinder([]byte("bbq"))
	long := strings.Repeat("Bb", 100000) + "bBQ" + strings.Repeat("b", 70000) + "BBQ"
	if got, want := index(f, long, 0), 200000; got != want {
		t.Errorf("index %d, want %d", got, want)
	}
	sameAsRegexp(t, "bbq", long)
	sameAsRegexp(t, "bbx", long)
	w := strings.Repeat("b", 1<<16-2) + "BQ" // a match across the first window
	sameAsRegexp(t, "bbq", strings.Repeat("B", 100)+w)
}

// TestFoldMatchRandom: random texts over small alphabets, which hold the
// characters that fold to ASCII, invalid UTF-8 and rare bytes made
// frequent.
func TestFoldMatchRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, alpha := range [][]string{
		{"a", "b", "A", "B"},
		{"k", "K", "\u212a", "s", "S", "\u017f", " "},
		{"e", "b", "B", "\xe2", "\x84", "\xaa", "\xc5", "\xbf", "é"},
		{"q", "Q", "z", "[", "{", "@", "`", "\xff"},
	} {
		for range 2000 { // under -race in make test: 3 s; FuzzFoldMatch goes further
			var b strings.Builder
			for range rng.IntN(120) {
				b.WriteString(alpha[rng.IntN(len(alpha))])
			}
			var p strings.Builder
			for range 1 + rng.IntN(4) {
				if s := alpha[rng.IntN(len(alpha))]; s[0] < 0x80 {
					p.WriteString(s)
				}
			}
			if p.Len() == 0 {
				continue
			}
			sameAsRegexp(t, p.String(), b.String())
			sameAsRegexp(t, p.String(), p.String()+b.String()+strings.ToUpper(p.String()))
		}
	}
}

// ensureASCII writes s as a JSON string the way Python's ensure_ascii
// does (hex digits in upper case when upper).
func ensureASCII(s string, upper bool) []byte {
	b := []byte{'"'}
	hex := func(r rune) {
		f := "\\u%04x"
		if upper {
			f = "\\u%04X"
		}
		b = fmt.Appendf(b, f, r)
	}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20 || r == 0x7f:
			hex(r)
		case r < 0x80:
			b = append(b, byte(r))
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			hex(r1)
			hex(r2)
		default:
			hex(r)
		}
	}
	return append(b, '"')
}

// rawMaySameAsRegexp: whenever (?i)pattern matches a text, the raw scan
// says that its JSON (as UTF-8, or escaped as ensure_ascii does) may hold
// a match, both in lineMay and mayMatch (with boundaries, the line across
// the end of its first read: a megabyte a line).
func rawMaySameAsRegexp(t *testing.T, pattern, text string, boundaries bool) {
	t.Helper()
	m, err := Compile(Options{Pattern: pattern, IgnoreCase: true})
	if err != nil || m.lit == nil {
		return
	}
	if _, ok := refMatch(m, text); !ok {
		return
	}
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(text); err != nil {
		t.Fatal(err)
	}
	for _, line := range [][]byte{raw.Bytes(), ensureASCII(text, false), ensureASCII(text, true)} {
		if !m.lineMay(line) {
			t.Fatalf("-i %q matches %q, lineMay(%q) is false", pattern, text, line)
		}
		pads := []int{0}
		if boundaries {
			// the line across the end of mayMatch's first read
			pads = []int{scanBuf, scanBuf - len(line)/2, scanBuf - len(line) + 1}
		}
		for _, pad := range pads {
			data := append(bytes.Repeat([]byte{'.'}, pad), line...)
			if ok, err := m.mayMatch(context.Background(), bytes.NewReader(data)); !ok || err != nil {
				t.Fatalf("-i %q matches %q, mayMatch of %q at %d is %v (%v)", pattern, text, line, pad, ok, err)
			}
		}
	}
}

// TestFoldRaw: the raw scan with -i keeps the lines and files that hold
// U+212A or U+017F when the pattern has a k or an s (a grep -i kelvin
// missed a "\u212aelvin" before), and still skips those without.
func TestFoldRaw(t *testing.T) {
	for _, c := range []struct{ pattern, text string }{
		{"kelvin", "300 \u212aelvin"},
		{"KELVIN", "\u212aELVIN"},
		{"test", "te\u017ft"},
		{"ask", "a\u017f\u212a"},
		{"sk", "\u017f\u212a"},
		{"kiss", "\u212ai\u017fs"},
		{"a kelvin sss", "A \u212aELVIN \u017f\u017f\u017f"}, // the longest escaped
		{"rebase commit", "REBASE COMMIT"},
		{"x", "X"},
	} {
		rawMaySameAsRegexp(t, c.pattern, c.text, true)
	}
	m, _ := Compile(Options{Pattern: "rebase", IgnoreCase: true})
	if m.segF == nil || string(m.segF.lit) != "reba" || m.span != 11 {
		t.Fatalf("segF %+v, span %d", m.segF, m.span)
	}
	// without "reba", no match: U+212A and U+017F alone are skipped
	for _, line := range []string{`{"text":"nothing here"}`, `{"text":"REBAS"}`, `{"text":"\u212b \u017e"}`,
		`{"text":"\u212a"}`, `{"text":"\u017F"}`, `{"text":"` + kelvin + `"}`, `"` + longS + `e"`} {
		if m.lineMay([]byte(line)) {
			t.Errorf("lineMay(%q)", line)
		}
	}
	// with it, U+017F, raw or escaped, may be a match: kept
	for _, line := range []string{`{"text":"ReBaSe"}`, `{"text":"Reba\u017fe"}`, `{"text":"REBA\u017FE"}`, `"reba` + longS + `e"`} {
		if !m.lineMay([]byte(line)) {
			t.Errorf("lineMay(%q) is false", line)
		}
	}
	// a pattern of k and s only: any U+212A or U+017F is kept
	m, _ = Compile(Options{Pattern: "SK", IgnoreCase: true})
	if m.segF != nil || m.span != 12 {
		t.Fatalf("segF %+v, span %d", m.segF, m.span)
	}
	for _, line := range []string{`"\u017f\u212a"`, `"` + longS + `"`, `"` + kelvin + `"`, `"\u212A"`} {
		if !m.lineMay([]byte(line)) {
			t.Errorf("lineMay(%q) is false", line)
		}
	}
	m, _ = Compile(Options{Pattern: "abc", IgnoreCase: true}) // no k or s
	if m.lineMay([]byte(`"\u212a\u017f` + "\u212a\u017f" + `"`)) {
		t.Error("lineMay of a pattern without k or s kept U+212A")
	}
}

// TestOddEsc: the escapes of U+212A and U+017F, hex digits in either
// case, anywhere, also after many 1s (where the scan for the 1 they share
// gives way to the finders).
func TestOddEsc(t *testing.T) {
	ones := strings.Repeat("1", 5000)
	for _, c := range []struct {
		s    string
		want bool
	}{
		{`\u212a`, true}, {`\u212A`, true}, {`\u017f`, true}, {`\u017F`, true},
		{`x\u212ay`, true}, {`"te\u017Ft"`, true},
		{`\u2129`, false}, {`\u017e`, false}, {`\u212`, false}, {`\u01`, false}, {`u212a`, false}, {`\\u2b2a`, false},
		{`\u0130\u0131`, false}, {"\u212b\u1212", false},
		{ones + `\u212a`, true}, {ones + `\u017F` + ones, true}, {ones + `\u212b` + ones, false},
		{strings.Repeat(`\u1111`, 1000) + `\u017f`, true}, {strings.Repeat(`\u1111`, 1000), false},
	} {
		if got := oddEsc([]byte(c.s)); got != c.want {
			t.Errorf("oddEsc(%.40q…) = %v", c.s, got)
		}
	}
}

// FuzzFoldMatch holds Match with -i to the regular expression, and the raw
// scan to what the regular expression finds (go test -fuzz FuzzFoldMatch).
func FuzzFoldMatch(f *testing.F) {
	for _, c := range [][2]string{
		{"kelvin", "300 \u212aelvin and 3 KELVIN"},
		{"test", "te\u017ft TEST"},
		{"aa", "aaaaa"},
		{"abc", "\xffabc\xe2ABC\xc5"},
		{"rebase commit", "Rebase Commit"},
		{"bbq", strings.Repeat("b", 300) + "BBQ"},
		{"é", "É"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if pattern == "" {
			return
		}
		if _, err := Compile(Options{Pattern: pattern, IgnoreCase: true}); err != nil {
			return
		}
		sameAsRegexp(t, pattern, text)
		rawMaySameAsRegexp(t, pattern, text, false)
	})
}
