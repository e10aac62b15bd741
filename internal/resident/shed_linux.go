package resident

import (
	"bufio"
	"debug/elf"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// static says whether the executable is an ELF executable linked at a
// fixed address with no dynamic linking (no interpreter, no dynamic
// section, no RELRO), read once from its headers.
var static = sync.OnceValue(func() bool {
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		return false
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		return false
	}
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP, elf.PT_DYNAMIC, elf.PT_GNU_RELRO:
			return false
		}
	}
	return true
})

// ShedExecutable drops from the resident memory the pages of the
// executable's mappings that are private and not writable: its code and
// read-only data, which the kernel reads again from the file when they are
// touched. A writable mapping (the data and bss, whose pages the process
// has changed) is never touched: dropping it would lose what it holds.
// The executable is known by its device and inode, not its path (a file
// replaced while the process runs keeps its old inode mapped, and the
// kernel refuses to write to an executable being run).
//
// Only a static executable that is not position-independent is shed (as
// `make build` makes sessctl, with CGO_ENABLED=0): in one that the dynamic
// linker relocates, a read-only mapping may hold pages it wrote before it
// made them read-only (RELRO), and the file's bytes are not theirs.
func ShedExecutable() {
	if !static() {
		return
	}
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	var spans [][2]uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if lo, hi, ok := readOnlyOf(sc.Text(), uint64(st.Dev), st.Ino); ok {
			spans = append(spans, [2]uint64{lo, hi})
		}
	}
	if sc.Err() != nil {
		return // a list read in part: drop nothing
	}
	for _, s := range spans {
		unix.Syscall(unix.SYS_MADVISE, uintptr(s[0]), uintptr(s[1]-s[0]), unix.MADV_DONTNEED)
	}
}

// readOnlyOf parses a line of /proc/self/maps ("lo-hi perms offset
// major:minor inode path") and returns its span when it maps the file of
// device dev and inode ino, privately and without write access.
func readOnlyOf(line string, dev, ino uint64) (lo, hi uint64, ok bool) {
	f := strings.Fields(line)
	if len(f) < 5 || len(f[1]) != 4 || f[1][1] != '-' || f[1][3] != 'p' {
		return 0, 0, false
	}
	if n, err := strconv.ParseUint(f[4], 10, 64); err != nil || n != ino {
		return 0, 0, false
	}
	major, minor, found := strings.Cut(f[3], ":")
	ma, err1 := strconv.ParseUint(major, 16, 32)
	mi, err2 := strconv.ParseUint(minor, 16, 32)
	if !found || err1 != nil || err2 != nil || unix.Mkdev(uint32(ma), uint32(mi)) != dev {
		return 0, 0, false
	}
	a, b, found := strings.Cut(f[0], "-")
	lo, err1 = strconv.ParseUint(a, 16, 64)
	hi, err2 = strconv.ParseUint(b, 16, 64)
	if !found || err1 != nil || err2 != nil || hi <= lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// ExecutableKB is how many kB of the executable's private read-only
// mappings are resident (/proc/self/smaps), -1 when it cannot tell: for
// tests and measurements.
func ExecutableKB() int {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return -1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return -1
	}
	defer f.Close()
	kb, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if fs := strings.Fields(l); len(fs) > 0 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			_, _, in = readOnlyOf(l, uint64(st.Dev), st.Ino)
			continue
		}
		if in && strings.HasPrefix(l, "Rss:") {
			if fs := strings.Fields(l); len(fs) >= 2 {
				n, _ := strconv.Atoi(fs[1])
				kb += n
			}
		}
	}
	if sc.Err() != nil {
		return -1
	}
	return kb
}
