package safety

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestCheckLiveRecentWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, []byte("{}\n"), 0o644)
	now := time.Now()
	err := CheckLive(p, 5*time.Second, now)
	var r *RefusalError
	if !errors.Is(err, ErrLive) || !errors.As(err, &r) || !r.Refusal() {
		t.Fatalf("a file written just now must be refused as live, got %v", err)
	}
	old := now.Add(-time.Hour)
	os.Chtimes(p, old, old)
	if err := CheckLive(p, 5*time.Second, now); err != nil {
		t.Fatalf("an hour-old file with no writer was refused: %v", err)
	}
}

func TestOpenWriterIsDetected(t *testing.T) {
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("no /proc fdinfo on this system")
	}
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, []byte("{}\n"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	// a child process holds the file open for appending, as an agent does
	cmd := exec.Command("sh", "-c", `exec 3>>"$1"; echo ready; exec sleep 30`, "sh", p)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 6)
	out.Read(buf)
	err := CheckLive(p, 5*time.Second, time.Now())
	if !errors.Is(err, ErrLive) {
		t.Fatalf("a file held open for writing must be refused, got %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := CheckLive(p, 5*time.Second, time.Now()); err != nil {
		t.Fatalf("after the writer exited: %v", err)
	}
	// a reader does not make the file live
	rd := exec.Command("sh", "-c", `exec 3<"$1"; echo ready; exec sleep 30`, "sh", p)
	out2, _ := rd.StdoutPipe()
	rd.Start()
	defer func() { rd.Process.Kill(); rd.Wait() }()
	out2.Read(buf)
	if err := CheckLive(p, 5*time.Second, time.Now()); err != nil {
		t.Fatalf("a reader made the file live: %v", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, nil, 0o644)
	l, err := LockFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockFile(p); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
	l.Unlock()
	l2, err := LockFile(p)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
	if filepath.Base(LockPath(p)) != ".s.jsonl.sessctl.lock" {
		t.Fatalf("lock path %s", LockPath(p))
	}
}

func TestCheckUnchanged(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(p, []byte("a\n"), 0o644)
	id, _ := Stat(p)
	if err := CheckUnchanged(p, id); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("b\n"))
	f.Close()
	if err := CheckUnchanged(p, id); !errors.Is(err, ErrChanged) {
		t.Fatalf("appended file: %v", err)
	}
	// replaced by another inode of the same size and time
	id, _ = Stat(p)
	q := p + ".new"
	os.WriteFile(q, []byte("a\nb\n"), 0o644)
	os.Chtimes(q, id.ModTime, id.ModTime)
	os.Rename(q, p)
	if err := CheckUnchanged(p, id); !errors.Is(err, ErrChanged) {
		t.Fatalf("replaced file: %v", err)
	}
}
