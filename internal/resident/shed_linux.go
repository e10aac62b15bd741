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

// Drop drops the n bytes of a file mapping at addr from the process's
// resident memory (MADV_DONTNEED). Only for a mapping whose pages are the
// file's (shared, or private and never written): a private page the
// process changed would be lost.
func Drop(addr uintptr, n int64) {
	if addr != 0 && n > 0 {
		unix.Syscall(unix.SYS_MADVISE, addr, uintptr(n), unix.MADV_DONTNEED)
	}
}

// FileBytes returns the bytes of files this process has mapped and
// resident (the third field of /proc/self/statm, in pages: file pages and
// shared memory), -1 when it cannot tell.
func FileBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return -1
	}
	return n * int64(os.Getpagesize())
}

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

// span is an address range [lo, hi).
type span struct{ lo, hi uint64 }

// exeSpans are the executable's mappings that are private and not
// writable (its code and read-only data), found once in /proc/self/maps
// by the executable's device and inode, not its path (a file replaced
// while the process runs keeps its old inode mapped). They are made at
// exec and never change. Nil when they cannot be told.
var exeSpans = sync.OnceValue(func() []span {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer f.Close()
	var spans []span
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if lo, hi, ok := readOnlyOf(sc.Text(), uint64(st.Dev), st.Ino); ok {
			spans = append(spans, span{lo, hi})
		}
	}
	if sc.Err() != nil {
		return nil // a list read in part: none
	}
	return spans
})

// ShedExecutable drops the pages of the executable's code and read-only
// data (exeSpans), which the kernel reads again from the file when they
// are touched. A writable mapping (the data and bss, whose pages the
// process has changed) is never touched.
//
// Only a static executable that is not position-independent is shed (as
// `make build` makes sessctl, with CGO_ENABLED=0): in one that the dynamic
// linker relocates, a read-only mapping may hold pages it wrote before it
// made them read-only (RELRO), and the file's bytes are not theirs.
func ShedExecutable() {
	if !static() {
		return
	}
	for _, s := range exeSpans() {
		Drop(uintptr(s.lo), int64(s.hi-s.lo))
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
	if lo, hi, ok = rangeOf(f[0]); !ok || hi <= lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// rangeOf parses the "lo-hi" of a line of /proc/self/maps or smaps.
func rangeOf(s string) (lo, hi uint64, ok bool) {
	a, b, found := strings.Cut(s, "-")
	lo, err1 := strconv.ParseUint(a, 16, 64)
	hi, err2 := strconv.ParseUint(b, 16, 64)
	return lo, hi, found && err1 == nil && err2 == nil
}

// ExecutableKB is how many kB of the executable's code and read-only data
// (exeSpans) are resident, -1 when it cannot tell: for tests and
// measurements.
func ExecutableKB() int {
	spans := exeSpans()
	if spans == nil {
		return -1
	}
	return residentKB(func(f []string) bool {
		lo, hi, ok := rangeOf(f[0])
		for _, s := range spans {
			if ok && s == (span{lo, hi}) {
				return true
			}
		}
		return false
	})
}

// FileKB is how many kB of the file at path this process has resident
// through its mappings, -1 when it cannot tell: for tests.
func FileKB(path string) int {
	return residentKB(func(f []string) bool { return len(f) >= 6 && f[5] == path })
}

// residentKB sums the Rss of the mappings in /proc/self/smaps whose
// header line (its fields) match says, -1 when it cannot be read.
func residentKB(match func(header []string) bool) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return -1
	}
	defer f.Close()
	kb, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":"):
			in = match(fs)
		case in && len(fs) >= 2 && fs[0] == "Rss:":
			n, _ := strconv.Atoi(fs[1])
			kb += n
		}
	}
	if sc.Err() != nil {
		return -1
	}
	return kb
}
