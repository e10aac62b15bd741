package rewrite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

const original = "{\"role\": \"_checkpoint\", \"id\": 0}\n{\"role\":\"user\",\"content\":\"hi\"}\n{\"torn"

func setup(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "context.jsonl")
	if err := os.WriteFile(p, []byte(original), 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	return p
}

// keepFirstLine is a stand-in transformation.
func keepFirstLine(orig io.Reader, dst io.Writer) error {
	b, err := io.ReadAll(orig)
	if err != nil {
		return err
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	_, err = dst.Write(first) // no newline: Commit must add it
	return err
}

func TestReplaceRotatesFirstAndKeepsMode(t *testing.T) {
	p := setup(t)
	tx, err := Begin(context.Background(), p, session.Kimi, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	res, err := tx.Replace(context.Background(), keepFirstLine)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "{\"role\": \"_checkpoint\", \"id\": 0}\n" {
		t.Fatalf("new file %q", got)
	}
	if filepath.Base(res.Rotation.Path) != "context_1.jsonl" {
		t.Fatalf("rotation %s", res.Rotation.Path)
	}
	rot, _ := os.ReadFile(res.Rotation.Path)
	if string(rot) != original {
		t.Fatalf("rotation does not hold the original: %q", rot)
	}
	for _, f := range []string{p, res.Rotation.Path} {
		fi, _ := os.Stat(f)
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("%s mode %v", f, fi.Mode().Perm())
		}
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".sessctl-tmp-") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

// Every failure point leaves all original bytes recoverable, in place or in a
// rotation, and never a half-written session file.
func TestFaultAtEveryStepLosesNothing(t *testing.T) {
	for _, step := range []string{StepWritten, StepRotated, StepRename} {
		t.Run(step, func(t *testing.T) {
			p := setup(t)
			tx, err := Begin(context.Background(), p, session.Kimi, Options{Fault: func(s string) error {
				if s == step {
					return errors.New("injected crash at " + s)
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			if _, err := tx.Replace(context.Background(), keepFirstLine); err == nil {
				t.Fatal("the injected fault did not stop the rewrite")
			}
			got, _ := os.ReadFile(p)
			if string(got) != original {
				t.Fatalf("the live file changed after a failure at %s: %q", step, got)
			}
			ents, _ := os.ReadDir(filepath.Dir(p))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".sessctl-tmp-") {
					t.Errorf("temp file left after failure at %s: %s", step, e.Name())
				}
				b, _ := os.ReadFile(filepath.Join(filepath.Dir(p), e.Name()))
				if strings.HasPrefix(e.Name(), "context_") && len(b) != 0 && string(b) != original {
					t.Errorf("rotation %s holds neither nothing nor the whole original", e.Name())
				}
			}
		})
	}
}

func TestLiveFileIsRefusedUnlessForced(t *testing.T) {
	p := setup(t)
	now := time.Now()
	os.Chtimes(p, now, now)
	if _, err := Begin(context.Background(), p, session.Kimi, Options{}); !errors.Is(err, safety.ErrLive) {
		t.Fatalf("live file: %v", err)
	}
	tx, err := Begin(context.Background(), p, session.Kimi, Options{Force: true})
	if err != nil {
		t.Fatalf("--force: %v", err)
	}
	tx.Close()
}

func TestSecondRewriterIsRefused(t *testing.T) {
	p := setup(t)
	tx, err := Begin(context.Background(), p, session.Claude, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if _, err := Begin(context.Background(), p, session.Claude, Options{}); !errors.Is(err, safety.ErrLocked) {
		t.Fatalf("second rewriter: %v", err)
	}
}

func TestChangeDuringRewriteAborts(t *testing.T) {
	p := setup(t)
	tx, err := Begin(context.Background(), p, session.Claude, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	_, err = tx.Replace(context.Background(), func(orig io.Reader, dst io.Writer) error {
		// the agent appends while we work
		f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		f.Write([]byte("\n{\"new\":1}\n"))
		f.Close()
		return keepFirstLine(orig, dst)
	})
	if !errors.Is(err, safety.ErrChanged) {
		t.Fatalf("Replace = %v, want ErrChanged", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != original+"\n{\"new\":1}\n" {
		t.Fatalf("file after abort: %q", got)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "context_*.jsonl")); len(m) != 0 {
		t.Fatalf("rotation made although nothing was replaced: %v", m)
	}
}

func TestSymlinkIsRefused(t *testing.T) {
	p := setup(t)
	link := filepath.Join(filepath.Dir(p), "link.jsonl")
	os.Symlink(p, link)
	if _, err := Begin(context.Background(), link, session.Claude, Options{}); err == nil {
		t.Fatal("rewrote through a symlink")
	}
}
