package tokens

import (
	"encoding/json"
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

// skip must step over exactly one JSON value wherever encoding/json
// accepts it, and over nothing more.
func FuzzLexerSkip(f *testing.F) {
	for _, s := range []string{`{"a":"x\"y\\","b":[1,{"c":"}"}],"z":null}`, `[[],{},"]\\",[["["]]]`, `"str"`, `-12.5e3`, `{"usage":{"a":null}}`, `[1,2}`, `{"a\\\"b":"x\\\\","0123456789abcdef\"":1, "k" : "v"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := lexer{b: b, watch: true}
		l.skip()
		if !json.Valid(b) {
			return // the lexer is lenient; it only must not panic
		}
		l.ws()
		if l.bad || l.i != len(b) {
			t.Fatalf("%q: stopped at %d of %d (bad %v)", b, l.i, len(b), l.bad)
		}
		// an object read key by key (str on every key) ends there too
		o := lexer{b: b}
		if o.peek() == '{' {
			var keys int
			if !o.object(func([]byte) { keys++; o.skip() }) || o.bad {
				t.Fatalf("%q: object() failed after %d keys", b, keys)
			}
			if o.ws(); o.i != len(b) {
				t.Fatalf("%q: object() stopped at %d of %d", b, o.i, len(b))
			}
		}
	})
}
