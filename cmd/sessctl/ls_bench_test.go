package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// makeStore writes n sessions spread over the four formats, each of about
// `lines` records, laid out as the agents lay them out.
func makeStore(tb testing.TB, dir string, n, lines int) {
	tb.Helper()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		switch i % 4 {
		case 0: // Claude Code
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
			for j := 0; j < lines; j++ {
				fmt.Fprintf(&b, `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"prompt %d of session %d: please refactor the module and run the tests"},"uuid":"%08x-0000-4000-8000-%012x","timestamp":"2026-11-01T10:00:00.000Z","userType":"external","cwd":"/home/u/p%d","sessionId":"%s","version":"2.1.197"}`+"\n", j, i, j, i, i%50, id)
			}
			write(filepath.Join(dir, "claude", "projects", fmt.Sprintf("-home-u-p%d", i%50), id+".jsonl"), b.String())
		case 1: // Codex
			id := fmt.Sprintf("01a20000-0000-7000-8000-%012x", i)
			fmt.Fprintf(&b, `{"timestamp":"2026-11-01T11:00:00.000Z","type":"session_meta","payload":{"id":"%s","cwd":"/home/u/p%d","cli_version":"0.169.0"}}`+"\n", id, i%50)
			for j := 1; j < lines; j++ {
				fmt.Fprintf(&b, `{"timestamp":"2026-11-01T11:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"request %d: list the files and explain them"}]}}`+"\n", j)
			}
			write(filepath.Join(dir, "codex", "sessions", "2026", "11", fmt.Sprintf("%02d", i%28+1), "rollout-2026-11-01T11-00-00-"+id+".jsonl"), b.String())
		case 2: // Kimi
			b.WriteString(`{"role": "_system_prompt", "content": "You are Kimi."}` + "\n")
			for j := 1; j < lines; j++ {
				fmt.Fprintf(&b, `{"role":"user","content":"question %d about the parser"}`+"\n", j)
			}
			write(filepath.Join(dir, "kimi", "sessions", fmt.Sprintf("%032x", i%50), fmt.Sprintf("%08x-1111-4111-8111-%012x", i, i), "context.jsonl"), b.String())
		case 3: // clawdcode
			for j := 0; j < lines; j++ {
				fmt.Fprintf(&b, `{"uuid":"abcdefghijklmnopq%04d","parentUuid":null,"sessionId":"S%020d","timestamp":"2026-11-01T09:15:04.512Z","type":"user","cwd":"/home/u/p%d","version":"0.1.0","message":{"role":"user","content":"task %d"}}`+"\n", j%10000, i, i%50, j)
			}
			write(filepath.Join(dir, ".clawdcode", "projects", fmt.Sprintf("home-u-p%d", i%50), fmt.Sprintf("S%020d.jsonl", i)), b.String())
		}
	}
}

// BenchmarkLs10000 lists a store of 10,000 session files (about 20 records
// each). The target is well under a second per run on a 2-core machine.
func BenchmarkLs10000(b *testing.B) {
	dir := b.TempDir()
	makeStore(b, dir, 10000, 20)
	env := &appEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, home: dir, now: time.Now}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := runLs(context.Background(), env, lsOptions{roots: []string{dir}}); err != nil {
			b.Fatal(err)
		}
	}
}

// The generated store is listed completely: the benchmark measures real work.
func TestLsGeneratedStore(t *testing.T) {
	dir := t.TempDir()
	makeStore(t, dir, 40, 5)
	out, errOut, code := runCLI(t, "ls", "--root", dir, "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	for _, agent := range []string{"claude", "codex", "kimi", "clawdcode"} {
		if n := strings.Count(out, `"agent": "`+agent+`"`); n != 10 {
			t.Errorf("%d %s sessions listed, want 10", n, agent)
		}
	}
}
