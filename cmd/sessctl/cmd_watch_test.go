package main

import (
	"bytes"
	"context"
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

// TestWatchLatestWaitsForFirstSession: with nothing to follow yet, watch
// --latest waits (it exited at once) and follows the first session that
// starts, until it is stopped.
func TestWatchLatestWaitsForFirstSession(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sessions", "h", "s1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "context.jsonl"), []byte(`{"role":"user","content":"first words"}`+"\n"), 0o644)
		time.Sleep(500 * time.Millisecond)
		cancel() // Ctrl-C
	}()
	var out, errOut bytes.Buffer
	env := &appEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, home: t.TempDir(), now: time.Now}
	err := runWatch(ctx, env, watchOptions{latest: true, roots: []string{root}, tail: 10, poll: 50 * time.Millisecond, json: true})
	if err != nil || !strings.Contains(errOut.String(), "sessctl: waiting for a session to start in "+root) {
		t.Fatalf("err %v, stderr %q", err, errOut.String())
	}
	if !strings.Contains(out.String(), `"text":"first words"`) {
		t.Fatalf("stdout %s", out.String())
	}

	// stopped while still waiting: interrupted (exit 130)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	err = runWatch(ctx2, env, watchOptions{latest: true, roots: []string{t.TempDir()}, poll: 50 * time.Millisecond})
	if exitCode(err) != exitSignal {
		t.Fatalf("stopped while waiting: %v", err)
	}
}

// TestWatchFollowsEmptyFile: a file just created (empty, in no agent's
// layout) is a session; its agent is known from its first line.
func TestWatchFollowsEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hello"},"uuid":"11111111-1111-4111-8111-111111111111","sessionId":"s"}` + "\n")
		f.Close()
		time.Sleep(400 * time.Millisecond)
		os.Remove(path)
	}()
	out, errOut, code := runCLI(t, "watch", "--json", "--poll", "50ms", path)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `"agent":"claude"`) || !strings.Contains(out, `"text":"hello"`) {
		t.Fatalf("stdout %s", out)
	}
}
