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
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Rotation is one rotated copy of a file.
type Rotation struct {
	N       int    `json:"n"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_unix"`
}

var kimiRe = regexp.MustCompile(`^context_(\d+)\.jsonl$`)

// kimiStyle reports whether path rotates the way Kimi names rotations.
func kimiStyle(path string, agent session.Agent) bool {
	return agent == session.Kimi && filepath.Base(path) == "context.jsonl"
}

// NameFor is the path of rotation n of path.
func NameFor(path string, agent session.Agent, n int) string {
	dir := filepath.Dir(path)
	if kimiStyle(path, agent) {
		return filepath.Join(dir, fmt.Sprintf("context_%d.jsonl", n))
	}
	return filepath.Join(dir, fmt.Sprintf("%s.%d", filepath.Base(path), n))
}

// matcher returns a function that extracts the rotation number from a file
// name in path's directory, or -1.
func matcher(path string, agent session.Agent) func(name string) int {
	if kimiStyle(path, agent) {
		return func(name string) int {
			m := kimiRe.FindStringSubmatch(name)
			if m == nil {
				return -1
			}
			n, err := strconv.Atoi(m[1]) // context_01.jsonl counts as 1, as in Kimi
			if err != nil {
				return -1
			}
			return n
		}
	}
	// <name>.N, compared as bytes: a regexp made from the name would panic
	// on a name that is not UTF-8
	prefix := filepath.Base(path) + "."
	return func(name string) int {
		digits, ok := strings.CutPrefix(name, prefix)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
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
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	match := matcher(path, agent)
	var out []Rotation
	for _, e := range ents {
		n := match(e.Name())
		if n < 0 || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		out = append(out, Rotation{N: n, Path: filepath.Join(filepath.Dir(path), e.Name()),
			Size: info.Size(), ModTime: info.ModTime().Unix()})
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
	if len(rs) == 0 {
		return 1, nil
	}
	return rs[len(rs)-1].N + 1, nil
}

// Reserve creates the next rotation as an empty placeholder (exclusive
// create, mode 0600; a taken name moves on to the next number) and returns
// its number and path. This is Kimi's next_available_rotation.
func Reserve(path string, agent session.Agent) (int, string, error) {
	n, err := Next(path, agent)
	if err != nil {
		return 0, "", err
	}
	for tries := 0; tries < 1000; tries++ {
		p := NameFor(path, agent, n)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return n, p, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return 0, "", err
		}
		n++
	}
	return 0, "", fmt.Errorf("%s: no free rotation name after 1000 tries", path)
}

// Move rotates path away: it reserves the next rotation and renames the file
// onto it (the rotated file is the same inode, so it keeps its mode and
// bytes), then syncs the directory. path no longer exists afterwards.
func Move(path string, agent session.Agent) (Rotation, error) {
	n, p, err := Reserve(path, agent)
	if err != nil {
		return Rotation{}, err
	}
	if err := os.Rename(path, p); err != nil {
		os.Remove(p) // give the placeholder back
		return Rotation{}, err
	}
	if err := jsonl.SyncDir(filepath.Dir(path)); err != nil {
		return Rotation{}, err
	}
	return stat(n, p)
}

// Copy makes the next rotation a byte-for-byte copy of path (mode and mtime
// kept) and leaves path in place. The copy is synced before Copy returns.
func Copy(path string, agent session.Agent) (Rotation, error) {
	src, err := os.Open(path)
	if err != nil {
		return Rotation{}, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return Rotation{}, err
	}
	n, p, err := Reserve(path, agent)
	if err != nil {
		return Rotation{}, err
	}
	fail := func(err error) (Rotation, error) {
		os.Remove(p)
		return Rotation{}, err
	}
	dst, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fail(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fail(err)
	}
	if err := dst.Chmod(fi.Mode().Perm()); err != nil {
		dst.Close()
		return fail(err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return fail(err)
	}
	if err := dst.Close(); err != nil {
		return fail(err)
	}
	os.Chtimes(p, fi.ModTime(), fi.ModTime())
	if err := jsonl.SyncDir(filepath.Dir(p)); err != nil {
		return Rotation{}, err
	}
	return stat(n, p)
}

func stat(n int, p string) (Rotation, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return Rotation{}, err
	}
	return Rotation{N: n, Path: p, Size: fi.Size(), ModTime: fi.ModTime().Unix()}, nil
}
