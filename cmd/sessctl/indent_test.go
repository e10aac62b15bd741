package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// indentRef is what encoding/json writes for v with SetIndent(prefix,
// indent) and SetEscapeHTML(false).
func indentRef(t testing.TB, v any, prefix, indent string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(prefix, indent)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// randValue makes a value of nested maps, slices, strings (with quotes,
// backslashes, braces, HTML and non-ASCII), numbers, booleans and nulls.
func randValue(r *rand.Rand, depth int) any {
	pieces := []string{`"`, `\`, `\\`, `\"`, "{", "}", "[", "]", ",", ":", " ", "<a&b>", "é", "\u2028", "\n", "\x01", "x", "", "}]"}
	str := func() string {
		var s strings.Builder
		for range r.IntN(6) {
			s.WriteString(pieces[r.IntN(len(pieces))])
		}
		return s.String()
	}
	k := r.IntN(8)
	if depth > 4 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		return str()
	case 1:
		return r.Float64() * 1e6
	case 2:
		return r.IntN(3) == 0
	case 3:
		return nil
	case 4, 5:
		m := map[string]any{}
		for range r.IntN(4) {
			m[str()] = randValue(r, depth+1)
		}
		return m
	default:
		var s []any
		for range r.IntN(4) {
			s = append(s, randValue(r, depth+1))
		}
		if s == nil && r.IntN(2) == 0 {
			return []any{}
		}
		return s
	}
}

func TestIndentJSON(t *testing.T) {
	type row struct {
		A string         `json:"a"`
		B []int          `json:"b"`
		C map[string]int `json:"c,omitempty"`
		D *row           `json:"d,omitempty"`
		E struct{}       `json:"e"`
	}
	values := []any{nil, 1, "x", []any{}, map[string]any{}, []any{[]any{}, map[string]any{}},
		row{A: `q"uo\te`, B: []int{}, C: map[string]int{"}": 1}, D: &row{B: []int{1, 2}}},
		map[string]any{"a": []any{map[string]any{}, "[", map[string]any{"b": nil}}}}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		values = append(values, randValue(r, 0))
	}
	for _, pi := range [][2]string{{"", "  "}, {"  ", "  "}, {"    ", "  "}, {"", "\t"}} {
		for _, v := range values {
			want := indentRef(t, v, pi[0], pi[1])
			var got bytes.Buffer
			if err := newIndentEncoder(&got, pi[0], pi[1]).Encode(v); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("prefix %q indent %q: %#v\ngot  %q\nwant %q", pi[0], pi[1], v, got.Bytes(), want)
			}
		}
	}
}

// Any compact JSON, not only what our types encode to, is indented as
// json.Indent does.
func FuzzIndentJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,{},[]],"b":"\"}"}`, `[]`, `"\\\\"`, `{"x":{"y":[{"z":"\\"}]}}`, `[[],[[]],{"":{}}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatal(err)
		}
		c.WriteByte('\n')
		var want bytes.Buffer
		if err := json.Indent(&want, c.Bytes(), "  ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentJSON(nil, c.Bytes(), "  ", "  "); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%q:\ngot  %q\nwant %q", c.Bytes(), got, want.Bytes())
		}
	})
}

// BenchmarkIndent is the indenting of a report of a few hundred KB, by
// encoding/json and by indentEncoder.
func BenchmarkIndent(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	var v []any
	for range 2000 {
		v = append(v, randValue(r, 0))
	}
	b.Run("encoding-json", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("  ", "  ")
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			enc.Encode(v)
		}
		b.SetBytes(int64(buf.Len()))
	})
	b.Run("indentEncoder", func(b *testing.B) {
		var buf bytes.Buffer
		enc := newIndentEncoder(&buf, "  ", "  ")
		for b.Loop() {
			buf.Reset()
			enc.Encode(v)
		}
		b.SetBytes(int64(buf.Len()))
	})
}
