package session_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/session"
)

const testdata = "../../testdata/sessions"

func samplesDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join("..", "..", "..", "shared", "samples")
	if _, err := os.Stat(d); err != nil {
		t.Skip("shared samples not present (../shared/samples)")
	}
	return d
}

// Every shared sample is detected as the agent whose folder holds it.
func TestDetectSharedSamples(t *testing.T) {
	dir := samplesDir(t)
	n := 0
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		var want session.Agent
		switch {
		case strings.HasPrefix(rel, "kimi/"):
			want = session.Kimi
		case strings.HasPrefix(rel, "claude/"), strings.HasPrefix(rel, "real-clients/claude-home/"):
			want = session.Claude
		case strings.HasPrefix(rel, "codex/"), strings.HasPrefix(rel, "real-clients/codex-home/"):
			want = session.Codex
		default:
			t.Errorf("%s: no expectation", rel)
			return nil
		}
		got, err := session.DetectFile(p)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		if got != want {
			t.Errorf("%s: detected %s, want %s", rel, got, want)
		}
		n++
		return nil
	})
	if n < 50 {
		t.Fatalf("only %d sample files seen", n)
	}
}

func TestDiscoverTestdata(t *testing.T) {
	// the Kimi Code store the real client wrote lives apart
	// (testdata/kimi-code-2.1.0)
	res := session.Discover([]session.Root{{Path: testdata}, {Path: filepath.Join(testdata, "..", "kimi-code-2.1.0")}}, false)
	if len(res.Errors) > 0 || len(res.Unrecognized) > 0 {
		t.Fatalf("errors %v unrecognized %v", res.Errors, res.Unrecognized)
	}
	by := map[session.Agent]*session.Session{}
	for _, s := range res.Sessions {
		if by[s.Agent] != nil {
			t.Fatalf("two %s sessions", s.Agent)
		}
		by[s.Agent] = s
	}
	for _, a := range session.Agents {
		if by[a] == nil {
			t.Fatalf("no %s session found", a)
		}
	}
	k := by[session.Kimi]
	if k.ID != "3f2c9a1e-7b4d-4e8a-9c61-0d5b2e8f4a17" || k.Project != "/home/alice/src/parse" {
		t.Errorf("kimi id %q project %q (project comes from kimi.json)", k.ID, k.Project)
	}
	roles := map[session.FileRole]int{}
	for _, f := range k.Files {
		roles[f.Role]++
	}
	if roles[session.FileMain] != 1 || roles[session.FileRotation] != 1 || roles[session.FileWire] != 1 || roles[session.FileSide] != 1 {
		t.Errorf("kimi file roles %v", roles)
	}
	c := by[session.Claude]
	if len(c.FilesWithRole(session.FileSubagent)) != 1 || len(c.Files) != 3 || c.ID != "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f" {
		t.Errorf("claude files %+v", c.Files)
	}
	if by[session.Codex].ID != "01a20000-0000-7000-8000-00000000c0de" {
		t.Errorf("codex id %q", by[session.Codex].ID)
	}
	var size int64
	for _, f := range c.Files {
		fi, _ := os.Stat(f.Path)
		size += fi.Size()
	}
	if c.Size() != size {
		t.Errorf("size %d, files add up to %d", c.Size(), size)
	}
}

func TestSummarizeTitles(t *testing.T) {
	res := session.Discover([]session.Root{{Path: testdata}}, false)
	want := map[session.Agent][2]string{
		session.Kimi:      {"Parser modules and --verbose", "custom_title"},
		session.Claude:    {"Login test fix", "custom_title"},
		session.Codex:     {"Why is GET /users slow?", "first_prompt"},
		session.Clawdcode: {"重构 src/utils.ts，把重复的函数合并", "first_prompt"},
	}
	records := map[session.Agent]int{session.Kimi: 16, session.Claude: 15, session.Codex: 16, session.Clawdcode: 8}
	corrupt := map[session.Agent]int{session.Kimi: 0, session.Claude: 2, session.Codex: 3, session.Clawdcode: 1}
	for _, s := range res.Sessions {
		sum, err := session.Summarize(s)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[s.Agent]; sum.Title != w[0] || sum.TitleSource != w[1] {
			t.Errorf("%s: title %q (%s), want %q (%s)", s.Agent, sum.Title, sum.TitleSource, w[0], w[1])
		}
		if sum.Records != records[s.Agent] || sum.Corrupt != corrupt[s.Agent] {
			t.Errorf("%s: records %d corrupt %d, want %d %d", s.Agent, sum.Records, sum.Corrupt, records[s.Agent], corrupt[s.Agent])
		}
	}
}

func TestDiscoverFlatAgentAttachesToSession(t *testing.T) {
	dir := samplesDir(t)
	res := session.DiscoverPaths([]string{filepath.Join(dir, "claude", "claude-code-log", "-src-deep-manifest")})
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions, want the one with its flat agent file attached", len(res.Sessions))
	}
	if sub := res.Sessions[0].FilesWithRole(session.FileSubagent); len(sub) != 1 || filepath.Base(sub[0].Path) != "agent-c8d9b115.jsonl" {
		t.Fatalf("subagents %+v", sub)
	}
}

func TestDiscoverBadInput(t *testing.T) {
	dir := t.TempDir()
	// a root that does not exist
	if res := session.Discover([]session.Root{{Path: filepath.Join(dir, "nope")}}, false); len(res.Errors) != 1 {
		t.Errorf("missing root: %v", res.Errors)
	}
	if res := session.Discover([]session.Root{{Path: filepath.Join(dir, "nope")}}, true); len(res.Errors) != 0 {
		t.Errorf("missing default root must be silent: %v", res.Errors)
	}
	// a symlink loop, an empty file, binary garbage
	os.Symlink(dir, filepath.Join(dir, "loop"))
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "garbage.jsonl"), []byte("\x00\x01\xff\xfe binary"), 0o644)
	res := session.Discover([]session.Root{{Path: dir}}, false)
	if len(res.Sessions) != 0 || len(res.Unrecognized) != 2 || len(res.Errors) != 0 {
		t.Errorf("sessions %d unrecognized %v errors %v", len(res.Sessions), res.Unrecognized, res.Errors)
	}
}

func TestFind(t *testing.T) {
	ss := []*session.Session{{ID: "abc"}, {ID: "abcdef"}, {ID: "xyz"}}
	if f := session.Find(ss, "abc"); len(f) != 1 || f[0].ID != "abc" {
		t.Errorf("exact match must win: %v", f)
	}
	if f := session.Find(ss, "ab"); len(f) != 2 {
		t.Errorf("prefix: %v", f)
	}
	if f := session.Find(ss, "q"); len(f) != 0 {
		t.Errorf("none: %v", f)
	}
}

// A session.Claude file named on the command line brings its <id>/ folder, its
// rotations and its lock file, exactly as when its directory is searched.
func TestDiscoverExplicitClaudeFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(testdata, "claude", "projects", "-home-alice-src-web")
	id := "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"
	copyTree(t, src, dir)
	main := filepath.Join(dir, id+".jsonl")
	os.WriteFile(main+".1", []byte("{}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "."+id+".jsonl.sessctl.lock"), nil, 0o600)
	for _, p := range []string{main, main + ".1"} {
		res := session.DiscoverPaths([]string{p})
		if len(res.Sessions) != 1 {
			t.Fatalf("%s: %d sessions", p, len(res.Sessions))
		}
		s := res.Sessions[0]
		roles := map[session.FileRole]int{}
		for _, f := range s.Files {
			roles[f.Role]++
		}
		if s.Main != main || roles[session.FileSubagent] != 1 || roles[session.FileRotation] != 1 || roles[session.FileSide] != 2 || s.Dir == "" {
			t.Errorf("%s: main %s roles %v dir %q", p, s.Main, roles, s.Dir)
		}
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPreview(t *testing.T) {
	if got := session.Preview("  a\n\tb  c ", 10); got != "a b c" {
		t.Errorf("short text: %q", got)
	}
	if got := session.Preview("héllo wörld", 6); got != "héllo…" {
		t.Errorf("cut: %q (6 runes with the mark)", got)
	}
}

// A lock file sessctl made later than the session's last write does not
// make the session look updated then.
func TestUpdatedIgnoresLockFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(testdata, "claude", "projects", "-home-alice-src-web")
	id := "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f"
	copyTree(t, src, dir)
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "."+id+".jsonl.sessctl.lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := session.DiscoverPaths([]string{dir})
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	s := res.Sessions[0]
	held := false
	for _, f := range s.Files {
		held = held || f.Path == lock
	}
	if !held {
		t.Fatal("the lock file is not among the session's files: the test proves nothing")
	}
	if got := s.Updated(); !got.Equal(old) {
		t.Errorf("Updated %v, want the files' %v (the lock file is newer)", got, old)
	}
}

// MayHoldKey errs only towards true: wherever a key of keys is in the
// line as a string in any case (bytes.EqualFold, which folds as the
// decoders do), it says so; and it says false of lines that hold none of
// them.
func TestMayHoldKey(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{`{"message":{"usage":{"input_tokens":1}}}`, true},
		{`{"message":{"USAGE":{}}}`, true},
		{`{"message":{"uSaGe":{}}}`, true},
		{`{"message":{"\u0075sage":{}}}`, true},
		{"{\"message\":{\"u\u017fage\":{}}}", true},
		{`{"message":{"content":"no such key"}}`, false},
		{`{"message":{"content":"usag"}}`, false},
		{`{"message":{"content":"u"}}`, false},
		{`{"message":{"content":"the usage of it"}}`, false},
		{`{"message":{"input_usage":1}}`, false},
		{`{"message":{"content":"usage"}}`, true},
		{`"usage"`, true},
		{`"xUSAGE"`, false},
		{`"USAGE`, false},
		{`usage"`, false},
		{``, false},
	} {
		if got := session.MayHoldKey([]byte(c.line), "usage"); got != c.want {
			t.Errorf("MayHoldKey(%q, usage) = %v, want %v", c.line, got, c.want)
		}
	}
}

func FuzzMayHoldKey(f *testing.F) {
	f.Add([]byte(`{"a":"uSage"}`), "usage")
	f.Add([]byte(`uuuuuUUUUusage`), "usage")
	f.Fuzz(func(t *testing.T, line []byte, key string) {
		key = strings.ToLower(key)
		if key == "" || !isASCII(key) {
			return
		}
		want := false
		for i := 1; i+len(key) < len(line); i++ {
			if line[i-1] == '"' && line[i+len(key)] == '"' && bytes.EqualFold(line[i:i+len(key)], []byte(key)) {
				want = true
			}
		}
		if want && !session.MayHoldKey(line, key) {
			t.Fatalf("MayHoldKey(%q, %q) = false; the line holds it", line, key)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Roots that overlap (the same store twice, a part of it, the same by a
// relative path) find each session once, with the files one root finds.
func TestDiscoverOverlappingRootsOnce(t *testing.T) {
	abs, err := filepath.Abs(testdata)
	if err != nil {
		t.Fatal(err)
	}
	one := session.Discover([]session.Root{{Path: testdata}}, false)
	if len(one.Sessions) < 4 {
		t.Fatalf("%d sessions in testdata", len(one.Sessions))
	}
	roots := []session.Root{{Path: filepath.Join(testdata, "claude")}, {Path: testdata}, {Path: abs},
		{Path: filepath.Join(abs, "kimi", "sessions")}, {Path: testdata}}
	res := session.Discover(roots, false)
	mains := map[string]*session.Session{}
	for _, s := range res.Sessions {
		a, _ := filepath.Abs(s.Main)
		if mains[a] != nil {
			t.Fatalf("%s found twice", a)
		}
		mains[a] = s
	}
	if len(mains) != len(one.Sessions) {
		t.Fatalf("%d sessions, one root finds %d", len(mains), len(one.Sessions))
	}
	for _, s := range one.Sessions {
		a, _ := filepath.Abs(s.Main)
		o := mains[a]
		if o == nil || len(o.Files) != len(s.Files) {
			t.Fatalf("%s: %+v, one root finds %+v", a, o, s)
		}
	}
}
