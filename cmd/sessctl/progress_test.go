package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestWantProgress(t *testing.T) {
	_, tty := openPTY(t)
	r, pipe, _ := os.Pipe()
	defer r.Close()
	defer pipe.Close()
	env := func(stdout, stderr any, vars ...string) *appEnv {
		e := &appEnv{getenv: func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}}
		e.stdout, _ = stdout.(interface{ Write([]byte) (int, error) })
		e.stderr, _ = stderr.(interface{ Write([]byte) (int, error) })
		return e
	}
	var buf bytes.Buffer
	cases := []struct {
		name             string
		env              *appEnv
		noProgress, json bool
		want             bool
	}{
		{"stderr a terminal", env(&buf, tty), false, false, true},
		{"stdout piped, text", env(pipe, tty), false, false, true},
		{"NO_COLOR set", env(&buf, tty, "NO_COLOR", "1"), false, false, true},
		{"--json piped", env(pipe, tty), false, true, false},
		{"--json on a terminal", env(tty, tty), false, true, true},
		{"stderr piped", env(tty, pipe), false, false, false},
		{"stderr a buffer", env(tty, &buf), false, false, false},
		{"--no-progress", env(tty, tty), true, false, false},
		{"TERM=dumb", env(tty, tty, "TERM", "dumb"), false, false, false},
	}
	for _, c := range cases {
		if got := wantProgress(c.env, c.noProgress, c.json); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The bar appears only after progressDelay, shows the figures, and is
// erased when the work is done.
func TestProgressDrawsAndErases(t *testing.T) {
	master, tty := openPTY(t)
	got := make(chan string)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				got <- b.String()
				return
			}
		}
	}()
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 200 * time.Millisecond
	env := &appEnv{stderr: tty, getenv: func(string) string { return "" }}

	// work that ends before the delay draws nothing
	pr := newProgress(context.Background(), env, true, "quick", 10, unitItems)
	pr.add(10)
	pr.done()

	pr = newProgress(context.Background(), env, true, "checking", 4<<20, unitBytes)
	pr.add(1 << 20)
	time.Sleep(600 * time.Millisecond)
	pr.done()
	pr.done() // twice is fine
	var none *progress
	none.add(1)
	none.set(1, 2)
	none.done()
	tty.Close() // the reader sees the end
	out := <-got
	if strings.Contains(out, "quick") {
		t.Errorf("a display for work shorter than the delay: %q", out)
	}
	if !strings.Contains(out, "checking") || !strings.Contains(out, "25%") || !strings.Contains(out, "1.0 MiB / 4.0 MiB") {
		t.Fatalf("no bar on the terminal: %q", out)
	}
	if !strings.HasSuffix(strings.TrimRight(out, "\r\n"), "\x1b[J") {
		t.Errorf("the bar is not erased at the end: %q", out[max(0, len(out)-120):])
	}
}
