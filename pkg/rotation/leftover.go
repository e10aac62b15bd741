package rotation

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// Kinds of leftovers.
const (
	// KindTemp is a temp file (jsonl.TempPrefix) of a rewrite that never
	// reached its rename: a partial new version, never the only copy of
	// anything.
	KindTemp = "temp"
	// KindPlaceholder is an empty file under a rotation name: sessctl
	// before this version reserved the name first and filled it after.
	KindPlaceholder = "placeholder"
	// KindAlias is a rotation that is a hard link to the live file: the
	// rewrite was interrupted between preserving the original and replacing
	// it, and the "rotation" would grow with the session.
	KindAlias = "alias"
)

// Leftover is something an interrupted rewrite (a kill -9, a power cut)
// left beside a session file.
type Leftover struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
	Size int64  `json:"size"`
	PID  int    `json:"pid,omitempty"` // the process that made a temp file, when its name says
	// Stale says it is provably left over: no sessctl is working on it. Why
	// says how that was proven, or why it could not be.
	Stale bool   `json:"stale"`
	Why   string `json:"why"`

	name string
	base string // the session file it belongs to ("" when none claims it)
	info fsroot.Info
}

// Describe says what the leftover is, in words.
func (l Leftover) Describe() string {
	switch l.Kind {
	case KindTemp:
		return "temp file of an interrupted sessctl rewrite"
	case KindPlaceholder:
		return "empty rotation placeholder of an interrupted sessctl rewrite"
	case KindAlias:
		return "rotation that is a second name of the live file (an interrupted sessctl rewrite)"
	}
	return l.Kind
}

// Removed says that the leftover was removed, and why that was safe.
func (l Leftover) Removed() string {
	return fmt.Sprintf("removed %s (%s, %d bytes; %s)", l.Path, l.Describe(), l.Size, l.Why)
}

// Leftovers lists what interrupted rewrites of the session file named base
// left in dir, and which of them are provably stale (see ScanDir). unlocked
// says that no sessctl works on the session now: the caller holds its lock,
// or saw that nobody does.
func Leftovers(dir *fsroot.Dir, base string, agent session.Agent, unlocked bool, now time.Time, quiet time.Duration) ([]Leftover, error) {
	ents, err := dir.ReadDir()
	if err != nil {
		return nil, err
	}
	return leftoversIn(dir, ents, base, agent, unlocked, now, quiet)
}

// leftoversIn is Leftovers from ents, a listing of dir already read.
func leftoversIn(dir *fsroot.Dir, ents []fs.DirEntry, base string, agent session.Agent, unlocked bool, now time.Time, quiet time.Duration) ([]Leftover, error) {
	ls, err := scanEntries(dir, ents, Bases{base: agent}, func(string) bool { return unlocked }, now, quiet)
	out := ls[:0]
	for _, l := range ls {
		if l.base == base {
			out = append(out, l)
		}
	}
	return out, err
}

// ScanDir reads dir once and lists the leftovers of interrupted rewrites of
// the session files named in bases (name → agent), and the sessctl temp
// files that none of them claims. unlocked(base) says that no sessctl works
// on that session now; it is asked only for sessions that have leftovers.
//
// What is stale:
//   - a temp file, when the process named in it is gone; or, with the
//     session unlocked, when its name carries no pid (sessctl's names before
//     pids were added) or ours (every rewrite holds the lock while its temp
//     file exists);
//   - an empty rotation left alone for quiet (a placeholder), and a rotation
//     that is a second name of the live file (an alias), with the session
//     unlocked: removing either loses no byte;
//   - a temp file of a file that is not one of bases (kimi.json, or a file
//     that is gone), when its process is gone, or when it names none and
//     its target is gone (a rewrite in progress always has its target);
//   - an old hard-link temp (".sessctl-tmp-link-<pid>-<n>") as a temp file
//     of the session whose live file or rotation it is a second name of;
//     one that is nobody's second name holds bytes and stays.
func ScanDir(dir *fsroot.Dir, bases Sessions, unlocked func(base string) bool, now time.Time, quiet time.Duration) ([]Leftover, error) {
	ents, err := dir.ReadDir()
	if err != nil {
		return nil, err
	}
	return scanEntries(dir, ents, bases, unlocked, now, quiet)
}

// scanEntries is ScanDir from ents, a listing of dir already read.
func scanEntries(dir *fsroot.Dir, ents []fs.DirEntry, bases Sessions, unlocked func(base string) bool, now time.Time, quiet time.Duration) ([]Leftover, error) {
	type cand struct {
		name, target string
		pid          int
		temp         bool
	}
	byBase := map[string][]cand{}
	var orphans, links []cand
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		if target, pid, ok := jsonl.ParseTempName(name); ok {
			c := cand{name: name, target: target, pid: pid, temp: true}
			switch _, mine := bases.AgentOf(target); {
			case target == "":
				links = append(links, c)
			case mine:
				byBase[target] = append(byBase[target], c)
			default:
				orphans = append(orphans, c)
			}
			continue
		}
		if base := rotationOf(name, bases); base != "" {
			byBase[base] = append(byBase[base], cand{name: name})
		}
	}
	unlockedCache := map[string]bool{}
	isUnlocked := func(base string) bool {
		u, ok := unlockedCache[base]
		if !ok {
			u = unlocked(base)
			unlockedCache[base] = u
		}
		return u
	}
	stat := func(name string) (fsroot.Info, bool) {
		info, err := dir.Lstat(name)
		return info, err == nil && info.Mode.IsRegular()
	}
	var out []Leftover
	names := map[string]fsroot.Info{} // live files and kept rotations, for the link temps
	nameBase := map[string]string{}
	for _, base := range slices.Sorted(maps.Keys(byBase)) {
		live, liveOK := stat(base)
		if liveOK {
			names[base], nameBase[base] = live, base
		}
		for _, c := range byBase[base] {
			info, ok := stat(c.name)
			if !ok {
				continue
			}
			l := Leftover{Path: dir.Join(c.name), Size: info.Size, PID: c.pid, name: c.name, base: base, info: info}
			switch {
			case c.temp:
				l.Kind = KindTemp
				l.Stale, l.Why = tempStale(c.pid, isUnlocked(base))
			case liveOK && info.SameFile(live):
				l.Kind = KindAlias
				l.Stale, l.Why = lockedWhy(isUnlocked(base), "a second name of the live file: removing it loses nothing")
			case info.Size == 0 && now.Sub(info.ModTime) >= quiet:
				l.Kind = KindPlaceholder
				l.Stale, l.Why = lockedWhy(isUnlocked(base), "empty: removing it loses nothing")
			default:
				names[c.name], nameBase[c.name] = info, base
				continue
			}
			out = append(out, l)
		}
	}
	for _, c := range links {
		info, ok := stat(c.name)
		if !ok {
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(names)) {
			if info.SameFile(names[n]) {
				base := nameBase[n]
				l := Leftover{Path: dir.Join(c.name), Kind: KindTemp, Size: info.Size, PID: c.pid, name: c.name, base: base, info: info}
				l.Stale, l.Why = tempStale(c.pid, isUnlocked(base))
				out = append(out, l)
				break
			}
		}
	}
	for _, c := range orphans {
		info, ok := stat(c.name)
		if !ok {
			continue
		}
		l := Leftover{Path: dir.Join(c.name), Kind: KindTemp, Size: info.Size, PID: c.pid, name: c.name, info: info}
		_, terr := dir.Lstat(c.target)
		switch gone := errors.Is(terr, os.ErrNotExist); {
		case c.pid != 0 && c.pid != os.Getpid() && !processAlive(c.pid):
			l.Stale, l.Why = true, fmt.Sprintf("process %d that made it is gone", c.pid)
		case c.pid == 0 && gone:
			l.Stale, l.Why = true, "the file it was to replace is gone"
		case c.pid != 0:
			l.Why = fmt.Sprintf("process %d that made it is still running", c.pid)
		default:
			l.Why = "its name carries no process id, and nothing else proves it stale"
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// Sessions says which names in a directory are session files, and of which
// agent.
type Sessions interface {
	AgentOf(name string) (session.Agent, bool)
}

// Bases is a Sessions: session file name → agent.
type Bases map[string]session.Agent

// AgentOf implements Sessions.
func (b Bases) AgentOf(name string) (session.Agent, bool) {
	a, ok := b[name]
	return a, ok
}

// rotationOf is the session file (one of bases) whose rotation name is
// name, or "".
func rotationOf(name string, bases Sessions) string {
	for _, h := range session.Homes() {
		if nm, ok := h.(Namer); ok {
			if b, _, ok := nm.RotationOf(name); ok {
				if a, ok := bases.AgentOf(b); ok && a == h.Agent() {
					return b
				}
			}
		}
	}
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return ""
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil || name[i+1:] == "" || strings.ContainsAny(name[i+1:], "+-") {
		return ""
	}
	base := name[:i]
	if a, ok := bases.AgentOf(base); ok {
		if _, named := clientNamer(base, a); named {
			return ""
		}
		return base
	}
	return ""
}

func lockedWhy(unlocked bool, why string) (bool, string) {
	if !unlocked {
		return false, "another sessctl may be rewriting the session (its lock is held)"
	}
	return true, why
}

func tempStale(pid int, unlocked bool) (bool, string) {
	switch {
	case pid != 0 && pid != os.Getpid() && !processAlive(pid):
		return true, fmt.Sprintf("process %d that made it is gone", pid)
	case unlocked && pid == 0:
		return true, "no sessctl holds the session's lock, which every rewrite holds while its temp file exists"
	case unlocked && pid == os.Getpid():
		return true, "made earlier by this process, which now holds the session's lock"
	case pid != 0:
		return false, fmt.Sprintf("process %d that made it is still running", pid)
	}
	return false, "another sessctl may be rewriting the session (its lock is held)"
}

// processAlive reports whether a process with this pid exists (a pid reused
// by another process counts as alive: the leftover then waits).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// RemoveStale removes the stale leftovers of the session file named base in
// dir; the caller holds its lock. Each is checked again (same inode, size and
// mtime) right before its unlink. It returns what it removed.
func RemoveStale(dir *fsroot.Dir, base string, agent session.Agent, now time.Time) ([]Leftover, error) {
	ents, err := dir.ReadDir()
	if err != nil {
		return nil, err
	}
	return removeStaleIn(dir, ents, base, agent, now)
}

// removeStaleIn is RemoveStale from ents, a listing of dir already read;
// each leftover is removed only if it is still the file listed.
func removeStaleIn(dir *fsroot.Dir, ents []fs.DirEntry, base string, agent session.Agent, now time.Time) ([]Leftover, error) {
	ls, err := leftoversIn(dir, ents, base, agent, true, now, safety.DefaultQuiet)
	if err != nil {
		return nil, err
	}
	return RemoveLeftovers(dir, ls)
}

// RemoveLeftovers removes the stale ones of ls (listed in dir), each only if
// it is still what was listed.
func RemoveLeftovers(dir *fsroot.Dir, ls []Leftover) ([]Leftover, error) {
	var done []Leftover
	var errs []error
	for _, l := range ls {
		if !l.Stale {
			continue
		}
		info, err := dir.Lstat(l.name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil && !info.Same(l.info) {
			err = fmt.Errorf("%s: changed since it was found; left alone", l.Path)
		}
		if err == nil {
			err = dir.Remove(l.name)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, l)
	}
	if len(done) > 0 {
		dir.Sync()
	}
	return done, errors.Join(errs...)
}

// Same reports whether the leftover is still the file that was found.
func (l Leftover) Same(o Leftover) bool { return l.name == o.name && l.info.Same(o.info) }

// Name is the leftover's file name in its directory.
func (l Leftover) Name() string { return l.name }

// Base is the name of the session file it belongs to, or "".
func (l Leftover) Base() string { return l.base }
