package usage

import (
	"encoding/json"
	"testing"
)

// Skip must step over exactly one JSON value wherever encoding/json
// accepts it, and over nothing more.
func FuzzLexerSkip(f *testing.F) {
	for _, s := range []string{`{"a":"x\"y\\","b":[1,{"c":"}"}],"z":null}`, `[[],{},"]\\",[["["]]]`, `"str"`, `-12.5e3`, `{"usage":{"a":null}}`, `[1,2}`, `{"a\\\"b":"x\\\\","0123456789abcdef\"":1, "k" : "v"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := Lexer{b: b}
		l.Watch([]byte("usage"), func([]byte) bool { return true })
		l.Skip()
		if !json.Valid(b) {
			return // the lexer is lenient; it only must not panic
		}
		l.ws()
		if l.bad || l.i != len(b) {
			t.Fatalf("%q: stopped at %d of %d (bad %v)", b, l.i, len(b), l.bad)
		}
		// an object read key by key (Str on every key) ends there too
		o := Lexer{b: b}
		if o.Peek() == '{' {
			var keys int
			if !o.Object(func([]byte) { keys++; o.Skip() }) || o.bad {
				t.Fatalf("%q: Object() failed after %d keys", b, keys)
			}
			if o.ws(); o.i != len(b) {
				t.Fatalf("%q: Object() stopped at %d of %d", b, o.i, len(b))
			}
		}
	})
}

// ParseMillis's fast path must read every timestamp as time.Parse does,
// and refuse what it refuses.
func FuzzParseMillis(f *testing.F) {
	for _, s := range []string{"2026-11-22T02:58:38.406Z", "2024-02-29T23:59:59.999Z", "2023-02-29T23:59:59.999Z", "2026-11-22T24:58:38.406Z",
		"2026-11-22T02:58:60.406Z", "0000-01-01T00:00:00.000Z", "2026-11-22T02:58:38.406z", "2026-11-22T02:58:38Z", "2026-11-22T03:58:38.406+01:00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseMillis(b)
		want, err2 := ParseRFC3339(string(b))
		if (err == nil) != (err2 == nil) || got != want {
			t.Fatalf("%q: %d %v, time.Parse %d %v", b, got, err, want, err2)
		}
	})
}
