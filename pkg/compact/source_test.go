package compact

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// TestSourceReadsLinesWhereAsked: backwards, forwards from an offset, and
// one line at an offset give the same lines and offsets as a forward read,
// across block boundaries, CRLF, blank lines and a last line without its
// newline.
func TestSourceReadsLinesWhereAsked(t *testing.T) {
	long := strings.Repeat("x", 150<<10) // longer than two blocks
	for name, content := range map[string]string{
		"plain":     "a\nbb\n\nccc\n",
		"no final":  "a\nbb\nccc",
		"crlf":      "a\r\nbb\r\n" + long + "\r\n",
		"long":      long + "\n" + "b\n" + long,
		"one line":  "only",
		"empty":     "",
		"blank end": "a\n\n",
		// newlines at, just before and just after a block boundary
		"block edge": strings.Repeat("y", 64<<10) + "\n" + "z\n" + strings.Repeat("w", 64<<10-1) + "\n" + strings.Repeat("v", 64<<10+1) + "\nq",
		"block end":  strings.Repeat("y", 64<<10),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.jsonl")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			type ln struct {
				off int64
				raw string
			}
			var want []ln
			f, _ := os.Open(path)
			jsonl.Scan(f, func(l *jsonl.Line) error {
				want = append(want, ln{l.Offset, string(l.Raw)})
				return nil
			})
			f.Close()
			src, err := openSource(path)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			var back []ln
			if err := src.Backward(context.Background(), func(off int64, raw []byte) (bool, error) {
				back = append([]ln{{off, string(raw)}}, back...)
				return false, nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(back) != len(want) {
				t.Fatalf("backwards %d lines, forwards %d", len(back), len(want))
			}
			for i := range want {
				if back[i] != want[i] {
					t.Errorf("line %d backwards at %d (%d bytes), forwards at %d (%d bytes)", i, back[i].off, len(back[i].raw), want[i].off, len(want[i].raw))
				}
				got, err := src.LineAt(want[i].off)
				if err != nil || !bytes.Equal(got, []byte(want[i].raw)) {
					t.Errorf("LineAt(%d): %d bytes, %v", want[i].off, len(got), err)
				}
			}
			if len(want) > 1 {
				var fwd []ln
				if err := src.Forward(context.Background(), want[1].off, func(l *jsonl.Line) error {
					fwd = append(fwd, ln{l.Offset, string(l.Raw)})
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(fwd) != len(want)-1 || fwd[0] != want[1] || fwd[len(fwd)-1] != want[len(want)-1] {
					t.Errorf("forwards from line 2: %d lines", len(fwd))
				}
			}
		})
	}
}
