package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestReadLinesAt: the lines read alone (pread, or from a compressed file
// read whole) come as the whole read gives them: number, offset, length,
// terminator, status and what they decode to, for lines ending in LF and
// CRLF, the last line without a newline, a blank line, corrupt ones, a
// line longer than hugeLine (not copied into a batch), a line cut short by
// a shrunk file.
func TestReadLinesAt(t *testing.T) {
	lines := []string{
		`{"type":"user","message":{"role":"user","content":"one"},"uuid":"u1"}` + "\n",
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"two"}]},"uuid":"u2"}` + "\r\n",
		"\n",
		`{"type":"user","message":{"role":"user","content":"caf` + "\xe9" + `"},"uuid":"u3"}` + "\n",
		`{"type":"user","message":{"role":"user","content":"four"},"uuid":"u4"` + "\n",
		`{"type":"user","message":{"role":"user","content":"five"},"uuid":"u5"}` + "\r\n",
		`{"type":"user","message":{"role":"user","content":"` + strings.Repeat("huge ", hugeLine/4) + `"},"uuid":"u7"}` + "\n",
		`{"type":"user","message":{"role":"user","content":"six"},"uuid":"u6"}`,
	}
	dir := t.TempDir()
	plain := filepath.Join(dir, "s.jsonl")
	var data []byte
	for _, l := range lines {
		data = append(data, l...)
	}
	if err := os.WriteFile(plain, data, 0o600); err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	packed := filepath.Join(dir, "rollout-s.jsonl.zst")
	if err := os.WriteFile(packed, enc.EncodeAll(data, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	f := FormatFor(Claude)
	show := func(r *Record) string {
		l := &r.Line
		return fmt.Sprintf("%d@%d+%d %v %v %q | %v %v %q", l.Num, l.Offset, l.Len, l.EOL, l.Status, l.Raw, r.Kind, r.Role, r.Text)
	}
	ctx := context.Background()
	var all []string
	var at []LineAt
	err := ReadFileContext(ctx, plain, f, func(r *Record) error {
		all = append(all, show(r))
		at = append(at, LineAt{Num: r.Line.Num, Offset: r.Line.Offset, Len: r.Line.Len})
		return nil
	})
	if err != nil || len(all) != len(lines) {
		t.Fatalf("%d lines, %v", len(all), err)
	}
	for _, pick := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {1, 3, 6, 7}, {5, 6}, {6}, {}} {
		var want []string
		var some []LineAt
		for _, i := range pick {
			want, some = append(want, all[i]), append(some, at[i])
		}
		for _, p := range []string{plain, packed} {
			var got []string
			err := ReadLinesAt(ctx, p, f, some, func(r *Record) error {
				got = append(got, show(r))
				return nil
			})
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, lines %v: %v\n got %q\nwant %q", filepath.Base(p), pick, err, got, want)
			}
		}
	}
	// the file shrank: the line cut short is read as it is now
	if err := os.WriteFile(plain, data[:at[5].Offset+10], 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	err = ReadLinesAt(ctx, plain, f, at[5:6], func(r *Record) error {
		got = append(got, show(r))
		return nil
	})
	if want := fmt.Sprintf("6@%d+10 0 truncated %q | corrupt  \"\"", at[5].Offset, data[at[5].Offset:at[5].Offset+10]); err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("shrunk file: %v %q, want %q", err, got, want)
	}
}
