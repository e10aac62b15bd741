package watch

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// catchUpOutput opens path, catches up (whole: reading the file from its
// start; else from its end), and returns what it printed and the state it
// left to follow from.
func catchUpOutput(t *testing.T, path string, agent session.Agent, tail int, whole bool) string {
	t.Helper()
	var out bytes.Buffer
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	fw := &follower{opt: Options{Tail: tail, Out: &JSONPrinter{W: &out}, Now: func() time.Time { return at }},
		buf: make([]byte, 64<<10)}
	if err := fw.open(path, agent); err != nil {
		t.Fatal(err)
	}
	defer fw.close()
	fi, _ := fw.f.Stat()
	var err error
	if whole {
		err = fw.catchUpWhole()
	} else {
		err = fw.catchUpTail(fi.Size())
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s\nlines %d, offset %d, partial %q, gauge %+v", out.String(), fw.lineNum, fw.off, fw.partial, fw.gauge.Now())
}

// TestCatchUpTailMatchesWhole: reading a session from its end prints the
// same records, numbered the same, and leaves the same gauge and state as
// reading it whole, for every session of the test data and some written
// here (no usage at all, a torn last line, corrupt lines, CRLF).
func TestCatchUpTailMatchesWhole(t *testing.T) {
	var paths []string
	for _, dir := range []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "agent")} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	dir := t.TempDir()
	for i, s := range []string{
		`{"type":"user","message":{"role":"user","content":"no usage anywhere"}}` + "\n" +
			`{"type":"assistant","message":{"role":"assistant","model":"claude-x","content":"hi"}}` + "\n",
		`{"type":"assistant","message":{"role":"assistant","model":"m1","content":"a","usage":{"input_tokens":5,"output_tokens":3}}}` + "\r\n" +
			"{bad\n\n" + `{"type":"user","message":{"role":"user","content":"after"}}` + "\n" + `{"type":"user","mess`,
		`{"type":"assistant","message":{"role":"assistant","model":"m1","content":"a","usage":{"input_tokens":5,"output_tokens":3}}}` + "\n" +
			`{"type":"assistant","message":{"role":"assistant","model":"<synthetic>","content":"b"}}` + "\n" +
			`{"type":"system","subtype":"compact_boundary","compactMetadata":{"postTokens":42}}` + "\n" +
			`{"type":"user","message":{"role":"user","content":"x"}}` + "\n",
	} {
		p := filepath.Join(dir, "projects", "p", "0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2"+string(rune('a'+i))+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if len(paths) < 20 {
		t.Fatalf("only %d session files", len(paths))
	}
	for _, p := range paths {
		agent, err := session.DetectFile(p)
		if err != nil || session.FormatFor(agent) == nil {
			continue
		}
		for _, tail := range []int{0, 2, 1000} {
			want := catchUpOutput(t, p, agent, tail, true)
			got := catchUpOutput(t, p, agent, tail, false)
			if got != want {
				t.Errorf("%s, tail %d: from the end\n%s\nwhole\n%s", p, tail, got, want)
			}
		}
	}
}

// TestCountLinesInParts: the parts add up to the newlines of the file,
// wherever the cuts fall.
func TestCountLinesInParts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := []byte(strings.Repeat("{}\n\n{\"a\":1}\r\nxx", 1000))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, parts := range []int64{1, 2, 3, 7} {
		for _, end := range []int64{0, 1, 3, 100, int64(len(data))} {
			n, err := countLinesIn(f, end, parts)
			if want := bytes.Count(data[:end], []byte{'\n'}); err != nil || n != want {
				t.Errorf("%d parts, end %d: %d %v, want %d", parts, end, n, err, want)
			}
		}
	}
}
