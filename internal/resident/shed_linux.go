package resident

import (
	"bufio"
	"io"
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

// span is an address range [lo, hi).
type span struct{ lo, hi uint64 }

// exeID is the device and inode of the executable (ok false when they
// cannot be told): its mappings are found by them, not by its path (a
// file replaced while the process runs keeps its old inode mapped).
var exeID = sync.OnceValues(func() (id [2]uint64, ok bool) {
	fi, err := os.Stat("/proc/self/exe")
	if err != nil {
		return id, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return id, false
	}
	return [2]uint64{uint64(st.Dev), st.Ino}, true
})

// exeSpans are the executable's mappings that are private and not
// writable (its code and read-only data), found once in /proc/self/maps.
// They are made at exec and never change. Nil when they cannot be told.
var exeSpans = sync.OnceValue(func() []span {
	id, ok := exeID()
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
		if lo, hi, ok := readOnlyOf(sc.Text(), id[0], id[1]); ok {
			spans = append(spans, span{lo, hi})
		}
	}
	if sc.Err() != nil {
		return nil // a list read in part: none
	}
	return spans
})

// ShedExecutable drops the pages of the executable's code and read-only
// data, and those of the shared libraries it is linked to, which the
// kernel reads again from the file when they are touched: each private
// mapping of them without write access that holds none but the file's
// pages (sheddable). A writable mapping (the data and
// bss, whose pages the process has changed) is never touched.
//
// A mapping that holds a page of its own is left whole: a dynamic linker
// writes the relocations of a read-only part of a relocatable executable
// (RELRO, text relocations) before it makes it read-only, and those pages
// are not the file's bytes. This used to be told from the ELF headers
// (only an executable with no interpreter, dynamic section or RELRO was
// shed); a plain `go build` where gcc is found links to libc, and its code
// and read-only data (17 MiB resident over 100,000 sessions) were never
// given back, although the dynamic linker writes none of them. The
// kernel's own count of a mapping's pages that are not the file's
// (Anonymous, in /proc/self/smaps) says it for any executable.
func ShedExecutable() {
	id, ok := exeID()
	if !ok {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	spans, err := sheddable(f, id[0], id[1])
	f.Close()
	if err != nil {
		return
	}
	for _, s := range spans {
		Drop(uintptr(s.lo), int64(s.hi-s.lo))
	}
}

// sheddable reads /proc/self/smaps from r and returns the spans of the
// private mappings without write access of the file of device dev and
// inode ino, or of a shared library (libraryOf), whose Anonymous count is
// 0 kB: every page resident in them is the file's. A mapping whose count
// is missing is not among them; an error reading r returns none.
func sheddable(r io.Reader, dev, ino uint64) ([]span, error) {
	var spans []span
	err := eachSmap(r, func(m smap) {
		if m.anonymous != 0 {
			return
		}
		lo, hi, ok := readOnlyOf(m.header, dev, ino)
		if !ok {
			lo, hi, ok = libraryOf(m.header)
		}
		if ok {
			spans = append(spans, span{lo, hi})
		}
	})
	if err != nil {
		return nil, err
	}
	return spans, nil
}

// smap is a mapping of /proc/self/smaps: its header line ("lo-hi perms
// offset major:minor inode path") and two of its counts, in kB.
type smap struct {
	header    string
	rss       int
	anonymous int // -1: not given
}

// eachSmap reads /proc/self/smaps from r and calls fn with each mapping.
func eachSmap(r io.Reader, fn func(smap)) error {
	var m smap
	in := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		fs := strings.Fields(line)
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":"):
			if in {
				fn(m)
			}
			m, in = smap{header: line, anonymous: -1}, true
		case len(fs) == 3 && fs[2] == "kB" && (fs[0] == "Rss:" || fs[0] == "Anonymous:"):
			n, err := strconv.Atoi(fs[1])
			if err != nil {
				n = -1
			}
			if fs[0] == "Rss:" {
				m.rss = max(n, 0)
			} else {
				m.anonymous = n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if in {
		fn(m)
	}
	return nil
}

// privateReadOnly returns the span of the header fields f of a mapping
// when it is private and without write access.
func privateReadOnly(f []string) (lo, hi uint64, ok bool) {
	if len(f) < 5 || len(f[1]) != 4 || f[1][1] != '-' || f[1][3] != 'p' {
		return 0, 0, false
	}
	if lo, hi, ok = rangeOf(f[0]); !ok || hi <= lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// readOnlyOf parses a line of /proc/self/maps ("lo-hi perms offset
// major:minor inode path") and returns its span when it maps the file of
// device dev and inode ino, privately and without write access.
func readOnlyOf(line string, dev, ino uint64) (lo, hi uint64, ok bool) {
	f := strings.Fields(line)
	if lo, hi, ok = privateReadOnly(f); !ok {
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
	return lo, hi, true
}

// libraryOf parses a line of /proc/self/maps and returns its span when it
// maps a shared library (a file named *.so or *.so.*) privately and
// without write access: libc and the dynamic linker in a binary linked to
// them, 1.5 MB resident over a run of stats.
func libraryOf(line string) (lo, hi uint64, ok bool) {
	f := strings.Fields(line)
	if lo, hi, ok = privateReadOnly(f); !ok || len(f) < 6 || f[4] == "0" {
		return 0, 0, false
	}
	name := f[5][strings.LastIndexByte(f[5], '/')+1:]
	if !strings.HasSuffix(name, ".so") && !strings.Contains(name, ".so.") {
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
	kb := 0
	if eachSmap(f, func(m smap) {
		if match(strings.Fields(m.header)) {
			kb += m.rss
		}
	}) != nil {
		return -1
	}
	return kb
}
