package usage

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
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

// strictWalk reads the value at l's place as a scanner does: the objects
// and arrays of the first levels key by key and element by element, the
// strings, numbers and literals with their own readers, anything deeper
// skipped whole.
func strictWalk(l *Lexer, depth int) {
	switch c := l.Peek(); {
	case (c == '{') && depth < 3:
		l.Object(func([]byte) { strictWalk(l, depth+1) })
	case c == '[' && depth < 3:
		l.Array(func() { strictWalk(l, depth+1) })
	case c == '"':
		l.Str()
	case c == '-' || c >= '0' && c <= '9':
		if depth%2 == 0 {
			l.Number()
		} else {
			l.Float()
		}
	case c == 't' || c == 'f' || c == 'n':
		if _, ok := l.Literal(); !ok {
			l.Skip()
		}
	default:
		l.Skip()
	}
}

// checkStrict holds a strict Lexer that walked line to the validating
// jsonl.Reader: a line it reads to its End is one the Reader finds JSON,
// with the same Status and RawControl, and a line the Reader finds to be
// one object (whatever its strings hold) it reads to its end.
func checkStrict(t *testing.T, line []byte) {
	t.Helper()
	if bytes.ContainsAny(line, "\n\r") {
		return
	}
	want, err := jsonl.NewReader(bytes.NewReader(append(line[:len(line):len(line)], '\n'))).Next()
	if err != nil {
		t.Fatal(err)
	}
	l := NewStrictLexer(line)
	object := l.Peek() == '{'
	strictWalk(&l, 0)
	walked := object && l.End()
	if walked && l.Deepest()+3 >= 10000 {
		return // past the validator's depth counted from the line's start: the caller's to bound
	}
	valid := jsonl.Valid(line) && bytes.TrimLeft(line, " \t")[0] == '{'
	if walked != valid {
		t.Fatalf("%q: the strict lexer read it whole: %v; the Reader says %v", line, walked, want.Status)
	}
	if !walked {
		return
	}
	if st, rc := l.Status(); st != want.Status || rc != want.RawControl {
		t.Fatalf("%q: strict lexer says %v (raw control %v); the Reader %v (%v)", line, st, rc, want.Status, want.RawControl)
	}
}

var strictCases = []string{
	`{"a":"b","n":[1,-2.5e+3,0,true,false,null],"o":{"k":{"d":[{"x":"\u0041\n"}]}}}`,
	`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":[01]}`, `{"a":{"b":{"c":{"d":01}}}}`,
	`{"a":tru}`, `{"a":nul}`, `{"a":[true,]}`, `{"a":1,}`, `{"a" 1}`, `{"a":1}}`, `{"a":1} x`, ` {"a":1} `,
	`{"a":"\q"}`, `{"a":"\u12G4"}`, `{"a":"` + "\xff" + `"}`, `{"a":"` + "\x00" + `"}`, `{"a":"` + "\x01" + `"}`,
	`{"` + "\xff" + `":1}`, `{"a":{"b":{"c":{"d":"` + "\xed\xa0\x80" + `"}}}}`, `{"a":"x\"y\\"}`,
	`[1]`, `"s"`, `{}`, ``, `{`, `{"a":"b`, `{"a":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`,
}

func TestStrictLexer(t *testing.T) {
	for _, c := range strictCases {
		checkStrict(t, []byte(c))
	}
}

// FuzzStrictLexer holds the strict Lexer to the validator on any line.
func FuzzStrictLexer(f *testing.F) {
	for _, c := range strictCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkStrict)
}
