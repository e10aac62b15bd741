package jsonl

import (
	"bytes"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// classifyScans is classify as it was before the validator checked UTF-8
// and NULs itself: three scans (a NUL, the JSON, utf8.Valid) in that order
// of precedence. It is the oracle of TestClassifyOneScan and
// FuzzClassify.
func classifyScans(raw []byte, terminated bool) (Status, bool) {
	if isBlank(raw) {
		return Blank, false
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		if !terminated && !validate(raw).ok {
			return Truncated, false
		}
		return ContainsNUL, false
	}
	res := validate(raw)
	switch {
	case !res.ok && !terminated:
		return Truncated, false
	case !res.ok:
		return InvalidJSON, false
	case !utf8.Valid(raw):
		return InvalidUTF8, false
	case !res.object:
		return NotObject, false
	}
	return OK, res.rawControl
}

func checkClassify(t *testing.T, raw []byte) {
	t.Helper()
	for _, term := range []bool{true, false} {
		gs, gc := classify(raw, term, false)
		ws, wc := classifyScans(raw, term)
		if gs != ws || gc != wc {
			t.Fatalf("classify(%q, terminated %v) = %v, %v; the separate scans say %v, %v", raw, term, gs, gc, ws, wc)
		}
	}
}

// classifyCases are lines where the statuses meet: NULs in and out of
// strings, with JSON that is cut or invalid; bytes that are not UTF-8 in
// keys, values and outside strings; surrogates, overlong forms and the
// largest code points; raw control characters.
var classifyCases = []string{
	`{"a":"b"}`, `{"a":"b\u0000"}`, "{\"a\":\"b\x00\"}", "{\"a\":\"b\"}\x00", "\x00{\"a\":1}",
	"{\"a\":\"b\x00", "{\"a\":\"b\x00\"", "{\"a\":\x00\"b\"}", "[\"\x00\"]", "\"\x00\"",
	"{\"a\":\"caf\xc3\xa9\"}", "{\"caf\xc3\xa9\":1}", "{\"a\":\"caf\xc3\"}", "{\"a\":\"caf\xe9\"}",
	"{\"caf\xe9\":1}", "{\"a\":1}\xe9", "{\"a\":\xe9}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xc0\x80\"}",
	"{\"a\":\"\xf4\x8f\xbf\xbf\"}", "{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"\xef\xbf\xbd\"}", "{\"a\":\"\xff\xfe\"}",
	"{\"a\":\"\xe2\x82\"}", "{\"a\":\"\xe2\x82", "{\"a\":\"\xe2\x82\xac\xac\"}", "[\"\xe9\"]", "\"\xe9\"", "\"\xc3\xa9\"",
	"{\"a\":\"\xe9\x00\"}", "{\"a\":\"\xe9\",}", "{\"a\":\"\xe9\x00\",}", "{\"a\":\"\t\n\r\x01\"}",
	"{\"a\":\"\x01\xe9\"}", "{\"a\":\"\x1f\",\"b\":\"\xc3\xa9\"}", "  ", "", "1", "[1,2]", "{\"a\":", "{\"a\":\"\\u00e9\"}",
	"{\"a\":\"\\\xe9\"}", "{\"a\":\"\\\x00\"}", "{\"a\":\"x\"} \x00", "{\"a\":\"\xe9\"} x", "{\"a\":\"\xc3\xa9\xe9\xc3\xa9\"}",
}

// TestClassifyOneScan holds classify (one pass of the validator, which
// checks NULs and UTF-8 in the strings it reads) to the separate scans it
// replaced: the crafted cases, every line of the test data and the shared
// samples, and those lines with random bytes put in, taken out or
// changed.
func TestClassifyOneScan(t *testing.T) {
	statuses := map[Status]int{}
	for _, c := range classifyCases {
		checkClassify(t, []byte(c))
		s, _ := classify([]byte(c), true, false)
		statuses[s]++
	}
	var lines [][]byte
	// the shared samples when they are there (a clone of the repository
	// alone has only its test data: 353 lines)
	want := 300
	roots := []string{filepath.Join("..", "..", "testdata")}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "samples")); err == nil {
		roots, want = append(roots, filepath.Join("..", "..", "..", "shared", "samples")), 1000
	}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(d.Name(), ".jsonl") || strings.HasSuffix(p, ".zst") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			for _, l := range bytes.Split(b, []byte("\n")) {
				if len(l) <= 64<<10 {
					lines = append(lines, l)
				}
			}
			return nil
		})
	}
	if len(lines) < want {
		t.Fatalf("only %d lines of test data, want %d", len(lines), want)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	// bytes where the statuses part ways
	edge := []byte{0, 1, 0x1f, '"', '\\', '{', '}', ',', 0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xef, 0xf4, 0xf5, 0xff, 'x'}
	for _, l := range lines {
		checkClassify(t, l)
		for range 3 {
			m := bytes.Clone(l)
			for range 1 + rng.IntN(3) {
				i := rng.IntN(len(m) + 1)
				c := edge[rng.IntN(len(edge))]
				switch op := rng.IntN(3); {
				case op == 0 || len(m) == 0 || i == len(m):
					m = append(m[:i:i], append([]byte{c}, m[i:]...)...)
				case op == 1:
					m[i] = c
				default:
					m = append(m[:i:i], m[i+1:]...)
				}
			}
			checkClassify(t, m)
			s, _ := classify(m, true, false)
			statuses[s]++
		}
	}
	// the cases and the mutations reached every status a line can have
	for _, s := range []Status{OK, InvalidJSON, NotObject, InvalidUTF8, ContainsNUL} {
		if statuses[s] == 0 {
			t.Errorf("no line was %v: %v", s, statuses)
		}
	}
}

// FuzzClassify is TestClassifyOneScan on any bytes.
func FuzzClassify(f *testing.F) {
	for _, c := range classifyCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkClassify(t, raw)
	})
}
