package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readAll(t testing.TB, data []byte, max int) []Line {
	t.Helper()
	r := NewReader(bytes.NewReader(data))
	r.MaxLineSize = max
	var out []Line
	for {
		l, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Clone())
	}
}

func TestStatuses(t *testing.T) {
	input := "{\"a\":1}\n" + // 1 ok
		"\n" + // 2 blank
		"   \t\r\n" + // 3 blank, CRLF
		"{\"a\":\n" + // 4 invalid
		"[1,2]\n" + // 5 not object
		"\"str\"\r\n" + // 6 not object, CRLF
		"{\"a\":\"\xff\"}\n" + // 7 invalid utf8
		"{\"a\":\"x\x00\"}\n" + // 8 NUL
		"{\"k\":\"raw\ttab\"}\n" + // 9 ok, raw control
		"{\"a\":1} x\n" + // 10 trailing garbage
		"{\"role\":\"assistant\",\"content\":\"unterminated" // 11 truncated
	lines := readAll(t, []byte(input), 0)
	want := []struct {
		st  Status
		eol EOL
	}{
		{OK, LF}, {Blank, LF}, {Blank, CRLF}, {InvalidJSON, LF}, {NotObject, LF}, {NotObject, CRLF},
		{InvalidUTF8, LF}, {ContainsNUL, LF}, {OK, LF}, {InvalidJSON, LF}, {Truncated, NoEOL},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d", len(lines), len(want))
	}
	var offset int64
	for i, l := range lines {
		if l.Num != i+1 {
			t.Errorf("line %d: Num = %d", i+1, l.Num)
		}
		if l.Offset != offset {
			t.Errorf("line %d: Offset = %d, want %d", i+1, l.Offset, offset)
		}
		offset = l.End()
		if l.Status != want[i].st || l.EOL != want[i].eol {
			t.Errorf("line %d %q: status %v eol %v, want %v %v", i+1, l.Raw, l.Status, l.EOL, want[i].st, want[i].eol)
		}
	}
	if offset != int64(len(input)) {
		t.Errorf("lines cover %d bytes, input has %d", offset, len(input))
	}
	if !lines[8].RawControl {
		t.Error("line 9 holds a raw tab inside a string: RawControl should be set")
	}
	if lines[0].RawControl {
		t.Error("line 1 has no raw control characters")
	}
}

func TestFinalLineWithoutNewlineButValid(t *testing.T) {
	lines := readAll(t, []byte("{\"a\":1}\n{\"b\":2}"), 0)
	if len(lines) != 2 || lines[1].Status != OK || lines[1].EOL != NoEOL {
		t.Fatalf("got %+v", lines)
	}
}

func TestEmptyInput(t *testing.T) {
	if lines := readAll(t, nil, 0); len(lines) != 0 {
		t.Fatalf("empty input gave %d lines", len(lines))
	}
}

func TestLongLine(t *testing.T) {
	// a 64 MiB line between two short ones
	long := make([]byte, 0, 64<<20+32)
	long = append(long, `{"x":"`...)
	long = append(long, bytes.Repeat([]byte("a"), 64<<20)...)
	long = append(long, `"}`...)
	data := append(append([]byte("{\"a\":1}\n"), long...), "\n{\"b\":2}\n"...)
	lines := readAll(t, data, 0)
	if len(lines) != 3 {
		t.Fatalf("got %d lines", len(lines))
	}
	if lines[1].Status != OK || !bytes.Equal(lines[1].Raw, long) {
		t.Fatalf("long line: status %v, %d bytes", lines[1].Status, len(lines[1].Raw))
	}
	if lines[2].Offset != int64(8+len(long)+1) || lines[2].Status != OK {
		t.Fatalf("line after the long one: %+v", lines[2])
	}
}

func TestTooLongLineIsSkippedNotFatal(t *testing.T) {
	long := `{"x":"` + strings.Repeat("b", 300<<10) + `"}`
	data := []byte("{\"a\":1}\n" + long + "\r\n{\"b\":2}\n")
	lines := readAll(t, data, 100<<10)
	if len(lines) != 3 {
		t.Fatalf("got %d lines", len(lines))
	}
	if lines[1].Status != TooLong || lines[1].Raw != nil || lines[1].Len != int64(len(long))+1 {
		t.Fatalf("long line: %v len %d", lines[1].Status, lines[1].Len)
	}
	if lines[2].Status != OK || lines[2].Offset != int64(8+len(long)+2) {
		t.Fatalf("line after: %+v", lines[2])
	}
}

// The validator must agree with encoding/json on everything encoding/json
// accepts and rejects, apart from raw control characters in strings.
func TestValidateAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`, `[]`, `{"a":[1,2,{"b":null}],"c":true,"d":false}`, `1`, `-0`, `-0.5e+10`, `01`, `1.`,
		`.5`, `1e`, `"\u12"`, `"\u1234"`, `"\x"`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `{,}`, `nul`, `truex`,
		`{"a":"\""}`, `"\/"`, `  {"a":1}  `, `{"a":1}{"b":2}`, `[[[[]]]]`, `{"a":{"b":{"c":[]}}}`, ``, ` `,
		`"abc`, `{"a":-}`, `-`, `1E5`, `1e-5`, `[1 2]`, `{"a":1 "b":2}`, `"é"`,
	}
	for _, c := range cases {
		if got, want := validate([]byte(c)).ok, json.Valid([]byte(c)); got != want {
			t.Errorf("validate(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func TestStrictMakesRawControlDecodable(t *testing.T) {
	raw := []byte("{\"k\":\"a\tb\nc\x01\",\"n\":1}")
	if json.Valid(raw) {
		t.Fatal("test premise: encoding/json must reject raw control characters")
	}
	var v map[string]any
	if err := json.Unmarshal(Strict(raw), &v); err != nil {
		t.Fatal(err)
	}
	if v["k"] != "a\tb\nc\x01" {
		t.Fatalf("decoded %q", v["k"])
	}
	clean := []byte(`{"a":"b"}`)
	if got := Strict(clean); &got[0] != &clean[0] {
		t.Error("Strict copied a line that needed no change")
	}
}

func TestLineErrorUnwraps(t *testing.T) {
	base := errors.New("boom")
	var err error = &LineError{Path: "f", Line: 3, Offset: 10, Err: base}
	var le *LineError
	if !errors.As(err, &le) || !errors.Is(err, base) || le.Line != 3 {
		t.Fatal("LineError does not unwrap")
	}
	if err.Error() != "f:3 (byte 10): boom" {
		t.Fatalf("message %q", err.Error())
	}
}

// The lines of any input, with their terminators, are the input: the reader
// never loses or invents a byte.
func FuzzReaderRoundTrip(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n[1]\r\n{\"b\":\"\xff\"}\n{\"c\""))
	f.Add([]byte("\r\r\n\n"))
	f.Add([]byte("{\"a\":\"\x00\"}"))
	f.Add([]byte(`{"k":"v\u00e9"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		r.MaxLineSize = 64
		var rebuilt bytes.Buffer
		var offset int64
		for {
			l, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Offset != offset {
				t.Fatalf("line %d offset %d, want %d", l.Num, l.Offset, offset)
			}
			if l.Status == TooLong {
				rebuilt.Write(data[l.Offset : l.Offset+l.Len])
			} else {
				if int64(len(l.Raw)) != l.Len {
					t.Fatalf("line %d: len %d vs Len %d", l.Num, len(l.Raw), l.Len)
				}
				rebuilt.Write(l.Raw)
				if l.Status == OK {
					var v map[string]any
					if err := json.Unmarshal(Strict(l.Raw), &v); err != nil {
						t.Fatalf("line %d classified OK but encoding/json says %v: %q", l.Num, err, l.Raw)
					}
				} else if l.Status != Blank && l.Status != InvalidUTF8 && l.Status != ContainsNUL {
					var v map[string]any
					if json.Unmarshal(Strict(l.Raw), &v) == nil && bytes.IndexByte(l.Raw, 0) < 0 {
						t.Fatalf("line %d classified %v but decodes as an object: %q", l.Num, l.Status, l.Raw)
					}
				}
			}
			rebuilt.Write(l.EOL.Bytes())
			offset = l.End()
		}
		if !bytes.Equal(rebuilt.Bytes(), data) {
			t.Fatalf("rebuilt %q from %q", rebuilt.Bytes(), data)
		}
	})
}

// FuzzValidate compares the hand-written validator with encoding/json on
// inputs without control characters.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,null,true]}`, `"\u00zz"`, `[`, `-01`, `{"a":"b",}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.ContainsFunc(data, func(r rune) bool { return r < 0x20 && r != ' ' && r != '\t' && r != '\n' && r != '\r' }) {
			return
		}
		// outside strings white space is legal; inside strings raw tab/LF/CR are
		// accepted by us only, so compare on the escaped form
		got := validate(data).ok
		want := json.Valid(Strict(data))
		if got && !want {
			t.Fatalf("validate accepts %q, encoding/json rejects", data)
		}
		if !got && json.Valid(data) {
			t.Fatalf("validate rejects %q, encoding/json accepts", data)
		}
	})
}

func BenchmarkReader(b *testing.B) {
	var buf bytes.Buffer
	line := `{"parentUuid":"77be7db9-0a1d-4571-8c5a-771a7ea914ab","isSidechain":false,"message":{"id":"msg_7a8b","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum dolor sit amet ", 40) + `"}],"usage":{"input_tokens":167,"output_tokens":76}},"type":"assistant"}`
	for buf.Len() < 64<<20 {
		buf.WriteString(line)
		buf.WriteByte('\n')
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data))
		n := 0
		for {
			l, err := r.Next()
			if err != nil {
				break
			}
			if l.Status == OK {
				n++
			}
		}
		if n == 0 {
			b.Fatal("no lines")
		}
	}
}

func TestAtomicFileKeepsModeAndAddsNewline(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := CreateAtomic(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte(`{"a":1}`))
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Fatal("target changed before Commit")
	}
	if err := a.Commit(nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != "{\"a\":1}\n" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("content %q mode %v", b, fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temp file left behind: %v", ents)
	}
}

func TestAtomicFileCheckFailureLeavesOriginal(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	os.WriteFile(p, []byte("orig\n"), 0o644)
	a, err := CreateAtomic(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("new\n"))
	boom := errors.New("changed under us")
	if err := a.Commit(func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Commit = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "orig\n" {
		t.Fatalf("original changed: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temp file left behind: %v", ents)
	}
}

func TestAtomicFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	if _, err := CreateAtomic(dir, 0o644); err == nil {
		t.Fatal("CreateAtomic accepted a directory")
	}
}

func TestAppendTerminatesTornLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, []byte("{\"a\":1}\n{\"torn"), 0o644)
	if err := Append(p, []byte(`{"b":2}`), []byte("{\"c\":3}\n")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "{\"a\":1}\n{\"torn\n{\"b\":2}\n{\"c\":3}\n" {
		t.Fatalf("got %q", b)
	}
	// and on a clean file no extra newline
	os.WriteFile(p, []byte("{\"a\":1}\n"), 0o644)
	Append(p, []byte(`{"b":2}`))
	if b, _ := os.ReadFile(p); string(b) != "{\"a\":1}\n{\"b\":2}\n" {
		t.Fatalf("got %q", b)
	}
}
