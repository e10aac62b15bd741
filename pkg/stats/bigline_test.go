package stats

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/tokens"
)

// bigText is n bytes or more of text that exercises every cut: ASCII
// words, CJK (one long tokenizer piece), escapes, a surrogate pair.
func bigText(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	parts := []string{"alpha ", "beta\n", "世界你好", "\"quoted\" ", "tab\there ", "😀", "\\path\\x ", "\u2028", "é"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

// A huge line's long strings are cut to their start and a marker; the line
// stays JSON that decodes to the same structure, and the parts cut away
// are exactly the rest of each string.
func TestShortenKeepsTheLine(t *testing.T) {
	long1, long2 := bigText(300<<10, 1), bigText(200<<10, 2)
	v := map[string]any{
		"type": "user", "short": "kept as is",
		strings.Repeat("k", 100<<10): "a long key is kept",
		"message":                    map[string]any{"content": []any{map[string]any{"type": "text", "text": long1}, long2}},
	}
	line, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var cut [][]byte
	short := shorten(line, true, func(rest []byte) { cut = append(cut, append([]byte(nil), rest...)) })
	if len(cut) != 2 || len(short) > 110<<10+2*keepBytes+200 {
		t.Fatalf("%d parts cut, %d bytes left of %d", len(cut), len(short), len(line))
	}
	var got map[string]any
	if err := json.Unmarshal(short, &got); err != nil {
		t.Fatalf("shortened line is not JSON: %v", err)
	}
	content := got["message"].(map[string]any)["content"].([]any)
	texts := []string{content[0].(map[string]any)["text"].(string), content[1].(string)}
	for i, want := range []string{long1, long2} {
		head, mark, ok := strings.Cut(texts[i], markOpen)
		if !ok || mark != string(rune('0'+i))+markClose {
			t.Fatalf("string %d: no marker %d in %q…", i, i, texts[i][:40])
		}
		var rest string
		if err := json.Unmarshal(append(append([]byte{'"'}, cut[i]...), '"'), &rest); err != nil {
			t.Fatalf("part %d cut inside an escape: %v", i, err)
		}
		if head+rest != want {
			t.Errorf("string %d: kept %d + cut %d bytes are not the string (%d bytes)", i, len(head), len(rest), len(want))
		}
		if len(head) > keepBytes || len(head) < keepBytes/2 {
			t.Errorf("string %d: kept %d bytes (decoded), want about %d", i, len(head), keepBytes)
		}
	}
	if got["short"] != "kept as is" || got[strings.Repeat("k", 100<<10)] != "a long key is kept" {
		t.Error("short strings or keys changed")
	}
	if same := shorten([]byte(`{"a":"b"}`), true, func([]byte) { t.Error("cut a short string") }); string(same) != `{"a":"b"}` {
		t.Errorf("a line without long strings changed: %s", same)
	}
}

// The estimate of a cut string, counted a chunk at a time, is the whole
// string's count give or take a token or two per chunk boundary.
func TestCutStringCountsLikeTheWhole(t *testing.T) {
	c, err := tokens.NewCounter(tokens.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	text := bigText(1<<20, 3)
	raw, _ := json.Marshal(text)
	a := &analyzer{counter: c}
	got := a.countCut(raw[1 : len(raw)-1]).tokens
	want := int64(c.CountAll([]string{text})[0])
	if slack := int64(2 * (len(raw)/countChunk + 1)); got < want-slack || got > want+slack {
		t.Errorf("chunked count %d, whole %d (allowed ±%d)", got, want, slack)
	}
}
