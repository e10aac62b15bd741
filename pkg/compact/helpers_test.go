package compact_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/compact"
)

var fixedNow = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

func opts() compact.Options {
	return compact.Options{Force: true, Now: func() time.Time { return fixedNow }, MaxToolOutput: compact.DefaultMaxToolOutput}
}

func samples(t *testing.T, rel ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{"..", "..", "..", "shared", "samples"}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared samples not available: %v", err)
	}
	return p
}

func copyFile(t *testing.T, src, dst string) []byte {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func writeLines(t *testing.T, path string, lines ...string) []byte {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b := []byte(strings.Join(lines, "\n") + "\n")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func appendLine(t *testing.T, path string, line []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// claudeLine builds a Claude Code 2.1.197 line.
func claudeLine(typ, uuid, parent, ts, message string, extra ...string) string {
	p := "null"
	if parent != "" {
		p = `"` + parent + `"`
	}
	ex := ""
	for _, e := range extra {
		ex += "," + e
	}
	return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":"%s","message":%s,"uuid":"%s","timestamp":"%s"%s,"userType":"external","entrypoint":"sdk-cli","cwd":"/w","sessionId":"sess-1","version":"2.1.197","gitBranch":"HEAD"}`,
		p, typ, message, uuid, ts, ex)
}

func userText(s string) string { return fmt.Sprintf(`{"role":"user","content":%q}`, s) }
func asst(id, block string) string {
	return fmt.Sprintf(`{"id":"%s","type":"message","role":"assistant","model":"claude-opus-4-8","content":[%s],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":5}}`, id, block)
}
func textBlock(s string) string { return fmt.Sprintf(`{"type":"text","text":%q}`, s) }
func toolUse(id, name, input string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":"%s","name":"%s","input":%s}`, id, name, input)
}
func toolResult(id, out string) string {
	return fmt.Sprintf(`{"role":"user","content":[{"tool_use_id":"%s","type":"tool_result","content":%q}]}`, id, out)
}
