package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe or a device given as a path is refused at once with exit 2
// and a message saying what it is, by every command that reads sessions.
// Before, a FIFO hung every command in open and /dev/zero was read until
// the process was killed. The commands run as a separate process (the test
// binary as "sessctl" on $PATH, set up by testscript.Main) under a deadline,
// so a hang fails the test instead of blocking it.
func TestSpecialFilesAreRefused(t *testing.T) {
	const deadline = 20 * time.Second
	if _, err := exec.LookPath("sessctl"); err != nil {
		t.Skip("sessctl test command not on $PATH:", err)
	}
	fifo := filepath.Join(t.TempDir(), "session.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no mkfifo here:", err)
	}
	var runs [][]string
	for _, path := range []string{fifo, "/dev/zero"} {
		runs = append(runs, []string{"ls", path}, []string{"check", path}, []string{"stats", path}, []string{"checkpoints", path},
			[]string{"rotations", path}, []string{"diff", path, path}, []string{"revert", "--checkpoint", "1", "--dry-run", path},
			[]string{"compact", "--dry-run", path}, []string{"watch", path},
			[]string{"show", path}, []string{"restore", "--rotation", "1", "--dry-run", path},
			[]string{"prune-rotations", "--keep", "0", "--dry-run", path},
			[]string{"repair", "--dry-run", path}, []string{"redact", "--dry-run", path},
			[]string{"export", path}, []string{"grep", "x", path})
	}
	runs = append(runs, []string{"check", "/dev/urandom"})
	for _, args := range runs {
		path := args[len(args)-1]
		kind := "a character device"
		if path == fifo {
			kind = "a named pipe"
		}
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s: %v (skipped)", path, err)
			continue
		}
		{
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			cmd := exec.CommandContext(ctx, "sessctl", args...)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			timedOut := ctx.Err() != nil
			cancel()
			var ee *exec.ExitError
			switch {
			case timedOut:
				t.Errorf("%v: still running after %v (killed)", args, deadline)
			case !errors.As(err, &ee) || ee.ExitCode() != exitError:
				t.Errorf("%v: %v, want exit 2; stderr %q", args, err, stderr.String())
			case !strings.Contains(stderr.String(), "sessctl: error: "+path+": not a regular file ("+kind+")"):
				t.Errorf("%v: stderr %q", args, stderr.String())
			}
		}
	}
}
