package tokens

import (
	"slices"
	"testing"
)

// FuzzCountMatchesReference is the differential fuzz test of the counter:
// for both encodings, Encode must give tiktoken-go's token ids and Count
// their number, for any input, invalid UTF-8 included.
func FuzzCountMatchesReference(f *testing.F) {
	for _, s := range splitExamples {
		f.Add(s)
	}
	f.Add("\xff\xfe\xc3(")
	f.Add("    \n\n\t  x  ")
	type pair struct {
		c   *Counter
		ref interface{ EncodeOrdinary(string) []int }
	}
	var pairs []pair
	for _, enc := range encodings {
		pairs = append(pairs, pair{counter(f, enc), reference(f, enc)})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range pairs {
			want := p.ref.EncodeOrdinary(s)
			if got := p.c.Encode(s); !slices.Equal(got, want) {
				t.Fatalf("%s: Encode(%q)\n got %v\nwant %v", p.c.Encoding(), s, got, want)
			}
			if got := p.c.Count(s); got != len(want) {
				t.Fatalf("%s: Count(%q) = %d, want %d", p.c.Encoding(), s, got, len(want))
			}
		}
	})
}
