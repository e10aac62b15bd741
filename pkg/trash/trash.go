// Package trash keeps what cleanup and prune-rotations would delete, so that
// it can be put back.
//
// The trash is one directory ($XDG_DATA_HOME/sessctl/trash). Each entry is
// a directory of its own, named by sessctl (the time it was made and a
// random suffix, never anything read from a session), holding
//
//	manifest.json   where every file came from: original path, size, mode, mtime
//	files/0, 1, …   the files themselves, by their index in the manifest
//
// Files are moved in with renameat2(RENAME_NOREPLACE) from the handle of
// the directory that holds them (pkg/fsroot), the same handle cleanup checks
// them through, so a directory on the path swapped for a symlink cannot
// redirect the move; across filesystems they are copied, synced, checked to
// be still the file planned, and only then unlinked through that handle.
// The manifest is written atomically (pkg/jsonl) before the first file is
// moved (complete: false) and again after the last (complete: true): at any
// point every file is either where it was or in the entry, and the manifest
// says where it belongs.
//
// The package imports only fsroot, jsonl and safety.
package trash

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/fsroot"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
)

// Kinds of entries.
const (
	KindSession   = "session"   // a whole session, by cleanup --apply --trash
	KindRotations = "rotations" // rotated files of a session, by prune-rotations --trash
)

const (
	manifestName = "manifest.json"
	filesName    = "files"
	// goingPrefix marks an entry being emptied: renamed away first, so that
	// a half-deleted entry is never listed or restored
	goingPrefix = ".emptying-"
	// incomingPrefix marks an entry being made, until its manifest is in
	incomingPrefix = ".incoming-"
	// maxManifest bounds what is read of a manifest (it is ours, but the
	// trash is a directory anyone with the user's rights can write into)
	maxManifest = 64 << 20
)

// Dir is the trash directory: $XDG_DATA_HOME/sessctl/trash, or
// ~/.local/share/sessctl/trash when XDG_DATA_HOME is unset or not absolute
// (as the XDG base directory specification says to treat it).
func Dir(getenv func(string) string, home string) string {
	d := getenv("XDG_DATA_HOME")
	if d == "" || !filepath.IsAbs(d) {
		d = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(d, "sessctl", "trash")
}

// Trash is an open trash directory.
type Trash struct {
	dir *fsroot.Dir
}

// Open opens the trash at path, creating it (mode 0700: sessions hold
// secrets) when create is true. A trash that does not exist and is not
// created is an error matching fs.ErrNotExist.
func Open(path string, create bool) (*Trash, error) {
	if create {
		if err := os.MkdirAll(path, 0o700); err != nil {
			return nil, err
		}
	}
	d, err := fsroot.OpenDir(path)
	if err != nil {
		return nil, err
	}
	return &Trash{dir: d}, nil
}

// Path is the trash directory.
func (t *Trash) Path() string { return t.dir.Path() }

// Close closes the handle.
func (t *Trash) Close() error { return t.dir.Close() }

// File is one file of an entry.
type File struct {
	// Path is where the file was (absolute), Rel the same path relative to
	// the entry's Root: restore opens Root and goes down Rel.
	Path string `json:"path"`
	Rel  string `json:"rel"`
	// Stored is the file's name under files/ in the entry.
	Stored string      `json:"stored"`
	Size   int64       `json:"size"`
	Mode   fs.FileMode `json:"mode"`
	MTime  time.Time   `json:"mtime"`
}

// DirMode is the mode of a directory on the way from Root to a file, so
// that restore can make it again as it was.
type DirMode struct {
	Rel  string      `json:"rel"`
	Mode fs.FileMode `json:"mode"`
}

// Manifest describes an entry.
type Manifest struct {
	Version   int       `json:"version"`
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Agent     string    `json:"agent"`
	SessionID string    `json:"session_id"`
	Main      string    `json:"main"`
	Root      string    `json:"root"`
	TrashedAt time.Time `json:"trashed_at"`
	// Complete is false while files are being moved in (and stays false
	// when that was interrupted: files whose Stored name is missing were
	// never moved and are still where they were).
	Complete bool      `json:"complete"`
	Files    []File    `json:"files"`
	Dirs     []DirMode `json:"dirs,omitempty"`
}

// Bytes is the size of the entry's files.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Meta describes what is being trashed.
type Meta struct {
	Kind      string
	Agent     string
	SessionID string
	Main      string
	// Root is the directory restore opens (as the user named it) and goes
	// down from without following a symlink: the store root for cleanup.
	Root string
	Now  time.Time
}

// Planned is a file to be moved into an entry.
type Planned struct {
	Path    string // absolute, as planned
	Rel     string // relative to Meta.Root
	Size    int64
	Mode    fs.FileMode
	ModTime time.Time
}

// Entry is an entry being filled.
type Entry struct {
	t     *Trash
	m     Manifest
	name  string      // its name in the trash: the ID, once it has its manifest
	dir   *fsroot.Dir // the entry
	files *fsroot.Dir // its files/
	moved []moved
	done  bool
}

type moved struct {
	i    int
	from *fsroot.Dir // the caller's handle, valid until Finish or Rollback
	name string
}

// ID is the entry's name in the trash.
func (e *Entry) ID() string { return e.m.ID }

// newID names an entry: its time and 8 random hex digits, sortable and
// never taken from a session.
func newID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// ValidID reports whether id can name an entry (what newID makes, or a
// prefix of it) or a session (letters, digits, '-', '_', '.'). It is only
// ever compared with the names a listing of the trash returns, never used
// as a path, and those starting with '.' are not entries.
func ValidID(id string) bool {
	if id == "" || len(id) > 64 || id[0] == '.' {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Begin makes a new entry for files and writes its manifest (complete:
// false) before anything is moved. Directory modes between Root and each
// file are recorded (read with lstat, for restore; nothing is changed
// through them).
func (t *Trash) Begin(meta Meta, files []Planned) (*Entry, error) {
	if meta.Now.IsZero() {
		meta.Now = time.Now()
	}
	// the manifest holds absolute paths: restore may run from anywhere
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	meta.Root, meta.Main = abs(meta.Root), abs(meta.Main)
	files = append([]Planned(nil), files...)
	for i := range files {
		files[i].Path = abs(files[i].Path)
	}
	m := Manifest{Version: 1, Kind: meta.Kind, Agent: meta.Agent, SessionID: meta.SessionID,
		Main: meta.Main, Root: meta.Root, TrashedAt: meta.Now.UTC()}
	seenDir := map[string]bool{}
	for i, f := range files {
		rel := filepath.Clean(f.Rel)
		if !localPath(rel) {
			return nil, fmt.Errorf("%s: not inside %s", f.Path, meta.Root)
		}
		m.Files = append(m.Files, File{Path: f.Path, Rel: rel, Stored: strconv.Itoa(i), Size: f.Size, Mode: f.Mode, MTime: f.ModTime})
		for d := filepath.Dir(rel); d != "." && !seenDir[d]; d = filepath.Dir(d) {
			seenDir[d] = true
			if fi, err := os.Lstat(filepath.Join(meta.Root, d)); err == nil && fi.IsDir() {
				m.Dirs = append(m.Dirs, DirMode{Rel: d, Mode: fi.Mode().Perm()})
			}
		}
	}
	sort.Slice(m.Dirs, func(i, j int) bool { return m.Dirs[i].Rel < m.Dirs[j].Rel })
	// the entry is made under a hidden name and shows up, manifest and
	// all, with one rename: an entry without a manifest is never listed
	// (nor taken for a broken one by empty)
	var err error
	for range 10 {
		m.ID = newID(meta.Now)
		if _, err = t.dir.Lstat(m.ID); err == nil {
			err = fs.ErrExist
			continue
		}
		if err = t.dir.Mkdir(incomingPrefix+m.ID, 0o700); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	e := &Entry{t: t, m: m, name: incomingPrefix + m.ID}
	fail := func(err error) (*Entry, error) {
		e.discard()
		return nil, err
	}
	if e.dir, err = t.dir.OpenDir(e.name); err != nil {
		return fail(err)
	}
	if err := e.dir.Mkdir(filesName, 0o700); err != nil {
		return fail(err)
	}
	if e.files, err = e.dir.OpenDir(filesName); err != nil {
		return fail(err)
	}
	if err := e.writeManifest(); err != nil {
		return fail(err)
	}
	if err := t.dir.Rename(e.name, m.ID); err != nil {
		return fail(err)
	}
	e.name = m.ID
	if err := t.dir.Sync(); err != nil {
		return fail(err)
	}
	return e, nil
}

func (e *Entry) writeManifest() error {
	data, err := json.MarshalIndent(&e.m, "", "  ")
	if err != nil {
		return err
	}
	return jsonl.WriteFileAtomicIn(e.dir, manifestName, data, 0o600)
}

// rename is fsroot.MoveNoReplace; tests replace it to act out another
// filesystem.
var rename = fsroot.MoveNoReplace

// Move moves file i (of the files given to Begin) from its directory into
// the entry: name inside from, which must still be the file planned (id).
// On the same filesystem the file keeps its inode (bytes, mode and mtime);
// if what was moved is not the file planned (swapped in the moment between
// the check and the rename), it is moved back and the move refused. Across
// filesystems the file is copied and synced, checked again, and only then
// unlinked through from; a failure at any step leaves it where it was.
func (e *Entry) Move(i int, from *fsroot.Dir, name string, id safety.Identity) error {
	if e.done {
		return errors.New("trash entry already finished")
	}
	if i < 0 || i >= len(e.m.Files) {
		return fmt.Errorf("trash: no planned file %d", i)
	}
	stored := e.m.Files[i].Stored
	if err := safety.CheckUnchangedAt(from, name, id); err != nil {
		return err
	}
	err := rename(from, name, e.files, stored)
	switch {
	case errors.Is(err, fsroot.ErrCrossDevice):
		if err := copyOut(from, name, id, e.files, stored); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		info, err := e.files.Lstat(stored)
		if err == nil && !safety.IdentityOf(info).Same(id) {
			// not the file that was checked: it goes back where it was
			if rerr := rename(e.files, stored, from, name); rerr != nil {
				return fmt.Errorf("%s: another file took its place while it was moved to the trash, and it could not be moved back: %w (it is %s)", from.Join(name), rerr, e.files.Join(stored))
			}
			return safety.CheckUnchangedAt(from, name, id)
		}
	}
	e.moved = append(e.moved, moved{i: i, from: from, name: name})
	return nil
}

// copyOut copies name in from to stored in to (another filesystem), with
// its mode and mtime, syncs it, and unlinks the original through from only
// if it is still the file planned.
func copyOut(from *fsroot.Dir, name string, id safety.Identity, to *fsroot.Dir, stored string) error {
	if err := copyFile(from, name, id, to, stored); err != nil {
		return err
	}
	if err := safety.CheckUnchangedAt(from, name, id); err != nil {
		to.Remove(stored)
		return err
	}
	if err := from.Remove(name); err != nil {
		to.Remove(stored)
		return err
	}
	return nil
}

// copyFile copies name in from, which must be the file id, to a new file
// dst in to with the same mode and mtime, synced with its directory. On
// failure dst does not exist.
func copyFile(from *fsroot.Dir, name string, id safety.Identity, to *fsroot.Dir, dst string) (err error) {
	src, err := from.Open(name)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	if id != (safety.Identity{}) {
		k := safety.KeyOf(st)
		if got := (safety.Identity{Dev: k.Dev, Ino: k.Ino, Size: st.Size(), ModTime: st.ModTime()}); !got.Same(id) {
			return &safety.RefusalError{Path: from.Join(name), Class: safety.ErrChanged, Reason: "changed since it was planned; left where it is"}
		}
	}
	out, err := to.Create(dst, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			out.Close()
			to.Remove(dst)
		}
	}()
	n, err := io.Copy(out, src)
	if err != nil {
		return err
	}
	if n != st.Size() {
		return fmt.Errorf("%s: copied %d bytes of %d", from.Join(name), n, st.Size())
	}
	if err = out.Chmod(st.Mode().Perm()); err != nil {
		return err
	}
	if err = out.Sync(); err != nil {
		return err
	}
	if err = out.Close(); err != nil {
		return err
	}
	if err = to.Chtimes(dst, st.ModTime(), st.ModTime()); err != nil {
		return err
	}
	return to.Sync()
}

// Rollback moves every file moved so far back where it was and removes the
// entry. A file that cannot go back (its name was taken meanwhile) stays in
// the entry, which is then kept with the files it holds; the error names it.
func (e *Entry) Rollback() error {
	if e.done {
		return nil
	}
	var errs []error
	var kept []moved
	for k := len(e.moved) - 1; k >= 0; k-- {
		mv := e.moved[k]
		f := e.m.Files[mv.i]
		err := rename(e.files, f.Stored, mv.from, mv.name)
		if errors.Is(err, fsroot.ErrCrossDevice) {
			if err = copyFile(e.files, f.Stored, safety.Identity{}, mv.from, mv.name); err == nil {
				e.files.Remove(f.Stored)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s could not be put back (%w); it is in the trash entry %s", f.Path, err, e.m.ID))
			kept = append(kept, mv)
			continue
		}
		mv.from.Sync()
	}
	e.moved = kept
	if len(kept) == 0 {
		e.discard()
		e.done = true
		return errors.Join(errs...)
	}
	errs = append(errs, e.Finish())
	return errors.Join(errs...)
}

// Finish records the entry as complete, with the files that were moved
// into it; an entry into which nothing was moved is removed.
func (e *Entry) Finish() error {
	if e.done {
		return nil
	}
	e.done = true
	if len(e.moved) == 0 {
		e.discard()
		return nil
	}
	sort.Slice(e.moved, func(a, b int) bool { return e.moved[a].i < e.moved[b].i })
	files := make([]File, 0, len(e.moved))
	for _, mv := range e.moved {
		files = append(files, e.m.Files[mv.i])
	}
	e.m.Files = files
	e.m.Complete = true
	// the renames into files/ are made durable before the manifest says so
	err := e.files.Sync()
	if err == nil {
		err = e.writeManifest()
	}
	e.close()
	return err
}

// Moved is the number of files moved into the entry.
func (e *Entry) Moved() int { return len(e.moved) }

func (e *Entry) close() {
	e.files.Close()
	e.dir.Close()
}

// discard removes an entry that holds no file.
func (e *Entry) discard() {
	if e.files != nil {
		e.dir.RemoveDir(filesName)
	}
	if e.dir != nil {
		e.dir.Remove(manifestName)
		e.close()
	}
	e.t.dir.RemoveDir(e.name)
	e.t.dir.Sync()
}

// localPath reports whether rel stays below the directory it is relative to.
func localPath(rel string) bool {
	return rel != "" && rel != "." && filepath.IsLocal(rel)
}

// readManifest reads the manifest of entry id.
func (t *Trash) readManifest(id string) (*Manifest, error) {
	d, err := t.dir.OpenDir(id)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	f, err := d.Open(manifestName)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifest {
		return nil, fmt.Errorf("%s: manifest larger than %d bytes", d.Join(manifestName), maxManifest)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Join(manifestName), err)
	}
	if m.ID != id {
		return nil, fmt.Errorf("%s: the manifest is of entry %q", d.Join(manifestName), m.ID)
	}
	if !filepath.IsAbs(m.Root) {
		return nil, fmt.Errorf("%s: root %q is not an absolute path", d.Join(manifestName), m.Root)
	}
	for _, f := range m.Files {
		if !localPath(f.Rel) || filepath.Clean(f.Rel) != f.Rel {
			return nil, fmt.Errorf("%s: %q leads out of the root", d.Join(manifestName), f.Rel)
		}
		if _, err := strconv.ParseUint(f.Stored, 10, 32); err != nil {
			return nil, fmt.Errorf("%s: stored name %q is not sessctl's", d.Join(manifestName), f.Stored)
		}
	}
	return &m, nil
}

// Broken is an entry whose manifest cannot be read.
type Broken struct {
	ID  string
	Err error
}

// List reads the manifests of every entry, oldest first. Entries whose
// manifest cannot be read are returned apart.
func (t *Trash) List() ([]*Manifest, []Broken, error) {
	ents, err := t.dir.ReadDir()
	if err != nil {
		return nil, nil, err
	}
	var ms []*Manifest
	var broken []Broken
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !e.IsDir() {
			continue
		}
		m, err := t.readManifest(name)
		if err != nil {
			broken = append(broken, Broken{ID: name, Err: err})
			continue
		}
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool {
		if !ms[i].TrashedAt.Equal(ms[j].TrashedAt) {
			return ms[i].TrashedAt.Before(ms[j].TrashedAt)
		}
		return ms[i].ID < ms[j].ID
	})
	return ms, broken, nil
}

// ErrNoEntry is matched by Find's error for an ID no entry has.
var ErrNoEntry = errors.New("no such trash entry")

// Find is the entry named id, or the one entry whose name starts with id,
// or else the one entry of the session id (its session id, or a prefix of
// it): what cleanup printed is enough to find it.
func (t *Trash) Find(id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("%q: %w (entry and session ids are letters, digits, '-', '_' and '.')", id, ErrNoEntry)
	}
	ents, err := t.dir.ReadDir()
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Name() == id {
			return id, nil
		}
		if strings.HasPrefix(e.Name(), id) {
			found = append(found, e.Name())
		}
	}
	if len(found) == 0 {
		ms, _, err := t.List()
		if err != nil {
			return "", err
		}
		var exact []string
		for _, m := range ms {
			if m.SessionID == id {
				exact = append(exact, m.ID)
			} else if strings.HasPrefix(m.SessionID, id) {
				found = append(found, m.ID)
			}
		}
		if len(exact) > 0 {
			found = exact
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: %w in %s", id, ErrNoEntry, t.Path())
	case 1:
		return found[0], nil
	}
	return "", &AmbiguousError{ID: id, Entries: found}
}

// AmbiguousError is Find's error for an id that more than one entry has.
type AmbiguousError struct {
	ID      string
	Entries []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s: %d trash entries match (%s)", e.ID, len(e.Entries), strings.Join(e.Entries, ", "))
}
