package resident

import (
	"debug/elf"
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

// Of the executable's mappings, only those private, without write access
// and holding no page of their own (Anonymous: 0 kB) are shed: a read-only
// part the dynamic linker wrote (RELRO) holds pages of its own.
func TestSheddable(t *testing.T) {
	const smaps = `00400000-00fb0000 r-xp 00000000 fe:00 1234 /usr/bin/sessctl
Size:              11968 kB
Rss:                9152 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me dw sd
00fb0000-0232d000 r--p 00bb0000 fe:00 1234 /usr/bin/sessctl
Rss:                8884 kB
Anonymous:             0 kB
VmFlags: rd mr mw me dw sd
0232d000-0232f000 r--p 01f2d000 fe:00 1234 /usr/bin/sessctl
Rss:                   8 kB
Anonymous:             8 kB
VmFlags: rd mr mw me ac sd
0232f000-02431000 rw-p 01f2f000 fe:00 1234 /usr/bin/sessctl
Rss:                 528 kB
Anonymous:             0 kB
02431000-02440000 r--p 00000000 fe:00 1234 /usr/bin/sessctl
Rss:                   4 kB
02440000-02450000 r-xp 00000000 fe:00 9999 /usr/lib/libc.so.6
Rss:                  64 kB
Anonymous:             0 kB
02450000-02454000 r--p 00010000 fe:00 9999 /usr/lib/libc.so.6
Rss:                  16 kB
Anonymous:            16 kB
02454000-02456000 rw-p 00014000 fe:00 9999 /usr/lib/libc.so.6
Anonymous:             0 kB
02456000-02458000 r--p 00000000 fe:00 9998 /usr/lib/ld-linux-x86-64.so.2
Anonymous:             0 kB
02458000-02460000 r--p 00000000 fe:00 9997 /usr/share/locale/locale-archive
Anonymous:             0 kB
02460000-02468000 r--s 00000000 fe:00 9996 /home/u/.cache/sessctl/index.so
Anonymous:             0 kB
7ffd1000-7ffd3000 r-xp 00000000 00:00 0 [vdso]
Anonymous:             0 kB
`
	got, err := sheddable(strings.NewReader(smaps), unix.Mkdev(0xfe, 0), 1234)
	if err != nil {
		t.Fatal(err)
	}
	// the code and the read-only data, libc's code and the dynamic
	// linker's; not the relocated read-only parts (pages of their own),
	// the data, a mapping of no Anonymous count, a file that is no
	// library, a shared mapping or the vdso
	want := []span{{0x400000, 0xfb0000}, {0xfb0000, 0x232d000}, {0x2440000, 0x2450000}, {0x2456000, 0x2458000}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sheddable: %x, want %x", got, want)
	}
}

// buildShedprog builds testdata/shedprog into a temporary directory with
// cgo as given and the extra build flags, and runs it: what it printed,
// the kB of its executable resident before and after its shed.
func buildShedprog(t *testing.T, cgo string, flags ...string) (bin string, before, after int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("ShedExecutable works on Linux only")
	}
	bin = filepath.Join(t.TempDir(), "shedprog")
	build := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), "./testdata/shedprog/main.go")...)
	build.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("shedprog: %v\n%s", err, stderr.String())
	}
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &before, &after); err != nil {
		t.Fatalf("shedprog printed %q", out)
	}
	t.Logf("%d kB of the executable resident before the shed, %d after", before, after)
	return bin, before, after
}

// progTypes returns the types of the program headers of the ELF file bin.
func progTypes(t *testing.T, bin string) map[elf.ProgType]bool {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	types := map[elf.ProgType]bool{}
	for _, p := range f.Progs {
		types[p.Type] = true
	}
	return types
}

// An executable linked to libc (as a plain `go build` links sessctl where
// gcc is found) is shed too, and goes on calling into libc afterwards:
// linked by Go's own linker, and by gcc with its relocations made at load
// and then read-only (RELRO, -z now), which it must keep.
func TestShedDynamicExecutable(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc: cgo cannot build here")
	}
	for _, c := range []struct {
		name  string
		flags []string
		has   elf.ProgType
	}{
		{"internal linking", nil, elf.PT_INTERP},
		{"gcc, RELRO", []string{"-ldflags=-linkmode=external -extldflags=-Wl,-z,relro,-z,now"}, elf.PT_GNU_RELRO},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin, before, after := buildShedprog(t, "1", c.flags...)
			if !progTypes(t, bin)[c.has] {
				t.Fatalf("shedprog built with cgo has no %v program header", c.has)
			}
			if before-after < 512 {
				t.Errorf("%d kB of the executable resident before the shed, %d after", before, after)
			}
		})
	}
}

// A static executable's code and read-only data are given back, and the
// program goes on (it maps again what it runs). The program is built
// static, as `make build` builds sessctl.
func TestShedStaticExecutable(t *testing.T) {
	bin, before, after := buildShedprog(t, "0")
	if types := progTypes(t, bin); types[elf.PT_INTERP] || types[elf.PT_DYNAMIC] {
		t.Fatalf("shedprog built without cgo is not static")
	}
	// the measuring maps again its own pages (and 64 KiB around each)
	if before-after < 512 {
		t.Errorf("%d kB of the executable resident before the shed, %d after", before, after)
	}
}
