package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWatchCLIFollowsUntilDeleted runs sessctl watch --json on a Kimi
// session, appends a record and removes the file: the record is printed and
// the command ends with exit 0 after saying the file was deleted.
func TestWatchCLIFollowsUntilDeleted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "h", "s1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "context.jsonl")
	os.WriteFile(path, []byte(`{"role": "_usage", "token_count": 9120}`+"\n"+`{"role":"user","content":"before"}`+"\n"), 0o644)
	go func() {
		time.Sleep(300 * time.Millisecond)
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"role":"assistant","content":"after"}` + "\n")
		f.Close()
		time.Sleep(300 * time.Millisecond)
		os.Remove(path)
	}()
	out, errOut, code := runCLI(t, "watch", "--json", "--poll", "50ms", dir)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var kinds []string
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		if e, ok := v["event"]; ok {
			kinds = append(kinds, e.(string))
		} else {
			kinds = append(kinds, v["text"].(string))
		}
	}
	if got := strings.Join(kinds, ","); got != "started,before,after,deleted" {
		t.Fatalf("got %s\n%s", got, out)
	}
	if !strings.Contains(lines[2], `"tokens":9122`) {
		t.Errorf("context after the reply (9120 recorded + 11 characters / 4): %s", lines[2])
	}
}
