// Package corpus generates a deterministic, mixed text corpus for testing and
// benchmarking token counters: prose, code, diffs, JSON, CJK, emoji, marks,
// white-space runs, numbers and contractions in every case.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Generate returns documents totalling at least total bytes, the same for the
// same seed.
func Generate(seed uint64, total int) []string {
	r := rand.New(rand.NewPCG(seed, 0x5e55c71))
	var docs []string
	n := 0
	for n < total {
		d := Doc(r)
		docs = append(docs, d)
		n += len(d)
	}
	return docs
}

// Doc returns one document of a random kind, from a few bytes to a few
// kilobytes long.
func Doc(r *rand.Rand) string {
	var b strings.Builder
	kinds := []func(*strings.Builder, *rand.Rand){prose, code, diff, jsonDoc, cjk, noise, spaces}
	// Most documents are one kind; some mix several, as transcripts do.
	parts := 1
	if r.IntN(4) == 0 {
		parts = 2 + r.IntN(4)
	}
	for range parts {
		kinds[r.IntN(len(kinds))](&b, r)
	}
	return b.String()
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

var words = strings.Fields(`the of and to in is that it for you was with on as have
but be they at one this from or had by word what all were we when your can said there use
an each which she do how their if will up other about out many then them these so some her
would make like him into time has look two more write go see number no way could people my
than first water been call who oil its now find long down day did get come made may part
function return error value string context session token window budget compaction checkpoint
Hello World JSON README TODO FIXME HTTPServer parseURL getHTTPResponseCode XMLHttpRequest
naïve café résumé Ångström façade jalapeño São Paulo Zürich Straße ΑΘΗΝΑ Ελλάδα Москва привет
ǅemal ǈubljana ʰaʷ ˈwɜːld`)

var contractions = []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Re",
	"'rE", "'VE", "'vE", "'M", "'LL", "'Ll", "'lL", "'D", "'x", "'", "''", "'ſ", "’s", "'\u212A"}

var puncts = []string{".", ",", "!", "?", ";", ":", "...", " -- ", " — ", "\"", "(", ")", "[", "]",
	"{", "}", "/", "//", "\\", "*", "**", "#", "@", "$", "%", "^", "&", "|", "~", "`", "```",
	"<", ">", "=>", "->", "!=", "==", ":=", "+=", "«", "»", "“", "”", "…", "¿", "¡", "§", "©", "°"}

func prose(b *strings.Builder, r *rand.Rand) {
	n := 5 + r.IntN(200)
	for i := range n {
		w := pick(r, words)
		switch r.IntN(6) {
		case 0:
			w = strings.ToUpper(w)
		case 1:
			rs := []rune(w)
			w = strings.ToUpper(string(rs[:1])) + string(rs[1:])
		}
		b.WriteString(w)
		if r.IntN(8) == 0 {
			b.WriteString(pick(r, contractions))
			if r.IntN(3) == 0 {
				b.WriteString(pick(r, words))
			}
		}
		switch x := r.IntN(20); {
		case x < 3:
			b.WriteString(pick(r, puncts))
		case x == 3:
			fmt.Fprintf(b, " %d", r.IntN(1_000_000_000))
		case x == 4 && i > 0:
			b.WriteString(pick(r, []string{"\n", "\n\n", "\r\n", "\n\n\n", " \n", "\t\n"}))
			continue
		}
		b.WriteString(pick(r, []string{" ", " ", " ", " ", "  ", "\t", "\u00a0", "\u3000"}))
	}
}

var codeLines = []string{
	"func (c *Counter) Count(text string) int {",
	"\treturn len(text) + 3 / 4",
	"\tfor i := 0; i < len(s); i++ {",
	"\t\tif err != nil {\n\t\t\treturn fmt.Errorf(\"read %s: %w\", path, err)\n\t\t}",
	"def encode(self, text: str) -> list[int]:",
	"    return [self.ranks[p] for p in pieces]  # type: ignore",
	"const x = await fetch(`https://example.com/api/v1/items?id=${id}&q=%20`);",
	"if (a !== b && c >= 0x1F) { console.log('don\\'t', \"I'm\"); }",
	"#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }",
	"SELECT id, name FROM users WHERE created_at >= '2024-01-01' ORDER BY id DESC;",
	"    }\n}\n",
	"// TODO(sessctl): handle \\r\\n line endings",
	"x = [1, 2, 3, 4_000, 5.5e-10, 0b1010, 0o777]",
	"<div class=\"row\"><span>&nbsp;&amp;</span></div>",
	"$ go test -race ./... && echo ok",
	"let s: &str = \"héllo wörld\"; // 😀",
	"    self.assertEqual(count('you\\'LL'), 3)",
}

func code(b *strings.Builder, r *rand.Rand) {
	indent := pick(r, []string{"", "  ", "    ", "\t", "\t\t", "        "})
	for range 3 + r.IntN(40) {
		b.WriteString(indent)
		b.WriteString(pick(r, codeLines))
		b.WriteString(pick(r, []string{"\n", "\n", "\n", "\r\n", "\n\n", "  \n", "\n    \n"}))
	}
}

func diff(b *strings.Builder, r *rand.Rand) {
	fmt.Fprintf(b, "diff --git a/pkg/x.go b/pkg/x.go\nindex %07x..%07x 100644\n--- a/pkg/x.go\n+++ b/pkg/x.go\n",
		r.Uint32()>>4, r.Uint32()>>4)
	for range 1 + r.IntN(4) {
		fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@ func main() {\n", r.IntN(900), r.IntN(30), r.IntN(900), r.IntN(30))
		for range 2 + r.IntN(12) {
			b.WriteString(pick(r, []string{" ", "+", "-"}))
			b.WriteString(pick(r, codeLines))
			b.WriteString("\n")
		}
	}
}

func jsonDoc(b *strings.Builder, r *rand.Rand) {
	b.WriteString(`{"type":"assistant","message":{"id":"msg_01`)
	fmt.Fprintf(b, `%016x","role":"assistant","content":[{"type":"text","text":"`, r.Uint64())
	b.WriteString(strings.ReplaceAll(pick(r, codeLines), "\n", `\n`))
	fmt.Fprintf(b, `"}],"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d}},`,
		r.IntN(200000), r.IntN(64000), r.IntN(150000))
	fmt.Fprintf(b, `"timestamp":"2025-%02d-%02dT%02d:%02d:%02d.%03dZ","cwd":"/home/u/src/sessctl"}`,
		1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
	if r.IntN(2) == 0 {
		b.WriteString("\n")
	}
}

var cjkText = []string{
	"你好，世界！", "这是一个测试。", "令牌计数器", "会话文件", "上下文窗口已满，需要压缩。",
	"日本語のテキストです。", "カタカナとひらがな", "ラーメン", "コーヒー", "東京都",
	"한국어 텍스트", "안녕하세요", "中文English混合text", "１２３４５", "「引用」", "〜",
}

func cjk(b *strings.Builder, r *rand.Rand) {
	for range 3 + r.IntN(60) {
		b.WriteString(pick(r, cjkText))
		if r.IntN(4) == 0 {
			b.WriteString(pick(r, []string{" ", "\n", "、", "。", " 123 ", "😀", "🇯🇵"}))
		}
	}
}

// noiseRunes are runes from classes the splitting patterns treat differently.
var noiseRunes = []rune("aZé ß\t\n\r'’\"/\\.,;:!?-_()[]{}<>@#$%^&*+=|~`0123456789" +
	"²³¼٣४Ⅻ①" + // numbers that are not ASCII digits (Nd, No, Nl)
	"\u0301\u0308\u093f\u0947\u064e\u20dd\u0903" + // marks: Mn, Mc, Me
	"ǅǈᾈ" + // Lt
	"ʰˈー々" + // Lm
	"中文字あアא" + // Lo
	"ΣσςДд" + // Lu, Ll
	"\u00a0\u1680\u2000\u2028\u2029\u202f\u205f\u3000\u0085\u000b\u000c" + // white space
	"\u200b\u200d\ufeff\u00ad" + // format characters (Cf), not white space
	"😀👍🏽👨‍👩‍👧🇺🇸𝔘𝔫𝔦𝟘𐐀𐐨" + // astral: emoji, math letters and digits, Deseret Lu/Ll
	"\ufffd\u0000\u007f")

func noise(b *strings.Builder, r *rand.Rand) {
	for range 1 + r.IntN(300) {
		b.WriteRune(noiseRunes[r.IntN(len(noiseRunes))])
	}
}

func spaces(b *strings.Builder, r *rand.Rand) {
	for range 1 + r.IntN(20) {
		ws := pick(r, []string{" ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\v", "\f"})
		b.WriteString(strings.Repeat(ws, 1+r.IntN(40)))
		if r.IntN(2) == 0 {
			b.WriteString(pick(r, []string{"x", "Word", "12345", "!", "'s", "中", "\u0301", "/", ""}))
		}
	}
}
