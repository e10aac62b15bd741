package tokens

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/tokens/internal/corpus"
)

// checkSame fails when Count or Encode of s differs from tiktoken-go.
func checkSame(t *testing.T, c *Counter, ref interface{ EncodeOrdinary(string) []int }, s string) bool {
	t.Helper()
	want := ref.EncodeOrdinary(s)
	got := c.Encode(s)
	if !slices.Equal(got, want) {
		t.Errorf("%s: Encode(%q)\n got %v\nwant %v", c.Encoding(), clip(s), got, want)
		return false
	}
	if n := c.Count(s); n != len(want) {
		t.Errorf("%s: Count(%q) = %d, tiktoken-go has %d tokens", c.Encoding(), clip(s), n, len(want))
		return false
	}
	return true
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestMatchesReferenceExamples(t *testing.T) {
	extra := []string{
		"Hello, 世界!", "I'M SURE you'LL LOVE it'S", "\xff\xfeinvalid\xc3", "a\xe4\xb8b",
		strings.Repeat(" ", 1000) + "x", strings.Repeat("\n", 300), strings.Repeat("=", 500),
		strings.Repeat("ab", 400), strings.Repeat("\t \r\n", 100) + "end", strings.Repeat("😀", 200),
		strings.Repeat("0", 1000), "<|endoftext|> <|fim_prefix|>",
	}
	for _, enc := range encodings {
		c, ref := counter(t, enc), reference(t, enc)
		for _, s := range append(slices.Clone(splitExamples), extra...) {
			checkSame(t, c, ref, s)
		}
	}
}

// TestMergeHeapMatchesScan runs both merge strategies on the same long
// pieces.
func TestMergeHeapMatchesScan(t *testing.T) {
	pieces := []string{
		strings.Repeat(" ", 300), strings.Repeat("ab", 150), strings.Repeat("!=", 200),
		strings.Repeat("\u3000", 100), strings.Repeat("😀👍🏽", 40), strings.Repeat("aaab", 70),
	}
	for _, d := range corpus.Generate(3, 64<<10) {
		if len(d) > 2 {
			pieces = append(pieces, d)
		}
	}
	for _, enc := range encodings {
		v := counter(t, enc).vocab
		var sc scratch
		for _, p := range pieces {
			var scan, heap []string
			v.mergeSmall(p, &sc, func(s string) { scan = append(scan, s) })
			v.mergeHeap(p, &sc, func(s string) { heap = append(heap, s) })
			if !slices.Equal(scan, heap) {
				t.Errorf("%s: merge of %q: scan %q, heap %q", enc, clip(p), scan, heap)
			}
		}
	}
}

func TestCountAllMatchesCount(t *testing.T) {
	docs := corpus.Generate(11, 300<<10)
	// One long text, to exercise the cutting; long texts without spaces are
	// not cut.
	docs = append(docs, strings.Join(docs, ""), strings.Repeat("中文", 100_000), "", "\xffx")
	for _, enc := range encodings {
		c := counter(t, enc)
		got := c.CountAll(docs)
		for i, d := range docs {
			if want := c.Count(d); got[i] != want {
				t.Errorf("%s: CountAll[%d] = %d, Count = %d", enc, i, got[i], want)
			}
		}
	}
}

func TestCutPoint(t *testing.T) {
	bmp := bmpClasses()
	s := strings.Repeat("x", 10) + "\t y z" + strings.Repeat("w", 10)
	if got := cutPoint(s, 10, bmp); got != 13 {
		t.Errorf("cutPoint = %d, want 13 (the space after y; a space after a tab is no boundary)", got)
	}
	if got := cutPoint(strings.Repeat("x", 40), 10, bmp); got != 40 {
		t.Errorf("cutPoint without spaces = %d, want 40", got)
	}
	if got := cutPoint("short", 10, bmp); got != 5 {
		t.Errorf("cutPoint of short text = %d, want 5", got)
	}
}

func TestNewCounterUnknown(t *testing.T) {
	if _, err := NewCounter("p50k_base"); err == nil {
		t.Error("NewCounter(p50k_base) succeeded, want an error")
	}
}

// The small cache of short pieces tells pieces apart by all their bytes
// and their length: 20,000 pieces, half of them sharing their first eight
// bytes, some ending in a NUL (the packing's padding), filling every slot
// several times over, each count as without the cache.
func TestFrontCacheTellsPiecesApart(t *testing.T) {
	c := counter(t, O200kBase)
	sc, ref := new(scratch), new(scratch)
	rng := rand.New(rand.NewPCG(3, 4))
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	for i := 0; i < 20000; i++ {
		b := []byte(" abcdefg")
		if i%2 == 1 { // or pieces that differ from their start
			b = []byte{' ', letters[rng.IntN(len(letters))], letters[rng.IntN(len(letters))]}
		}
		for k := 1 + rng.IntN(8); k > 0; k-- {
			b = append(b, letters[rng.IntN(len(letters))])
		}
		switch rng.IntN(4) {
		case 0:
			b = b[:2+rng.IntN(len(b)-1)] // shorter ones too, down to 2 bytes
		case 1:
			b = append(b[:min(len(b), 14)], 0) // a NUL, as the padding is
		}
		p := string(b)
		if got, want := c.countPiece(p, sc), c.countPieceSlow(p, ref); got != want {
			t.Fatalf("piece %q: %d tokens through the cache, %d without", p, got, want)
		}
	}
}
