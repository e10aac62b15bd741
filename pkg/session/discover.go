package session

import (
	"bytes"
	"cmp"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// FileRole says what a file is to its session. It is a byte, written as
// its name (String, MarshalText): a session's files are most of what
// discovery holds, and a role as a string made a File 96 bytes instead of
// 80 (with Rotation in 4 bytes), 1.9 MB over 100,000 sessions.
type FileRole uint8

// File roles. The zero role (no role given) is written "".
const (
	FileMain     FileRole = iota + 1 // the live transcript
	FileRotation                     // an older generation (Kimi context_N.jsonl, sessctl's <file>.N)
	FileSubagent                     // a subagent transcript
	FileWire                         // Kimi wire.jsonl (event log with billing usage)
	FileSide                         // anything else that belongs to the session
)

var fileRoleNames = [...]string{"", "main", "rotation", "subagent", "wire", "side"}

// String returns the role's name: main, rotation, subagent, wire, side.
func (r FileRole) String() string {
	if int(r) < len(fileRoleNames) {
		return fileRoleNames[r]
	}
	return "role?"
}

// MarshalText writes the role's name.
func (r FileRole) MarshalText() ([]byte, error) {
	if int(r) >= len(fileRoleNames) {
		return nil, fmt.Errorf("session: no file role %d", r)
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a role's name.
func (r *FileRole) UnmarshalText(b []byte) error {
	v, ok := parseFileRole(string(b))
	if !ok {
		return fmt.Errorf("session: no file role %q", b)
	}
	*r = v
	return nil
}

// parseFileRole returns the role of a name String gives.
func parseFileRole(name string) (FileRole, bool) {
	for i, n := range fileRoleNames {
		if n == name {
			return FileRole(i), true
		}
	}
	return 0, false
}

// File is one file (or directory, for side directories) of a session.
type File struct {
	Path    string    `json:"path"`
	Role    FileRole  `json:"role"`
	Size    int64     `json:"size"` // for a directory: the bytes of all regular files below it
	ModTime time.Time `json:"mtime"`
	Dir     bool      `json:"dir,omitempty"`
	// Rotation is the rotation number for FileRotation files (a name's
	// number past the largest int32 is taken as that).
	Rotation int32 `json:"rotation,omitempty"`
	// dev and ino are the device and inode discovery found a regular file
	// at (0: not known), so that the index knows the file without a stat
	// of its own
	dev, ino uint64
}

// Identity returns the device and inode of the regular file discovery
// found at f.Path, when Size and ModTime come from that same lstat; ok is
// false when they are not known (f was not made by discovery, or is not a
// regular file).
func (f File) Identity() (dev, ino uint64, ok bool) { return f.dev, f.ino, f.ino != 0 }

// Session is one agent session: all the files that belong to it.
type Session struct {
	Agent Agent
	ID    string
	// Main is the live transcript (Kimi context.jsonl, Claude <id>.jsonl,
	// the Codex rollout, the clawdcode file).
	Main string
	// Dir is the session's own directory when it has one (Kimi session
	// dir, Claude's <id>/ sidecar directory).
	Dir string
	// Project is the project key from the path (Kimi work-dir path when
	// kimi.json names it, else its hash; Claude/clawdcode escaped cwd).
	// The real working directory comes from Summarize.
	Project string
	Root    string
	Files   []File
}

// Size is the bytes of all files of the session.
func (s *Session) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// Updated is the newest modification time of any file of the session but
// sessctl's own lock files: one is made the first time a command locks the
// session (a dry run, a refusal, a read under the lock), which changes
// nothing the session holds, and its time would make the session look
// freshly updated to ls, cleanup's age and --since.
func (s *Session) Updated() time.Time {
	var t time.Time
	for _, f := range s.Files {
		if strings.HasSuffix(f.Path, lockSuffix) {
			continue
		}
		if f.ModTime.After(t) {
			t = f.ModTime
		}
	}
	return t
}

// FilesWithRole returns the session's files of one role, in order.
func (s *Session) FilesWithRole(role FileRole) []File {
	var out []File
	for _, f := range s.Files {
		if f.Role == role {
			out = append(out, f)
		}
	}
	return out
}

// MainFile returns the File entry of the main transcript.
func (s *Session) MainFile() File {
	for _, f := range s.Files {
		if f.Path == s.Main {
			return f
		}
	}
	return File{Path: s.Main, Role: FileMain}
}

// Root is a directory to search for sessions. Agent, when set, says which
// agent's store it is (used for side files such as Claude's file-history).
type Root struct {
	Path  string
	Agent Agent
}

// DefaultRoots returns each agent's store, honouring the agents' own
// environment overrides: KIMI_SHARE_DIR, KIMI_CODE_HOME, CLAUDE_CONFIG_DIR (comma-separated
// list allowed, as ccusage does), CODEX_HOME. getenv and home are injected so
// tests can fake them.
func DefaultRoots(getenv func(string) string, home string) []Root {
	var roots []Root
	kimi := getenv("KIMI_SHARE_DIR")
	if kimi == "" {
		kimi = filepath.Join(home, ".kimi")
	}
	roots = append(roots, Root{Path: kimi, Agent: Kimi})
	kimiCode := getenv("KIMI_CODE_HOME")
	if kimiCode == "" {
		kimiCode = filepath.Join(home, ".kimi-code")
	}
	roots = append(roots, Root{Path: kimiCode, Agent: KimiCode})
	if c := getenv("CLAUDE_CONFIG_DIR"); c != "" {
		for _, p := range strings.Split(c, ",") {
			if p = strings.TrimSpace(p); p != "" {
				roots = append(roots, Root{Path: p, Agent: Claude})
			}
		}
	} else {
		roots = append(roots, Root{Path: filepath.Join(home, ".claude"), Agent: Claude})
	}
	codex := getenv("CODEX_HOME")
	if codex == "" {
		codex = filepath.Join(home, ".codex")
	}
	roots = append(roots, Root{Path: codex, Agent: Codex})
	roots = append(roots, Root{Path: filepath.Join(home, ".clawdcode"), Agent: Clawdcode})
	return roots
}

// Result is what discovery found.
type Result struct {
	Sessions []*Session
	// Packed holds the sessions instead of Sessions when discovery was
	// asked to pack them (DiscoverPacked): nil otherwise.
	Packed *Packed
	// Unrecognized are .jsonl files of no known format.
	Unrecognized []string
	// Errors are problems that did not stop discovery (unreadable dirs,
	// files removed while scanning). Each names its path.
	Errors []error
}

// ErrNoSuchPath is returned (wrapped) for a root or path that does not exist.
var ErrNoSuchPath = errors.New("no such file or directory")

// Discover finds the sessions under roots. A root that does not exist is
// skipped silently when missingOK is set (default roots), and reported
// otherwise. Sessions are returned newest first.
func Discover(roots []Root, missingOK bool) *Result { return discover(roots, missingOK, nil, false) }

// DiscoverPacked is Discover with the sessions in Result.Packed, each
// packed once the directory that holds it is listed, when it finds more
// than PackFrom: over a large store the sessions as values are most of
// the memory discovery holds. Fewer stay in Result.Sessions.
func DiscoverPacked(roots []Root, missingOK bool) *Result {
	return discover(roots, missingOK, nil, true)
}

// PackFrom is how many sessions DiscoverPacked keeps as values: once it
// has found more, it packs them all. So few take little memory as values,
// and packing them, and making them values again, cost a warm stats over
// 20,000 sessions 11 % of its time. A variable for tests.
var PackFrom = 20_000

// List returns the sessions found, packed or not.
func (r *Result) List() List {
	if r.Packed != nil {
		return r.Packed
	}
	return Slice(r.Sessions)
}

// discover is Discover, noting in rec (when not nil) what the result
// depends on (DiscoverCached), and with pack DiscoverPacked.
func discover(roots []Root, missingOK bool, rec *recorder, pack bool) *Result {
	d := &discoverer{res: &Result{}, rec: rec, pack: pack}
	for _, r := range roots {
		fi, err := os.Stat(r.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				d.rec.dir(r.Path) // absent, as long as it stays so
				if !missingOK {
					d.res.Errors = append(d.res.Errors, fmt.Errorf("%s: %w", r.Path, ErrNoSuchPath))
				}
				continue
			}
			d.res.Errors = append(d.res.Errors, err)
			continue
		}
		if !fi.IsDir() {
			if !fi.Mode().IsRegular() {
				// a named pipe or a device would block or never end
				d.res.Errors = append(d.res.Errors, &jsonl.NotRegularError{Path: r.Path, Mode: fi.Mode()})
				continue
			}
			d.rec.fail() // a file named as a root: no snapshot
			d.explicitFile(r, r.Path)
			d.seal()
			continue
		}
		d.root = r
		d.rec.content(filepath.Join(r.Path, kimiJSON))
		d.kimiDirs = loadKimiWorkDirs(r.Path)
		d.dir(r.Path, 0)
	}
	d.attachFlatAgents()
	d.seal()
	if d.res.Packed != nil {
		d.res.Sessions = nil
		sortPacked(d.res.Packed)
	} else {
		sortSessions(d.res.Sessions)
	}
	return d.res
}

// DiscoverPaths resolves explicit paths: a file is the session that holds
// it (a Kimi context.jsonl brings its whole session directory), a directory
// is searched like a root.
func DiscoverPaths(paths []string) *Result {
	var roots []Root
	for _, p := range paths {
		roots = append(roots, Root{Path: p})
	}
	return Discover(roots, false)
}

// sortSessions puts ss newest first, by main file among equal times.
func sortSessions(ss []*Session) {
	ks := newestFirst(len(ss), func(i int) time.Time { return ss[i].Updated() },
		func(a, b int) int { return strings.Compare(ss[a].Main, ss[b].Main) })
	// ss in the order of ks (nil: in order already), in place: each cycle
	// of the permutation moved along once
	for i := range ks {
		if ks[i].at < 0 {
			continue
		}
		first, j := ss[i], i
		for {
			k := int(ks[j].at)
			ks[j].at = -1
			if k == i {
				ss[j] = first
				break
			}
			ss[j] = ss[k]
			j = k
		}
	}
}

// sortPacked is sortSessions of packed sessions.
func sortPacked(p *Packed) {
	ks := newestFirst(p.Len(), func(i int) time.Time { return p.At(i).Updated() }, p.CompareMain)
	if ks == nil {
		return
	}
	order := make([]int32, len(ks))
	for k, x := range ks {
		order[k] = x.at
	}
	p.Reorder(order)
}

// placed is a session's time and its place.
type placed struct {
	sec  int64
	nsec int32
	at   int32
}

// newestFirst returns the places of n sessions newest first, by main file
// among equal times (cmpMain), then by place; nil when they are in that
// order already (a snapshot's sessions are, unless their files changed).
// Each session's time is taken once, not at each of the n log n
// comparisons (100,000 sessions: a third of a second), in 16 bytes with
// its place: a time.Time and a pointer took 32, 3.7 MB at the end of a
// first run's discovery, its peak.
func newestFirst(n int, updated func(i int) time.Time, cmpMain func(a, b int) int) []placed {
	ks := make([]placed, n)
	for i := range ks {
		t := updated(i)
		ks[i] = placed{t.Unix(), int32(t.Nanosecond()), int32(i)}
	}
	newer := func(a, b placed) int {
		return cmp.Or(cmp.Compare(b.sec, a.sec), cmp.Compare(b.nsec, a.nsec), cmpMain(int(a.at), int(b.at)), cmp.Compare(a.at, b.at))
	}
	if slices.IsSortedFunc(ks, newer) {
		return nil
	}
	slices.SortFunc(ks, newer)
	return ks
}

type discoverer struct {
	res      *Result
	root     Root
	kimiDirs map[string]string            // md5 hash -> work dir, from the root's kimi.json
	kimiJSON map[string]map[string]string // share dir -> its kimi.json mapping
	seen     mainSet                      // main files already taken
	flat     []flatAgent
	listed   map[string]map[string]bool // directory -> its entry names (dirHas)
	explicit bool                       // the file at hand was named on the command line
	pre      *prefetched                // of the directory at hand (dir)
	rec      *recorder                  // notes what the result depends on (DiscoverCached)
	pack     bool                       // pack the sessions past PackFrom (seal)
}

type flatAgent struct {
	file      File
	sessionID string
	dir       string
}

// lockSuffix ends the name of sessctl's lock files (.<name>.sessctl.lock,
// see pkg/safety); a lock file beside a session file belongs to the session.
const lockSuffix = ".sessctl.lock"

// maxDepth bounds the directory walk (symlinks are never followed, so loops
// are impossible; this only guards against absurd trees).
const maxDepth = 64

var (
	rotationRe    = regexp.MustCompile(`^(.+\.jsonl)(?:\.zst)?\.(\d+)$`)
	kimiRotRe     = regexp.MustCompile(`^context_(\d+)\.jsonl$`)
	flatAgentRe   = regexp.MustCompile(`^agent-[0-9a-zA-Z_-]+\.jsonl$`)
	notSessionDir = map[string]bool{
		// Claude, Codex and Kimi store directories that never hold transcripts
		"file-history": true, "session-env": true, "shell-snapshots": true, "shell_snapshots": true,
		"todos": true, "plans": true, "statsig": true, "ide": true, "debug": true, "backups": true,
		"user-history": true, "logs": true, "log": true, "node_modules": true, ".git": true,
		"plugins": true, "skills": true, ".tmp": true, "cache": true,
		// Kimi Code: telemetry events it failed to send (failed_<hex>.jsonl)
		"telemetry": true,
	}
	notSessionFile = map[string]bool{
		"history.jsonl": true, "session_index.jsonl": true,
	}
)

func (d *discoverer) errorf(err error) { d.res.Errors = append(d.res.Errors, err) }

func (d *discoverer) dir(dir string, depth int) {
	if depth > maxDepth {
		d.errorf(fmt.Errorf("%s: directory tree deeper than %d levels, not searched further", dir, maxDepth))
		return
	}
	d.rec.dir(dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		d.errorf(err)
		return
	}
	names, rotations := indexDir(ents)
	// a Kimi session directory: everything in it belongs to the session
	if e, ok := names["context.jsonl"]; ok && e.Type().IsRegular() {
		d.kimiSession(dir)
		d.seal()
		return
	}
	// a session directory of a home that keeps one per session
	for _, ds := range dirStores() {
		if main := ds.SessionMain(dir, names); main != "" {
			d.dirSession(ds, dir, main)
			d.seal()
			return
		}
	}
	sidecars := map[string]bool{} // subdirectories taken by a session
	for i, e := range ents {
		if i%prefetchChunk == 0 {
			d.pre = prefetch(dir, ents[i:min(i+prefetchChunk, len(ents))], names, d.rec)
		}
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, jsonl.TempPrefix) || notSessionFile[name] {
			continue
		}
		if !isSessionName(name) {
			continue
		}
		if plain := jsonl.PlainName(name); plain != name {
			if e2, ok := names[plain]; ok && e2.Type().IsRegular() {
				continue // the plain file wins over its compressed form (Codex's rule)
			}
		}
		p := filepath.Join(dir, name)
		if isFlatAgent(name) && filepath.Base(dir) != "subagents" {
			f, ok := d.stat(p, FileSubagent)
			if ok {
				d.rec.content(p)
				d.flat = append(d.flat, flatAgent{file: f, sessionID: headSessionID(p), dir: dir})
			}
			continue
		}
		s := d.file(d.root, p)
		if s == nil {
			continue
		}
		if stem := d.neighbours(s, dir, name, names, rotations); stem != "" {
			sidecars[stem] = true
		}
	}
	d.pre = nil
	d.seal()
	for _, e := range ents {
		if !e.IsDir() || sidecars[e.Name()] || notSessionDir[e.Name()] {
			continue
		}
		d.dir(filepath.Join(dir, e.Name()), depth+1)
	}
}

// neighbours attaches what lies beside a session file in its directory: the
// rotations sessctl made (<name>.N), sessctl's lock file and Claude's
// sidecar directory <id>/. It returns the sidecar's name when there is one.
func (d *discoverer) neighbours(s *Session, dir, name string, names map[string]fs.DirEntry, rotations map[string][]fs.DirEntry) string {
	sidecar := ""
	// a compressed file's rotations (<name>.jsonl.zst.N) are the session's
	// as much as the plain ones: one numbering for both (pkg/rotation)
	name = jsonl.PlainName(name)
	for _, e2 := range rotations[name] {
		m := rotationMatch(e2.Name())
		if f, ok := d.stat(filepath.Join(dir, e2.Name()), FileRotation); ok {
			f.Rotation = rotationNumber(m[2])
			s.Files = append(s.Files, f)
		}
	}
	// a compressed form the plain file hides (Codex reads the plain one);
	// it goes with the session when the session is removed, or it would
	// come back as the session with older content
	if e2, ok := names[name+jsonl.CompressedSuffix]; ok && e2.Type().IsRegular() && filepath.Base(s.Main) == name {
		if f, ok := d.stat(filepath.Join(dir, e2.Name()), FileSide); ok {
			s.Files = append(s.Files, f)
		}
	}
	// sessctl's lock file beside it: .<name>.sessctl.lock
	if e2, ok := names["."+name+lockSuffix]; ok && e2.Type().IsRegular() {
		if f, ok := d.stat(filepath.Join(dir, e2.Name()), FileSide); ok {
			s.Files = append(s.Files, f)
		}
	}
	// Claude's sidecar directory <id>/ (subagents/, tool-results/)
	stem := strings.TrimSuffix(name, ".jsonl")
	if e2, ok := names[stem]; ok && e2.IsDir() && LayoutOf(s.Agent).HasSidecar() {
		sidecar = stem
		s.Dir = inMain(s.Main, filepath.Join(dir, stem))
		d.sidecar(s, s.Dir)
	}
	sortRotations(s)
	return sidecar
}

// inMain returns s as the part of main that equals it, when main holds it:
// a session's id (from a directory entry's name, which would stay alive
// for it) and its sidecar directory's path are mostly a part of its main
// file's path, and so cost no string of their own (over 100,000 sessions,
// 3.5 MB of sidecar paths). Otherwise it returns s.
func inMain(main, s string) string {
	if i := strings.LastIndex(main, s); i >= 0 {
		return main[i : i+len(s)]
	}
	return s
}

// isSessionName reports whether a file name may be a session's main file:
// "*.jsonl", or its compressed form "*.jsonl.zst".
func isSessionName(name string) bool {
	return strings.HasSuffix(jsonl.PlainName(name), ".jsonl")
}

// indexDir indexes a directory listing by name, and sessctl's rotations
// (<name>.N, and <name>.zst.N of a compressed file) by the name of their
// plain main file.
func indexDir(ents []fs.DirEntry) (map[string]fs.DirEntry, map[string][]fs.DirEntry) {
	names := make(map[string]fs.DirEntry, len(ents))
	rotations := map[string][]fs.DirEntry{}
	for _, e := range ents {
		names[e.Name()] = e
		if !e.Type().IsRegular() || !strings.Contains(e.Name(), ".jsonl.") {
			continue
		}
		if m := rotationRe.FindStringSubmatch(e.Name()); m != nil {
			rotations[m[1]] = append(rotations[m[1]], e)
		}
	}
	return names, rotations
}

// explicitFile is a file named on the command line: its session with
// everything beside it that belongs to it.
func (d *discoverer) explicitFile(root Root, p string) {
	d.rec.fail()
	d.explicit = true
	s := d.file(root, p)
	d.explicit = false
	if s == nil || s.Dir != "" {
		return // a session directory: everything in it is already there
	}
	dir := filepath.Dir(s.Main)
	ents, err := os.ReadDir(dir)
	if err != nil {
		d.errorf(err)
		return
	}
	names, rotations := indexDir(ents)
	d.neighbours(s, dir, filepath.Base(s.Main), names, rotations)
}

// file makes a one-file session (or the Kimi session holding it).
func (d *discoverer) file(root Root, p string) *Session {
	name := filepath.Base(p)
	if isFlatAgent(name) {
		d.rec.content(p) // subagentParent may read its head
	}
	if parent := subagentParent(p); parent != "" {
		// a subagent transcript named directly: the session it belongs to
		return d.file(root, parent)
	}
	for _, ds := range dirStores() {
		if dir := ds.SessionDirOf(p); dir != "" {
			if main := ds.SessionMain(dir, nil); main != "" {
				return d.dirSession(ds, dir, main)
			}
		}
	}
	if name == "context.jsonl" || strings.HasPrefix(name, "context_") && kimiRotRe.MatchString(name) {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "context.jsonl")); err == nil {
			return d.kimiSession(filepath.Dir(p))
		}
	}
	if m := rotationMatch(name); m != nil {
		// an explicit rotation path: the session of its main file (plain, or
		// compressed when there is no plain one)
		main := filepath.Join(filepath.Dir(p), m[1])
		if _, err := os.Lstat(main); err != nil {
			if _, err := os.Lstat(main + jsonl.CompressedSuffix); err == nil {
				main += jsonl.CompressedSuffix
			}
		}
		return d.file(root, main)
	}
	if plain := jsonl.PlainName(p); plain != p {
		if fi, err := os.Lstat(plain); err == nil && fi.Mode().IsRegular() {
			// named on the command line, a compressed file whose plain form
			// exists is that session: the plain file wins
			return d.file(root, plain)
		}
	}
	abs := absPath(p)
	if d.seen.has(abs, d.mainAt) {
		return nil
	}
	agent := pathAgent(p, Sure)
	if agent == Unknown {
		d.rec.content(p)
		a, err := DetectFile(p)
		if err != nil {
			d.errorf(err)
			return nil
		}
		agent = a
	}
	if agent == Unknown {
		fi, err := os.Stat(p)
		if err == nil && fi.Size() > 0 {
			d.res.Unrecognized = append(d.res.Unrecognized, p)
			return nil
		}
		// an empty .jsonl: a session with nothing in it yet, agent from the
		// layout; named on the command line, a session even without one (an
		// agent may just have created it: watch follows it)
		agent = pathHint(p)
		if agent == Unknown && !d.explicit {
			d.res.Unrecognized = append(d.res.Unrecognized, p)
			return nil
		}
	}
	if jsonl.IsCompressedName(name) && !ReadsCompressed(agent) {
		d.res.Unrecognized = append(d.res.Unrecognized, p)
		return nil
	}
	f, ok := d.stat(p, FileMain)
	if !ok {
		return nil
	}
	layout := LayoutOf(agent)
	s := &Session{Agent: agent, ID: inMain(p, layout.SessionID(jsonl.PlainName(name))), Main: p, Root: root.Path,
		Project: layout.ProjectFromPath(p), Files: []File{f}}
	if root.Agent == agent {
		d.storeSideDirs(s, root.Path, layout.StoreSideDirs())
	}
	d.add(s, abs)
	return s
}

// add puts s, whose main file's absolute path is abs, into the result and
// into the set of main files taken.
func (d *discoverer) add(s *Session, abs string) {
	d.res.Sessions = append(d.res.Sessions, s)
	d.seen.take(abs, d.packed()+len(d.res.Sessions)-1)
}

// packed is how many sessions are packed (Result.Packed): the place of a
// session in Sessions is after them.
func (d *discoverer) packed() int {
	if d.res.Packed == nil {
		return 0
	}
	return d.res.Packed.Len()
}

// mainAt returns the main file of the session at place at.
func (d *discoverer) mainAt(at int) string {
	n := d.packed()
	if at < n {
		return d.res.Packed.MainPath(at)
	}
	return d.res.Sessions[at-n].Main
}

// seal packs the sessions made so far, when discovery packs them and has
// found more than PackFrom: no session is changed once the directory that
// holds it is listed, but by attachFlatAgents.
func (d *discoverer) seal() {
	if d.res.Packed == nil {
		if !d.pack || len(d.res.Sessions) <= PackFrom {
			return
		}
		d.res.Packed = &Packed{}
	}
	for _, s := range d.res.Sessions {
		d.res.Packed.Add(s)
	}
	clear(d.res.Sessions)
	d.res.Sessions = d.res.Sessions[:0]
}

// subagentParent returns the main transcript a subagent transcript belongs
// to, when p is one and its parent exists: Claude Code's
// <dir>/<id>/subagents/agent-*.jsonl (parent <dir>/<id>.jsonl), the older
// flat <dir>/agent-*.jsonl (parent <dir>/<sessionId>.jsonl, the id from its
// first lines) and Kimi's <session>/subagents/<id>/context.jsonl (parent
// <session>/context.jsonl). Otherwise "".
func subagentParent(p string) string {
	name := filepath.Base(p)
	dir := filepath.Dir(p)
	exists := func(q string) bool {
		fi, err := os.Stat(q)
		return err == nil && fi.Mode().IsRegular()
	}
	switch {
	case isFlatAgent(name) && filepath.Base(dir) == "subagents":
		stem := filepath.Dir(dir)
		if q := stem + ".jsonl"; exists(q) {
			return q
		}
	case isFlatAgent(name):
		if id := headSessionID(p); id != "" && !strings.ContainsAny(id, `/\`) {
			if q := filepath.Join(dir, id+".jsonl"); q != p && exists(q) {
				return q
			}
		}
	case name == "context.jsonl" && filepath.Base(filepath.Dir(dir)) == "subagents":
		if q := filepath.Join(filepath.Dir(filepath.Dir(dir)), "context.jsonl"); exists(q) {
			return q
		}
	}
	return ""
}

func (d *discoverer) stat(p string, role FileRole) (File, bool) {
	if fi, ok := d.pre.stat(p); ok {
		return fileOf(p, role, fi), true
	}
	fi, err := os.Lstat(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) { // removed while scanning: not an error worth reporting
			d.errorf(err)
		}
		return File{}, false
	}
	return fileOf(p, role, fi), true
}

// fileOf is the File of what an lstat of p found.
func fileOf(p string, role FileRole, fi fs.FileInfo) File {
	f := File{Path: p, Role: role, Size: fi.Size(), ModTime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().IsRegular() {
		f.dev, f.ino = uint64(st.Dev), st.Ino
	}
	return f
}

// kimiSession collects a Kimi session directory.
func (d *discoverer) kimiSession(dir string) *Session {
	main := filepath.Join(dir, "context.jsonl")
	abs := absPath(main)
	if d.seen.has(abs, d.mainAt) {
		return nil
	}
	s := &Session{Agent: Kimi, ID: filepath.Base(dir), Main: main, Dir: dir, Root: d.root.Path}
	hash := filepath.Base(filepath.Dir(dir))
	s.Project = hash
	if wd, ok := d.kimiWorkDir(dir, hash); ok {
		s.Project = wd
	}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			d.errorf(err)
			return nil
		}
		if e.IsDir() {
			d.rec.dir(p) // WalkDir lists it after this
		}
		if e.IsDir() || !e.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		role := FileSide
		var rotation int32
		switch {
		case rel == "context.jsonl":
			role = FileMain
		case kimiRotRe.MatchString(rel):
			role = FileRotation
			rotation = rotationNumber(kimiRotRe.FindStringSubmatch(rel)[1])
		case rel == "wire.jsonl":
			role = FileWire
		case strings.HasPrefix(rel, "subagents"+string(filepath.Separator)):
			base := filepath.Base(p)
			switch {
			case base == "context.jsonl":
				role = FileSubagent
			case kimiRotRe.MatchString(base):
				role = FileRotation
			case base == "wire.jsonl":
				role = FileWire
			}
		}
		if f, ok := d.stat(p, role); ok {
			f.Rotation = rotation
			s.Files = append(s.Files, f)
		}
		return nil
	})
	sortRotations(s)
	d.add(s, abs)
	return s
}

// dirSession collects a session directory of a DirStore home: its main
// transcript and every other regular file in it, classified by the home.
func (d *discoverer) dirSession(ds DirStore, dir, main string) *Session {
	abs := absPath(main)
	if d.seen.has(abs, d.mainAt) {
		return nil
	}
	s := &Session{Agent: ds.Agent(), ID: filepath.Base(dir), Main: main, Dir: dir, Root: d.root.Path}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			d.errorf(err)
			return nil
		}
		if e.IsDir() {
			d.rec.dir(p) // WalkDir lists it after this
		}
		if e.IsDir() || !e.Type().IsRegular() {
			return nil
		}
		role := FileSide
		if p == main {
			role = FileMain
		} else if rel, err := filepath.Rel(dir, p); err == nil {
			role = ds.DirFileRole(rel)
		}
		// the home may read any of them for the project (DirProject): a
		// snapshot stands only while none changes
		d.rec.content(p)
		if f, ok := d.stat(p, role); ok {
			s.Files = append(s.Files, f)
		}
		return nil
	})
	s.Project = ds.DirProject(dir)
	sortRotations(s)
	d.add(s, abs)
	return s
}

// kimiWorkDir maps a session's work-dir hash to the path, from the kimi.json
// of the root or of the share dir that holds the session
// (<share>/sessions/<hash>/<id>).
func (d *discoverer) kimiWorkDir(sessionDir, hash string) (string, bool) {
	if wd, ok := d.kimiDirs[hash]; ok {
		return wd, true
	}
	share := filepath.Dir(filepath.Dir(filepath.Dir(sessionDir)))
	if d.kimiJSON == nil {
		d.kimiJSON = map[string]map[string]string{}
	}
	m, ok := d.kimiJSON[share]
	if !ok {
		d.rec.content(filepath.Join(share, kimiJSON))
		m = loadKimiWorkDirs(share)
		d.kimiJSON[share] = m
	}
	wd, ok := m[hash]
	return wd, ok
}

// sidecar adds the files under a session's sidecar directory (Claude's <id>/).
func (d *discoverer) sidecar(s *Session, dir string) {
	add := func(p string) {
		role := FileSide
		if strings.HasSuffix(p, ".jsonl") && filepath.Base(filepath.Dir(p)) == "subagents" {
			role = FileSubagent
		}
		if m := rotationMatch(filepath.Base(p)); m != nil {
			role = FileRotation
		}
		if f, ok := d.stat(p, role); ok {
			s.Files = append(s.Files, f)
		}
	}
	if ws, ok := d.pre.walk(dir); ok {
		for _, w := range ws {
			if w.err != nil {
				d.errorf(w.err)
				continue
			}
			add(w.path)
		}
		return
	}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			d.errorf(err)
			return nil
		}
		if e.IsDir() {
			d.rec.dir(p) // WalkDir lists it after this
		}
		if e.IsDir() || !e.Type().IsRegular() {
			return nil
		}
		add(p)
		return nil
	})
}

// storeSideDirs adds the entries named by the session's id in the given
// directories of its store (Claude's file-history/<id>, session-env/<id>)
// as side directories.
func (d *discoverer) storeSideDirs(s *Session, root string, dirs []string) {
	for _, sub := range dirs {
		if !d.dirHas(filepath.Join(root, sub), s.ID) {
			continue
		}
		p := filepath.Join(root, sub, s.ID)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			continue
		}
		f := File{Path: p, Role: FileSide, ModTime: fi.ModTime(), Dir: true}
		filepath.WalkDir(p, func(q string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				d.rec.dir(q)
			}
			if err == nil && e.Type().IsRegular() {
				d.rec.content(q) // its size and time are summed into f
				if info, err := e.Info(); err == nil {
					f.Size += info.Size()
					if info.ModTime().After(f.ModTime) {
						f.ModTime = info.ModTime()
					}
				}
			}
			return nil
		})
		s.Files = append(s.Files, f)
	}
}

// dirHas reports whether dir holds an entry called name, reading each
// directory once (a store has one file-history entry per session, so a Lstat
// per session would cost a syscall for each of tens of thousands).
func (d *discoverer) dirHas(dir, name string) bool {
	names, ok := d.listed[dir]
	if !ok {
		d.rec.dir(dir)
		names = map[string]bool{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			names[e.Name()] = true
		}
		if d.listed == nil {
			d.listed = map[string]map[string]bool{}
		}
		d.listed[dir] = names
	}
	return names[name]
}

// attachFlatAgents gives the old flat agent-<id>.jsonl subagent files to the
// session named by their sessionId, or makes them sessions of their own.
func (d *discoverer) attachFlatAgents() {
	if len(d.flat) == 0 {
		return
	}
	// only the sessions of directories that hold such files: a store of
	// 100,000 sessions need not be keyed whole
	dirs := map[string]bool{}
	for _, fa := range d.flat {
		dirs[fa.dir] = true
	}
	type key struct{ dir, id string }
	type target struct {
		s  *Session
		at int // its place when packed, else -1
	}
	byKey := map[key]target{}
	if p := d.res.Packed; p != nil {
		// every session is packed by now (seal)
		for i := range p.Len() {
			if dirs[filepath.Dir(p.MainPath(i))] {
				s := p.At(i)
				byKey[key{filepath.Dir(s.Main), s.ID}] = target{s, i}
			}
		}
	}
	for _, s := range d.res.Sessions {
		if dir := filepath.Dir(s.Main); dirs[dir] {
			byKey[key{dir, s.ID}] = target{s, -1}
		}
	}
	for _, fa := range d.flat {
		if t, ok := byKey[key{fa.dir, fa.sessionID}]; ok && fa.sessionID != "" {
			t.s.Files = append(t.s.Files, fa.file)
			if t.at >= 0 {
				d.res.Packed.Set(t.at, t.s)
			}
			continue
		}
		s := d.file(d.root, fa.file.Path)
		if s != nil {
			s.Files[0].Role = FileMain
		}
	}
}

func sortRotations(s *Session) {
	sort.SliceStable(s.Files, func(i, j int) bool {
		ri, rj := roleOrder(s.Files[i].Role), roleOrder(s.Files[j].Role)
		if ri != rj {
			return ri < rj
		}
		if s.Files[i].Role == FileRotation && s.Files[i].Rotation != s.Files[j].Rotation {
			return s.Files[i].Rotation < s.Files[j].Rotation
		}
		return s.Files[i].Path < s.Files[j].Path
	})
}

func roleOrder(r FileRole) int {
	switch r {
	case FileMain:
		return 0
	case FileRotation:
		return 1
	case FileSubagent:
		return 2
	case FileWire:
		return 3
	}
	return 4
}

// headSessionID reads the sessionId of the first line that has one.
func headSessionID(p string) string {
	f, err := jsonl.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	r := jsonl.NewReader(io.LimitReader(f, 1<<20))
	for i := 0; i < 10; i++ {
		l, err := r.Next()
		if err != nil {
			return ""
		}
		if l.Status != jsonl.OK || !bytes.Contains(l.Raw, []byte(`"sessionId"`)) {
			continue
		}
		var v struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(jsonl.Strict(l.Raw), &v) == nil && v.SessionID != "" {
			return v.SessionID
		}
	}
	return ""
}

// kimiJSON is the file of a Kimi share dir that names its work dirs.
const kimiJSON = "kimi.json"

// loadKimiWorkDirs maps the work-dir hashes of a Kimi share dir to paths,
// from its kimi.json.
func loadKimiWorkDirs(root string) map[string]string {
	b, err := os.ReadFile(filepath.Join(root, kimiJSON))
	if err != nil {
		return nil
	}
	var v struct {
		WorkDirs []struct {
			Path string `json:"path"`
			Kaos string `json:"kaos"`
		} `json:"work_dirs"`
	}
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	m := map[string]string{}
	for _, w := range v.WorkDirs {
		h := KimiWorkDirHash(w.Path)
		if w.Kaos != "" && w.Kaos != "local" {
			h = w.Kaos + "_" + h
		}
		m[h] = w.Path
	}
	return m
}

// KimiWorkDirHash is the md5 of a work dir as Kimi names its session folder.
func KimiWorkDirHash(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// rotationNumber is a rotation's number from the digits of its name, the
// largest int32 for more (File.Rotation).
func rotationNumber(digits string) int32 { return int32(min(atoi(digits), math.MaxInt32)) }

// atoi reads the leading digits of s, stopping before a value that would
// overflow an int (a rotation's number: no file name makes it wrap).
func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' || n > (math.MaxInt-9)/10 {
			return n
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Find returns the sessions whose id is q, or, when none is, whose id starts
// with q.
func Find(ss []*Session, q string) []*Session {
	var exact, prefix []*Session
	for _, s := range ss {
		switch {
		case s.ID == q:
			exact = append(exact, s)
		case strings.HasPrefix(s.ID, q):
			prefix = append(prefix, s)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return prefix
}
