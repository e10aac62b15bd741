//go:build heavy

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file that is one 100 MiB line (no newline, not JSON: a crash while
// writing a huge tool output) is reported, not fatal, and never loaded twice.
func TestCheckOneHundredMiBLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MiB file")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, ".claude", "projects", "-home-u-p", "0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	head := `{"type":"user","sessionId":"0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f","uuid":"0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f","message":{"role":"user","content":"`
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(head)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for i := 0; i < 100; i++ {
		f.Write(chunk)
	}
	f.Close()
	out, errOut, code := runCLI(t, "check", p)
	if code != exitFindings || !strings.Contains(out, "line 1, byte 0: truncated_line") {
		t.Fatalf("code %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	out, _, code = runCLI(t, "ls", "--json", dir)
	if code != 0 || !strings.Contains(out, `"corrupt_lines": 1`) {
		t.Fatalf("ls: code %d %s", code, out)
	}
}
