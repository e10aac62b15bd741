package session_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// FuzzDecodeAndDetect feeds session files that nobody vetted to format
// detection and to every agent's decoder (issue 11, item 11): neither may
// panic, detection must give the same answer twice, and a decoded record
// keeps the line it came from.
func FuzzDecodeAndDetect(f *testing.F) {
	for _, dir := range []string{testdata, filepath.Join("..", "..", "..", "shared", "samples")} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Ext(p) == ".jsonl" {
				if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
					f.Add(b)
				}
			}
			return nil
		})
	}
	f.Add([]byte(`{"role":"_checkpoint","id":0}` + "\n" + `{"role":"user","content":"\u001b]0;x\u0007"}`))
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"x"}}` + "\n{\"type\":\"response_item\",\"payload\":null}\n"))
	f.Add([]byte("{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":[1,{}]}]}}\n\xff\x00{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a1, err1 := session.Detect("x.jsonl", bytes.NewReader(data))
		a2, err2 := session.Detect("x.jsonl", bytes.NewReader(data))
		if a1 != a2 || (err1 == nil) != (err2 == nil) {
			t.Fatalf("detection not repeatable: %v %v / %v %v", a1, err1, a2, err2)
		}
		for _, a := range session.Agents {
			fm := session.FormatFor(a)
			if fm == nil {
				continue
			}
			r := jsonl.NewReader(bytes.NewReader(data))
			for {
				l, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rec := session.Decode(fm, l)
				if rec.Line.Offset != l.Offset || rec.Line.Num != l.Num {
					t.Fatalf("%s: record of line %d at %d says line %d at %d", a, l.Num, l.Offset, rec.Line.Num, rec.Line.Offset)
				}
			}
		}
	})
}
