package resident

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadOnlyOf(t *testing.T) {
	dev := unix.Mkdev(0xfd, 0x01)
	for _, c := range []struct {
		line   string
		ok     bool
		lo, hi uint64
	}{
		{"00400000-00f6e000 r-xp 00000000 fd:01 1234 /usr/bin/sessctl", true, 0x400000, 0xf6e000},
		{"00f6e000-02299000 r--p 00b6e000 fd:01 1234 /usr/bin/sessctl", true, 0xf6e000, 0x2299000},
		{"02299000-0239a000 rw-p 01e99000 fd:01 1234 /usr/bin/sessctl", false, 0, 0}, // its data
		{"00f6e000-02299000 r--s 00b6e000 fd:01 1234 /usr/bin/sessctl", false, 0, 0}, // shared
		{"00f6e000-02299000 r--p 00b6e000 fd:01 1235 /usr/bin/other", false, 0, 0},   // another inode
		{"00f6e000-02299000 r--p 00b6e000 fd:02 1234 /usr/bin/sessctl", false, 0, 0}, // another device
		{"00f6e000-00f6e000 r--p 00b6e000 fd:01 1234 /usr/bin/sessctl", false, 0, 0}, // empty
		{"7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]", false, 0, 0},
		{"garbage", false, 0, 0},
	} {
		lo, hi, ok := readOnlyOf(c.line, dev, 1234)
		if ok != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("%q: %x-%x %v, want %x-%x %v", c.line, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}

// An executable that is not static (a test binary built with -race, or
// with cgo) is left as it is: its read-only mappings may hold pages the
// dynamic linker wrote.
func TestShedLeavesDynamicExecutable(t *testing.T) {
	if static() {
		t.Log("this test binary is static: nothing to check here (TestShedStaticExecutable is)")
		return
	}
	ExecutableKB()
	before := ExecutableKB()
	ShedExecutable()
	if after := ExecutableKB(); after < before/2 {
		t.Errorf("an executable that is not static was shed: %d kB before, %d after", before, after)
	}
}

// A static executable's code and read-only data are given back, and the
// program goes on (it maps again what it runs). The program is built
// static, as `make build` builds sessctl.
func TestShedStaticExecutable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ShedExecutable works on Linux only")
	}
	bin := filepath.Join(t.TempDir(), "shedprog")
	build := exec.Command("go", "build", "-o", bin, "./testdata/shedprog/main.go")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("shedprog: %v", err)
	}
	var before, after int
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &before, &after); err != nil {
		t.Fatalf("shedprog printed %q", out)
	}
	t.Logf("%d kB of the executable resident before the shed, %d after", before, after)
	// the measuring maps again its own pages (and 64 KiB around each)
	if before-after < 512 {
		t.Errorf("%d kB of the executable resident before the shed, %d after", before, after)
	}
}
