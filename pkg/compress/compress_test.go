package compress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// content is a hand-written rollout with what a copy must keep: a line
// that is not JSON, bytes that are not UTF-8, a CR before a newline, and a
// torn last line without its newline.
var content = []byte(`{"timestamp":"2026-11-01T11:00:00.000Z","type":"session_meta","payload":{"id":"01a20000-0000-7000-8000-00000000c0de","cwd":"/home/alice/src/api"}}
{"timestamp":"2026-11-01T11:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Why is GET /users slow?"}]}}
not json at all ` + "\xff\xfe" + `
{"timestamp":"2026-11-01T11:00:02.000Z","type":"event_msg","payload":{"type":"agent_message","message":"N+1 query"}}` + "\r" + `
{"timestamp":"2026-11-01T11:00:03.000Z","type":"resp`)

const rolloutName = "rollout-2026-11-01T11-00-00-01a20000-0000-7000-8000-00000000c0de.jsonl"

var old = time.Date(2026, 11, 1, 11, 0, 3, 123456789, time.UTC)

// codexSession writes a Codex rollout into a store under a temp root and
// returns its session, as discovery would describe it.
func codexSession(t *testing.T, data []byte, mode os.FileMode, mtime time.Time) *session.Session {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".codex")
	dir := filepath.Join(root, "sessions", "2026", "11", "01")
	return writeSession(t, session.Codex, root, filepath.Join(dir, rolloutName), data, mode, mtime)
}

func writeSession(t *testing.T, a session.Agent, root, path string, data []byte, mode os.FileMode, mtime time.Time) *session.Session {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return &session.Session{Agent: a, ID: "x", Main: path, Root: root,
		Files: []session.File{{Path: path, Role: session.FileMain, Size: int64(len(data)), ModTime: mtime}}}
}

func now() time.Time { return old.Add(8 * 24 * time.Hour) }

func opts() Options { return Options{OlderThan: DefaultOlderThan, Now: now} }

// entries lists a directory's names, sessctl's lock files aside (they are
// left in place by design).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), safety.LockSuffix) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

func decompress(t *testing.T, path string) []byte {
	t.Helper()
	z, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	got, err := dec.DecodeAll(z, nil)
	if err != nil {
		t.Fatalf("%s does not decompress: %v", path, err)
	}
	return got
}

// assertUntouched checks that the plain file is exactly as written and
// alone in its directory.
func assertUntouched(t *testing.T, s *session.Session, data []byte, mtime time.Time) {
	t.Helper()
	got, err := os.ReadFile(s.Main)
	if err != nil {
		t.Fatalf("the plain file is gone: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Errorf("the plain file changed")
	}
	if fi, err := os.Stat(s.Main); err != nil || !fi.ModTime().Equal(mtime) {
		t.Errorf("the plain file's mtime changed: %v (%v)", fi.ModTime(), err)
	}
	if names := entries(t, filepath.Dir(s.Main)); len(names) != 1 || names[0] != rolloutName {
		t.Errorf("left beside the plain file: %q", names)
	}
}

func TestCompressRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{"rollout", content, 0o640},
		{"empty", nil, 0o644},
		{"large", bytes.Repeat(content, 8000), 0o600}, // 2.5 MB: several blocks
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := codexSession(t, tc.data, tc.mode, old)
			it := Session(context.Background(), s, opts())
			if it.Status != StatusCompressed {
				t.Fatalf("status %s (%s: %s)", it.Status, it.Code, it.Reason)
			}
			z := s.Main + ".zst"
			if it.NewPath != z {
				t.Errorf("new path %q, want %q", it.NewPath, z)
			}
			if _, err := os.Lstat(s.Main); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the plain file is still there (%v)", err)
			}
			if got := decompress(t, z); !bytes.Equal(got, tc.data) {
				t.Errorf("the .zst holds %d bytes, not the %d of the rollout", len(got), len(tc.data))
			}
			fi, err := os.Stat(z)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tc.mode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), tc.mode)
			}
			if !fi.ModTime().Equal(old) {
				t.Errorf("mtime %v, want the rollout's %v", fi.ModTime(), old)
			}
			if it.CompressedSize != fi.Size() || it.Size != int64(len(tc.data)) {
				t.Errorf("sizes %d → %d, want %d → %d", it.Size, it.CompressedSize, len(tc.data), fi.Size())
			}
			// the lock file, a side file of the session, does not make it
			// look just updated
			if fi, err := os.Stat(filepath.Join(filepath.Dir(z), safety.LockName(rolloutName))); err != nil || fi.ModTime().After(old) {
				t.Errorf("the lock file is newer than the session (%v)", err)
			}
			if names := entries(t, filepath.Dir(z)); len(names) != 1 || names[0] != rolloutName+".zst" {
				t.Errorf("directory holds %q", names)
			}
			// sessctl's own reader reads it as the content
			f, err := jsonl.Open(z)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(f)
			f.Close()
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Errorf("jsonl.Open reads %d bytes (%v)", len(got), err)
			}
		})
	}
}

func TestCompressDryRunChangesNothing(t *testing.T) {
	s := codexSession(t, content, 0o644, old)
	o := opts()
	o.DryRun = true
	it := Session(context.Background(), s, o)
	if it.Status != StatusWouldCompress || it.NewPath != s.Main+".zst" {
		t.Fatalf("status %s, new path %q (%s)", it.Status, it.NewPath, it.Reason)
	}
	assertUntouched(t, s, content, old)
}

func TestCompressSkipsWarmFiles(t *testing.T) {
	s := codexSession(t, content, 0o644, now().Add(-6*24*time.Hour))
	it := Session(context.Background(), s, opts())
	if it.Status != StatusSkipped || it.Code != CodeNotCold {
		t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
	}
	assertUntouched(t, s, content, now().Add(-6*24*time.Hour))
}

func TestCompressSkipsWhenZstExists(t *testing.T) {
	s := codexSession(t, content, 0o644, old)
	z := s.Main + ".zst"
	if err := os.WriteFile(z, []byte("older"), 0o644); err != nil {
		t.Fatal(err)
	}
	it := Session(context.Background(), s, opts())
	if it.Status != StatusSkipped || it.Code != CodeHasZst {
		t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
	}
	if got, _ := os.ReadFile(z); string(got) != "older" {
		t.Error("the existing .zst was changed")
	}
	if got, _ := os.ReadFile(s.Main); !bytes.Equal(got, content) {
		t.Error("the plain file was changed")
	}
}

// TestCompressRefusesOtherAgents: the clients that cannot read a
// compressed file keep their sessions plain; the reason says so.
func TestCompressRefusesOtherAgents(t *testing.T) {
	n := 0
	for _, a := range session.Registered() {
		if session.ReadsCompressed(a) {
			continue
		}
		n++
		t.Run(string(a), func(t *testing.T) {
			root := t.TempDir()
			s := writeSession(t, a, root, filepath.Join(root, "projects", "p", "0a1b2c3d-0000-4000-8000-000000000000.jsonl"), content, 0o644, old)
			it := Session(context.Background(), s, opts())
			if it.Status != StatusRefused || it.Code != CodeUnsupported || !strings.Contains(it.Reason, "cannot read compressed") {
				t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
			}
			if it.Err() == nil || isRefusal(it.Err()) {
				t.Errorf("err %v: want an error that is not a safety refusal", it.Err())
			}
			if got, _ := os.ReadFile(s.Main); !bytes.Equal(got, content) {
				t.Error("the file was changed")
			}
			if names := entries(t, filepath.Dir(s.Main)); len(names) != 1 {
				t.Errorf("directory holds %q", names)
			}
		})
	}
	if n == 0 {
		t.Fatal("every agent reads compressed files? then this test tests nothing")
	}
}

// A Codex file under a name Codex would not read compressed is refused.
func TestCompressRefusesNamesCodexWouldNotRead(t *testing.T) {
	root := t.TempDir()
	s := writeSession(t, session.Codex, root, filepath.Join(root, "elsewhere.jsonl"), content, 0o644, old)
	it := Session(context.Background(), s, opts())
	if it.Status != StatusRefused || it.Code != CodeUnsupported {
		t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
	}
}

func isRefusal(err error) bool {
	var r *safety.RefusalError
	return errors.As(err, &r)
}

func TestCompressRefusesLiveSession(t *testing.T) {
	fresh := now().Add(-time.Second)
	s := codexSession(t, content, 0o644, fresh)
	o := opts()
	o.OlderThan = 0
	it := Session(context.Background(), s, o)
	if it.Status != StatusRefused || it.Code != CodeLive || !errors.Is(it.Err(), safety.ErrLive) {
		t.Fatalf("status %s %s (%s, %v)", it.Status, it.Code, it.Reason, it.Err())
	}
	assertUntouched(t, s, content, fresh)

	o.Force = true
	if it := Session(context.Background(), s, o); it.Status != StatusCompressed {
		t.Fatalf("with --force: status %s %s (%s)", it.Status, it.Code, it.Reason)
	}
}

func TestCompressRefusesSymlink(t *testing.T) {
	s := codexSession(t, content, 0o644, old)
	real := filepath.Join(t.TempDir(), "real.jsonl")
	if err := os.Rename(s.Main, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, s.Main); err != nil {
		t.Fatal(err)
	}
	it := Session(context.Background(), s, opts())
	if it.Status != StatusRefused || it.Code != CodeNotRegular {
		t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
	}
	if fi, err := os.Lstat(s.Main); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink is gone (%v)", err)
	}
	if _, err := os.Lstat(s.Main + ".zst"); err == nil {
		t.Error("a .zst was written through the symlink")
	}
}

// TestCompressFailureLeavesPlainFile: whatever step fails, the plain file
// stays byte for byte with its mtime, and nothing is left beside it.
func TestCompressFailureLeavesPlainFile(t *testing.T) {
	for _, stepName := range []string{StepWritten, StepVerified, StepPublished} {
		t.Run(stepName, func(t *testing.T) {
			s := codexSession(t, content, 0o644, old)
			o := opts()
			o.Fault = func(step string) error {
				if step == stepName {
					return errors.New("injected crash")
				}
				return nil
			}
			it := Session(context.Background(), s, o)
			if it.Status != StatusFailed || !strings.Contains(it.Reason, "injected crash") {
				t.Fatalf("status %s (%s)", it.Status, it.Reason)
			}
			assertUntouched(t, s, content, old)
		})
	}
}

// TestCompressVerifies: a compressed copy that does not decompress to the
// plain bytes is never published.
func TestCompressVerifies(t *testing.T) {
	for _, name := range []string{"flipped byte", "truncated", "other content"} {
		t.Run(name, func(t *testing.T) {
			s := codexSession(t, content, 0o644, old)
			o := opts()
			o.Fault = func(step string) error {
				if step != StepWritten {
					return nil
				}
				tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Main), jsonl.TempPrefix+"*"))
				if len(tmps) != 1 {
					return errors.New("no temp file found")
				}
				b, err := os.ReadFile(tmps[0])
				if err != nil {
					return err
				}
				switch name {
				case "truncated":
					b = b[:len(b)-5]
				case "other content":
					// a sound frame of content with one byte changed
					other := bytes.Clone(content)
					other[10] = 'X'
					var buf bytes.Buffer
					enc, _ := NewEncoder(&buf)
					enc.Write(other)
					enc.Close()
					b = buf.Bytes()
				default:
					b[len(b)/2] ^= 0x40
				}
				return os.WriteFile(tmps[0], b, 0o644)
			}
			it := Session(context.Background(), s, o)
			if it.Status != StatusFailed {
				t.Fatalf("status %s (%s)", it.Status, it.Reason)
			}
			t.Log(it.Reason)
			assertUntouched(t, s, content, old)
		})
	}
}

// TestCompressRefusesChangedFile: an agent appending while the copy is
// made keeps its bytes in the plain file, which stays the session.
func TestCompressRefusesChangedFile(t *testing.T) {
	for _, stepName := range []string{StepVerified, StepPublished} {
		t.Run(stepName, func(t *testing.T) {
			s := codexSession(t, content, 0o644, old)
			o := opts()
			o.Fault = func(step string) error {
				if step == stepName {
					return jsonl.Append(s.Main, []byte(`{"appended":true}`))
				}
				return nil
			}
			it := Session(context.Background(), s, o)
			if it.Status != StatusRefused || it.Code != CodeChanged || !errors.Is(it.Err(), safety.ErrChanged) {
				t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
			}
			got, _ := os.ReadFile(s.Main)
			if !bytes.HasPrefix(got, content) || !bytes.HasSuffix(got, []byte("{\"appended\":true}\n")) {
				t.Errorf("the plain file lost bytes: %q", got)
			}
			if names := entries(t, filepath.Dir(s.Main)); len(names) != 1 {
				t.Errorf("left beside the plain file: %q", names)
			}
		})
	}
}

func TestCompressCancelled(t *testing.T) {
	s := codexSession(t, content, 0o644, old)
	ctx, cancel := context.WithCancel(context.Background())
	o := opts()
	o.Fault = func(step string) error {
		cancel()
		return nil
	}
	it := Session(ctx, s, o)
	if it.Status != StatusRefused || it.Code != CodeInterrupted {
		t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
	}
	assertUntouched(t, s, content, old)
}

func TestCompressedFileSkipped(t *testing.T) {
	s := codexSession(t, content, 0o644, old)
	s.Main += ".zst"
	it := Session(context.Background(), s, opts())
	if it.Status != StatusSkipped || it.Code != CodeCompressed {
		t.Fatalf("status %s %s", it.Status, it.Code)
	}
}

// Another sessctl working on the session (its lock held) makes it a
// refusal; nothing is changed.
func TestCompressRefusesLockedSession(t *testing.T) {
	s := codexSession(t, content, 0o644, old)
	l, err := safety.LockFile(s.Main)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	it := Session(context.Background(), s, opts())
	if it.Status != StatusRefused || it.Code != CodeLocked || !errors.Is(it.Err(), safety.ErrLocked) {
		t.Fatalf("status %s %s (%s, %v)", it.Status, it.Code, it.Reason, it.Err())
	}
	assertUntouched(t, s, content, old)
}

// A .zst that appears while the copy is made (Codex's own maintenance
// running at the same time) is never replaced: the run is skipped, the
// plain file stays.
func TestCompressNeverReplacesAZstThatAppears(t *testing.T) {
	s := codexSession(t, content, 0o644, old)
	z := s.Main + ".zst"
	o := opts()
	o.Fault = func(step string) error {
		if step == StepVerified {
			return os.WriteFile(z, []byte("theirs"), 0o644)
		}
		return nil
	}
	it := Session(context.Background(), s, o)
	if it.Status != StatusSkipped || it.Code != CodeHasZst {
		t.Fatalf("status %s %s (%s)", it.Status, it.Code, it.Reason)
	}
	if got, _ := os.ReadFile(z); string(got) != "theirs" {
		t.Errorf("the .zst that appeared was replaced")
	}
	if got, _ := os.ReadFile(s.Main); !bytes.Equal(got, content) {
		t.Error("the plain file changed")
	}
	if names := entries(t, filepath.Dir(s.Main)); len(names) != 2 {
		t.Errorf("directory holds %q", names)
	}
}
