// Package rotation names, lists and creates rotated copies of session files.
//
// Kimi CLI rotates context.jsonl itself, to context_N.jsonl in the same
// directory (N = highest existing + 1, reserved with an exclusive create);
// sessctl does exactly the same for Kimi. Claude Code, Codex and clawdcode
// have no rotations; sessctl names their rotated copies "<file name>.N"
// beside the file (for example 7bd0….jsonl.1 or rollout-….jsonl.1). Those
// names do not end in ".jsonl", so neither the clients nor ccusage, which list
// "*.jsonl", take a rotation for a session of its own.
package rotation

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// Rotation is one rotated copy of a file.
type Rotation struct {
	N       int    `json:"n"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_unix"`

	info fsroot.Info // what ListIn or Preserve saw: Remove re-checks it
}

// Namer is implemented by the homes of agents whose client names the older
// generations of a file itself (kimi-cli's context_N.jsonl beside
// context.jsonl). Every other file rotates the way sessctl names it:
// <name>.N.
type Namer interface {
	// RotationName is the name of generation n of the file called base, and
	// whether the client names that file's generations at all.
	RotationName(base string, n int) (string, bool)
	// RotationOf is the file whose generation the name is, and its number;
	// ok is false for a name that is no generation the client names.
	RotationOf(name string) (base string, n int, ok bool)
}

// clientNamer returns the home's Namer when the agent's client names the
// rotations of the file called base.
func clientNamer(base string, agent session.Agent) (Namer, bool) {
	nm, ok := session.As[Namer](agent)
	if !ok {
		return nil, false
	}
	if _, named := nm.RotationName(base, 1); !named {
		return nil, false
	}
	return nm, true
}

// NameFor is the path of rotation n of path.
func NameFor(path string, agent session.Agent, n int) string {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if nm, ok := clientNamer(base, agent); ok {
		name, _ := nm.RotationName(base, n)
		return filepath.Join(dir, name)
	}
	return filepath.Join(dir, fmt.Sprintf("%s.%d", base, n))
}

// matcher returns a function that extracts the rotation number from a file
// name in path's directory, or -1.
func matcher(path string, agent session.Agent) func(name string) int {
	base := filepath.Base(path)
	if nm, ok := clientNamer(base, agent); ok {
		return func(name string) int {
			b, n, ok := nm.RotationOf(name)
			if !ok || b != base {
				return -1
			}
			return n
		}
	}
	// <name>.N, compared as bytes: a regexp made from the name would panic
	// on a name that is not UTF-8. A file and its compressed form
	// (<name>.zst, which Codex turns back into <name> before appending) are
	// one session with one numbering: <name>.N and <name>.zst.N both count.
	plain := jsonl.PlainName(filepath.Base(path))
	prefixes := []string{plain + ".", plain + jsonl.CompressedSuffix + "."}
	return func(name string) int {
		digits, ok := "", false
		for _, prefix := range prefixes {
			if digits, ok = strings.CutPrefix(name, prefix); ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
				break
			}
			ok = false
		}
		if !ok {
			return -1
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			return -1
		}
		return n
	}
}

// List returns the rotations of path, oldest (lowest N) first.
func List(path string, agent session.Agent) ([]Rotation, error) {
	dir, err := fsroot.OpenDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return ListIn(dir, filepath.Base(path), agent)
}

// ListIn returns the rotations of the file named base in dir, oldest first,
// each with its identity (fstatat through the handle), for Remove.
func ListIn(dir *fsroot.Dir, base string, agent session.Agent) ([]Rotation, error) {
	ents, err := dir.ReadDir()
	if err != nil {
		return nil, err
	}
	return listEntries(dir, ents, base, agent)
}

// listEntries is ListIn from ents, a listing of dir already read.
func listEntries(dir *fsroot.Dir, ents []fs.DirEntry, base string, agent session.Agent) ([]Rotation, error) {
	path := dir.Join(base)
	match := matcher(path, agent)
	var out []Rotation
	for _, e := range ents {
		n := match(e.Name())
		if n < 0 || !e.Type().IsRegular() {
			continue
		}
		info, err := dir.Lstat(e.Name())
		if err != nil || !info.Mode.IsRegular() {
			continue // removed or replaced while listing
		}
		out = append(out, Rotation{N: n, Path: dir.Join(e.Name()), Size: info.Size, ModTime: info.ModTime.Unix(), info: info})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out, nil
}

// Next returns the number the next rotation would get: the highest existing
// plus one (gaps are never reused).
func Next(path string, agent session.Agent) (int, error) {
	rs, err := List(path, agent)
	if err != nil {
		return 0, err
	}
	return next(rs), nil
}

func next(rs []Rotation) int {
	if len(rs) == 0 {
		return 1
	}
	return rs[len(rs)-1].N + 1
}

// Info is the rotation's identity when it was listed or made.
func (r Rotation) Info() fsroot.Info { return r.info }

// Remove unlinks rotation r from dir (the directory it was listed in) if it
// is still the file that was listed: same device, inode, size and mtime,
// checked through the handle right before the unlink. A rotation that changed
// is left alone with an error saying so.
func Remove(dir *fsroot.Dir, r Rotation) error {
	name := filepath.Base(r.Path)
	info, err := dir.Lstat(name)
	if err != nil {
		return err
	}
	if !info.Same(r.info) {
		return &safety.RefusalError{Path: r.Path, Class: safety.ErrChanged, Reason: "changed since it was listed; left alone"}
	}
	return dir.Remove(name)
}

// Preserve keeps the current bytes of the file named base in dir under the
// next free rotation name, and returns that rotation. It makes a hard link
// (the same inode: mode, bytes and mtime) with linkat, which fails on a
// taken name, so the name is reserved and the bytes preserved in one step:
// an interrupted Preserve leaves no empty placeholder behind. Where hard
// links are not possible it copies src (the original, opened for reading;
// size bytes of it) into a new file created exclusively under the rotation
// name, then syncs it. The directory is synced either way.
//
// linked says which of the two was done: a linked rotation is the live
// file's inode until the live file is replaced.
func Preserve(dir *fsroot.Dir, base string, agent session.Agent, src *os.File, size int64, mode os.FileMode) (r Rotation, linked bool, err error) {
	rs, err := ListIn(dir, base, agent)
	if err != nil {
		return Rotation{}, false, err
	}
	path := dir.Join(base)
	n := next(rs)
	for tries := 0; tries < 1000; tries, n = tries+1, n+1 {
		name := filepath.Base(NameFor(path, agent, n))
		err := linkFile(dir, base, name)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			info, err := dir.Lstat(name)
			if err != nil {
				return Rotation{}, false, err
			}
			return Rotation{N: n, Path: dir.Join(name), Size: info.Size, ModTime: info.ModTime.Unix(), info: info}, true, dir.Sync()
		}
		if !linkUnsupported(err) {
			return Rotation{}, false, err
		}
		f, err := dir.Create(name, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return Rotation{}, false, err
		}
		r, err := copyInto(dir, name, f, io.NewSectionReader(src, 0, size), mode)
		if err != nil {
			dir.Remove(name)
			return Rotation{}, false, err
		}
		r.N = n
		return r, false, dir.Sync()
	}
	return Rotation{}, false, fmt.Errorf("%s: no free rotation name after 1000 tries", path)
}

// linkFile is dir.Link (tests replace it to take the copy path).
var linkFile = (*fsroot.Dir).Link

// linkUnsupported reports a link error that means "this file system cannot
// hard-link here" rather than a real failure.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.ENOSYS)
}

func copyInto(dir *fsroot.Dir, name string, out *os.File, in io.Reader, mode os.FileMode) (Rotation, error) {
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		return Rotation{}, err
	}
	if err := out.Chmod(mode); err != nil {
		return Rotation{}, err
	}
	if err := out.Sync(); err != nil {
		return Rotation{}, err
	}
	if err := out.Close(); err != nil {
		return Rotation{}, err
	}
	info, err := dir.Lstat(name)
	if err != nil {
		return Rotation{}, err
	}
	return Rotation{Path: dir.Join(name), Size: info.Size, ModTime: info.ModTime.Unix(), info: info}, nil
}
