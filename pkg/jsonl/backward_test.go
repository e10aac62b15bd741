package jsonl

import (
	"bytes"
	"io"
	"testing"
)

// backwardLines reads data backwards and returns its lines in file order,
// with the unterminated end.
func backwardLines(t *testing.T, data []byte, limit int) ([]Line, []byte, bool) {
	t.Helper()
	b := NewBackward(bytes.NewReader(data), int64(len(data)))
	b.MaxLineSize = limit
	part, off, ok, err := b.Partial()
	if err != nil {
		t.Fatal(err)
	}
	if ok && off+int64(len(part)) != int64(len(data)) {
		t.Fatalf("partial at %d, %d bytes, of %d", off, len(part), len(data))
	}
	part = bytes.Clone(part)
	var out []Line
	for {
		l, err := b.Prev()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append([]Line{l.Clone()}, out...)
	}
	return out, part, ok
}

// checkBackward holds Backward to Reader on data: the same lines, offsets,
// bytes and statuses (the unterminated end aside: Reader reads it as a
// last line, Backward hands it over as Partial).
func checkBackward(t *testing.T, data []byte, limit int) {
	rd := NewReader(bytes.NewReader(data))
	rd.MaxLineSize = limit
	var want []Line
	var wantPart []byte
	for {
		l, err := rd.Next()
		if err != nil {
			break
		}
		if l.EOL == NoEOL {
			wantPart = bytes.Clone(l.Raw)
			if l.Status == TooLong {
				wantPart = nil
			}
			continue
		}
		want = append(want, l.Clone())
	}
	got, part, _ := backwardLines(t, data, limit)
	if !bytes.Equal(part, wantPart) {
		t.Fatalf("%q: partial %q, want %q", data, part, wantPart)
	}
	if len(got) != len(want) {
		t.Fatalf("%q: %d lines, want %d", data, len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		w.Num = 0
		if g.Offset != w.Offset || g.Len != w.Len || g.EOL != w.EOL || g.Status != w.Status ||
			g.RawControl != w.RawControl || !bytes.Equal(g.Raw, w.Raw) {
			t.Fatalf("%q line %d:\n got %+v\nwant %+v", data, i+1, g, w)
		}
	}
}

func TestBackwardMatchesReader(t *testing.T) {
	long := `{"a":"` + string(bytes.Repeat([]byte("x"), 300<<10)) + `"}`
	for _, s := range []string{
		"", "\n", "\n\n", "{}", "{}\n", "{}\n{\"a\":1}\r\n\n  \n[1]\n{\"b\":\"\x01\"}\n{bad\n{\"c\":2}",
		long + "\n{}\n" + long + "\n" + long, "{}\n" + long + "\n{}\n",
	} {
		checkBackward(t, []byte(s), 0)
		checkBackward(t, []byte(s), 100<<10) // long lines TooLong
	}
}

func FuzzBackward(f *testing.F) {
	f.Add([]byte("{}\n{\"a\":1}\r\n\n  \n[1]\n{bad\n{\"c\":2}"))
	f.Add([]byte("{\"a\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkBackward(t, data, 0)
	})
}
