package jsonl

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestSkipTo: for every offset of a file, the lines SkipTo returns are the
// lines of a whole-file read that start at or after it, with the same
// numbers, offsets and bytes, whether the source is a file or a stream.
func TestSkipTo(t *testing.T) {
	data := []byte("{\"a\":1}\n\n{\"b\":\"x\\ny\"}\r\nnot json\n{\"c\":3}\n{\"d\":4}")
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	type got struct {
		num    int
		offset int64
		raw    string
		status Status
	}
	collect := func(r *Reader) []got {
		var out []got
		for {
			l, err := r.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got{l.Num, l.Offset, string(l.Raw), l.Status})
		}
	}
	all := collect(NewReader(bytes.NewReader(data)))
	for from := int64(0); from <= int64(len(data))+2; from++ {
		var want []got
		for _, g := range all {
			if g.offset >= from {
				want = append(want, g)
			}
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for name, src := range map[string]io.Reader{"file": f, "stream": struct{ io.Reader }{bytes.NewReader(data)}} {
			r, err := SkipTo(src, from)
			if err != nil {
				t.Fatalf("%s from %d: %v", name, from, err)
			}
			if g := collect(r); !equalGot(g, want) {
				t.Errorf("%s from %d:\n got %v\nwant %v", name, from, g, want)
			}
		}
		f.Close()
	}
}

func equalGot[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
