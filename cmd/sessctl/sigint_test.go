//go:build heavy

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sigintBound is the longest a command may take to exit after SIGINT in
// this test. Issue 11 asks for 200 ms, which scripts/harden-sigint.sh
// measures on the real binary; here the command is the test binary, under
// `make test` race-instrumented (several times slower) on a machine shared
// with other tests, so the bound is looser. Before the fix, check, ls, the
// cleanup plan and diff did not stop at all (check on 600 MB ran 69 s after
// the signal and exited 0).
var sigintBound = map[bool]time.Duration{false: 500 * time.Millisecond, true: 2500 * time.Millisecond}[raceEnabled]

// bigClaude writes a Claude Code session of about size bytes: user prompts
// and assistant replies with tool calls and results, every uuid distinct,
// 90 days old.
func bigClaude(t *testing.T, path string, size int) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	must(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	const sid = "0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"
	text := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 20)
	parent := "null"
	n := 0
	for i := 0; n < size; i++ {
		u1, u2, u3 := fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012x", 3*i), fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012x", 3*i+1), fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012x", 3*i+2)
		ts := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z")
		k, _ := fmt.Fprintf(w, `{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":"prompt %d %s"},"uuid":"%s","timestamp":"%s","cwd":"/home/u/p","sessionId":"%s"}`+"\n", parent, i, text, u1, ts, sid)
		n += k
		k, _ = fmt.Fprintf(w, `{"parentUuid":"%s","isSidechain":false,"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":%d,"output_tokens":5}},"uuid":"%s","timestamp":"%s","sessionId":"%s"}`+"\n", u1, i, i, 100+i, u2, ts, sid)
		n += k
		k, _ = fmt.Fprintf(w, `{"parentUuid":"%s","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"%s"}]},"uuid":"%s","timestamp":"%s","sessionId":"%s"}`+"\n", u2, i, text, u3, ts, sid)
		n += k
		parent = `"` + u3 + `"`
	}
	must(t, w.Flush())
	must(t, f.Close())
	old := time.Now().Add(-90 * 24 * time.Hour)
	must(t, os.Chtimes(path, old, old))
}

// TestSIGINTStopsEveryCommand starts each long-running command as its own
// process, sends SIGINT once it has run a while, and wants exit 130 within
// sigintBound. The rewriting commands work on a copy that must come out
// byte for byte the original with no temp file beside it.
func TestSIGINTStopsEveryCommand(t *testing.T) {
	if _, err := exec.LookPath("sessctl"); err != nil {
		t.Fatal("sessctl test command not on $PATH:", err)
	}
	base := t.TempDir()
	home := filepath.Join(base, "home")
	root := filepath.Join(base, "claude")
	big := filepath.Join(root, "projects", "-home-u-p", "0b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f.jsonl")
	bigClaude(t, big, 96<<20)
	orig, err := os.ReadFile(big)
	must(t, err)
	// a store of many small sessions with rotations, in one directory
	old := time.Now().Add(-90 * 24 * time.Hour)
	stores := 0
	makeStore := func() string {
		stores++
		store := filepath.Join(base, fmt.Sprintf("store%d", stores))
		proj := filepath.Join(store, "projects", "-p")
		must(t, os.MkdirAll(proj, 0o755))
		for i := range 3000 {
			id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
			line := `{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,"sessionId":"` + id + `","isSidechain":false,"userType":"external","version":"2.1.197","message":{"role":"user","content":"hi"}}` + "\n"
			for _, name := range []string{id + ".jsonl", id + ".jsonl.1", id + ".jsonl.2"} {
				p := filepath.Join(proj, name)
				must(t, os.WriteFile(p, []byte(line), 0o644))
				must(t, os.Chtimes(p, old, old))
			}
		}
		return store
	}
	store := makeStore()
	copyOf := func(dst string) string {
		p := filepath.Join(dst, "projects", "-home-u-p", filepath.Base(big))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, orig, 0o600))
		must(t, os.Chtimes(p, old, old))
		return p
	}

	type run struct {
		args    []string
		rewrite string // the file a rewriting command works on
		// deletes: the command removes files of the store, its last
		// argument, which each attempt gets anew (a command done before
		// the signal leaves the next attempt a store with nothing to do,
		// done as the signal comes: exit 0)
		deletes bool
	}
	rw := filepath.Join(base, "rw")
	runs := []run{
		{args: []string{"check", big}},
		{args: []string{"stats", big}},
		{args: []string{"ls", "--root", root}},
		{args: []string{"checkpoints", big}},
		{args: []string{"diff", big, big}},
		{args: []string{"show", big}},
		{args: []string{"cleanup", "--root", store}},
		{args: []string{"cleanup", "--apply", "--root"}, deletes: true},
		{args: []string{"prune-rotations", "--keep", "0", "--root"}, deletes: true},
		{args: []string{"revert", "--checkpoint", "2"}, rewrite: rw},
		{args: []string{"compact"}, rewrite: rw},
	}
	for _, r := range runs {
		var target string
		var stderr bytes.Buffer
		// prepare gives a rewriting command a new copy of its file, and one
		// that deletes a new store
		prepare := func() []string {
			args := r.args
			if r.rewrite != "" {
				os.RemoveAll(r.rewrite)
				target = copyOf(r.rewrite)
				args = append(append([]string(nil), args...), target)
			}
			if r.deletes {
				args = append(append([]string(nil), args...), makeStore())
			}
			return args
		}
		start := func(args []string) (*exec.Cmd, chan error) {
			cmd := exec.Command("sessctl", args...)
			// a race-built process sleeps 1 s at its exit (GORACE's
			// atexit_sleep_ms), after sessctl has let go of SIGINT: a
			// command done just before the signal (cleanup --root took
			// about 1 s here) was still there to be killed by it (exit -1)
			// or to ignore it (exit 0), where it should count as done
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(base, "state"), "NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
			stderr.Reset()
			cmd.Stderr = &stderr
			must(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			return cmd, exited
		}
		// The signal comes in the middle of the run: after 1 s for a
		// command that runs 2 s or more, and at half its time for one
		// done sooner (a fast, quiet machine), which a first run without
		// a signal measures. A signal at a fixed time once came as a
		// command of about that time was ending: it exited 0. Never before
		// 60 ms, when sessctl may not have set up its handler yet (in main,
		// after every package's init: with Parquet and the OpenTelemetry
		// exporter's gRPC linked in, the race-built binary on a loaded
		// machine has been seen to take over 400 ms to get there, and a
		// SIGINT before it kills the process as the default action does).
		delay := time.Second
		cmd, exited := start(prepare())
		began := time.Now()
		select {
		case err := <-exited:
			took := time.Since(began)
			delay = took / 2
			t.Logf("%q took %v without a signal (%v): signalled at %v", r.args, took.Round(time.Millisecond), err, delay.Round(time.Millisecond))
		case <-time.After(2 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if delay < 60*time.Millisecond {
			t.Errorf("%q finished within %v: the input is too small to test Ctrl-C", r.args, 2*delay)
			continue
		}
		args := prepare()
		cmd, exited = start(args)
		select {
		case err := <-exited:
			t.Errorf("%q finished within %v, half its time before (%v)", args, delay, err)
			continue
		case <-time.After(delay):
		}
		sent := time.Now()
		must(t, cmd.Process.Signal(syscall.SIGINT))
		var err error
		select {
		case err = <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("%q still running 30 s after SIGINT (killed)", args)
			continue
		}
		took := time.Since(sent)
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		t.Logf("%-28s exit %d, %v after SIGINT", args[0]+" "+filepath.Base(args[1]), code, took.Round(time.Millisecond))
		if code != exitSignal {
			t.Errorf("%q: exit %d after SIGINT, want %d; stderr %q", args, code, exitSignal, stderr.String())
		}
		if took > sigintBound {
			t.Errorf("%q: exited %v after SIGINT (> %v)", args, took, sigintBound)
		}
		if n := strings.Count(stderr.String(), "interrupted"); n != 1 {
			t.Errorf("%q: stderr says interrupted %d times: %q", args, n, stderr.String())
		}
		if r.rewrite != "" {
			got, err := os.ReadFile(target)
			must(t, err)
			if !bytes.Equal(got, orig) {
				t.Errorf("%q: the session is not the original after SIGINT", args)
			}
			ents, _ := os.ReadDir(filepath.Dir(target))
			for _, e := range ents {
				if e.Name() != filepath.Base(target) && !strings.HasSuffix(e.Name(), ".lock") {
					t.Errorf("%q: left %s beside the session", args, e.Name())
				}
			}
		}
	}
}
