package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"

	"github.com/sessctl/sessctl/pkg/tokens/internal/corpus"
)

// The splitting patterns as tiktoken defines them (and tiktoken-go compiles
// them with regexp2); the reference for the hand-written splitters.
const (
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|` +
		`\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

func refSplit(t testing.TB, re *regexp2.Regexp, s string) []string {
	t.Helper()
	var out []string
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ourSplit(sp *splitter, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := sp.next(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

type splitCase struct {
	name    string
	re      *regexp2.Regexp
	sp      *splitter
	pattern string
}

func splitCases(t testing.TB) []splitCase {
	return []splitCase{
		{"cl100k", regexp2.MustCompile(cl100kPattern, regexp2.None), &splitter{bmp: bmpClasses()}, cl100kPattern},
		{"o200k", regexp2.MustCompile(o200kPattern, regexp2.None), &splitter{bmp: bmpClasses(), o2: true}, o200kPattern},
	}
}

func checkSplit(t *testing.T, c splitCase, s string) bool {
	t.Helper()
	want := refSplit(t, c.re, s)
	got := ourSplit(c.sp, s)
	if strings.Join(want, "\x00") == strings.Join(got, "\x00") {
		return true
	}
	for k := range min(len(want), len(got)) {
		if want[k] != got[k] {
			t.Errorf("%s: split of %q differs at piece %d: got %q, regexp gives %q", c.name, s, k, got[k], want[k])
			return false
		}
	}
	t.Errorf("%s: split of %q: got %d pieces, regexp gives %d", c.name, s, len(got), len(want))
	return false
}

// splitExamples hold the corners of the patterns: contractions in all cases,
// the optional prefix, the backtracking of o200k's letter classes, marks,
// numbers and every branch of the white-space alternatives.
var splitExamples = []string{
	"", "a", " ", "I'M here", "you'LL see", "they'Ve", "don't", "x's", "'s", "''s", "'", "'x", "x'",
	"it'ſ", "A'S", "ABC'S", "abc'Re", "x'\u212A", "x'LLama",
	"hello world", "Hello World", "HTTPServer", "parseURL", "getHTTPResponseCode", "camelCaseWord",
	"A中B", "中文字", "ǅemal", "ʰaʷ", "ーカ", "e\u0301", "\u0301", "\u0301abc", " \u0301", "a\u0301\u0301",
	"ΣΑΣ", "Σσς", "𝔘𝔫𝔦", "𐐀𐐨", "Aʰ", "AʰB", "ABʰCD", "ǅǅ",
	"123", "1234567", "3.14159", "٣٤٥٦", "²³", "Ⅻ", "①②③④",
	"  hello", "\thello", "\n\nhello", "a  b", "a   ", "a\n\n  b", " \n \t\n x", "\r\n", "\r\n\r\n  ",
	"x\u00a0y", "\u3000中", "a \u2028b", "\u0085x",
	"!!!\n\n", " !!!\n", "!/\n/", "}\n\n}", " //x", "...\r\n", "foo(); // bar\n",
	"😀😀", " 😀", "👨‍👩‍👧", "🇺🇸", "\ufffd", "\u200b\u200d",
	"<|endoftext|>", "diff --git a/x b/x\n@@ -1,2 +1,3 @@\n-old\n+new\n",
}

func TestSplitMatchesRegexp(t *testing.T) {
	for _, c := range splitCases(t) {
		for _, s := range splitExamples {
			checkSplit(t, c, s)
		}
		n := 200_000
		if testing.Short() {
			n = 50_000
		}
		for _, d := range corpus.Generate(1, n) {
			if !checkSplit(t, c, d) {
				break
			}
		}
	}
}

// FuzzSplitMatchesRegexp compares the splitters with the regexps directly,
// which names the first differing piece (FuzzCountMatchesReference only sees
// the token ids).
func FuzzSplitMatchesRegexp(f *testing.F) {
	for _, s := range splitExamples {
		f.Add(s)
	}
	cases := splitCases(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = string([]rune(s))
		}
		for _, c := range cases {
			checkSplit(t, c, s)
		}
	})
}
