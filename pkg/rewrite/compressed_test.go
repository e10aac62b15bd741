package rewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

const rolloutName = "rollout-2026-11-01T11-00-00-01a20000-0000-7000-8000-00000000c0de.jsonl"

// setupCompressed writes original, zstd-compressed, as a cold Codex
// rollout.jsonl.zst (mode 0640) and returns its path and its bytes.
func setupCompressed(t *testing.T) (string, []byte) {
	t.Helper()
	enc, _ := zstd.NewWriter(nil)
	z := enc.EncodeAll([]byte(original), nil)
	p := filepath.Join(t.TempDir(), rolloutName+".zst")
	if err := os.WriteFile(p, z, 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-8 * 24 * time.Hour)
	os.Chtimes(p, old, old)
	return p, z
}

// A compressed rollout is rewritten as Codex changes one: the new content is
// the plain file, the .zst is kept byte for byte as the rotation, and the
// .zst name is gone.
func TestCompressedBecomesPlainAndIsKept(t *testing.T) {
	p, z := setupCompressed(t)
	tx, err := Begin(context.Background(), p, session.Codex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	res, err := tx.Replace(context.Background(), keepFirstLine)
	if err != nil {
		t.Fatal(err)
	}
	plain := strings.TrimSuffix(p, ".zst")
	if res.NewPath != plain || tx.Target() != plain {
		t.Errorf("new path %q, target %q, want %q", res.NewPath, tx.Target(), plain)
	}
	got, err := os.ReadFile(plain)
	if err != nil || string(got) != "{\"role\": \"_checkpoint\", \"id\": 0}\n" {
		t.Fatalf("plain file %q, %v", got, err)
	}
	if fi, _ := os.Stat(plain); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the compressed file's 0640", fi.Mode().Perm())
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the .zst is still there (%v): it would be a stale copy", err)
	}
	if res.Rotation == nil || filepath.Base(res.Rotation.Path) != rolloutName+".zst.1" {
		t.Fatalf("rotation %+v, want %s.zst.1", res.Rotation, rolloutName)
	}
	if rot, _ := os.ReadFile(res.Rotation.Path); string(rot) != string(z) {
		t.Error("the rotation is not the compressed original byte for byte")
	}
	notes := strings.Join(tx.Notes(res), "\n")
	if !strings.Contains(notes, "now the plain") || !strings.Contains(notes, ".zst.1") {
		t.Errorf("notes do not say where the session went: %q", notes)
	}
	// the next rewrite of the plain file numbers on from the .zst rotation
	tx.Close()
	os.Chtimes(plain, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	tx2, err := Begin(context.Background(), plain, session.Codex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Close()
	res2, err := tx2.Replace(context.Background(), keepFirstLine)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(res2.Rotation.Path) != rolloutName+".2" {
		t.Errorf("second rotation %s, want %s.2", res2.Rotation.Path, rolloutName)
	}
}

func TestCompressedFaultAtEveryStepLosesNothing(t *testing.T) {
	for _, step := range []string{StepWritten, StepRotated, StepRename} {
		t.Run(step, func(t *testing.T) {
			p, z := setupCompressed(t)
			tx, err := Begin(context.Background(), p, session.Codex, Options{Fault: func(s string) error {
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
			if got, _ := os.ReadFile(p); string(got) != string(z) {
				t.Fatalf("the compressed file changed after a failure at %s", step)
			}
			ents, _ := os.ReadDir(filepath.Dir(p))
			for _, e := range ents {
				if e.Name() != filepath.Base(p) && !strings.HasSuffix(e.Name(), ".sessctl.lock") {
					t.Errorf("left after a failure at %s: %s", step, e.Name())
				}
			}
		})
	}
}

// When the plain form exists, it is the session: the .zst is not rewritten.
func TestCompressedWithPlainBesideIsRefused(t *testing.T) {
	p, z := setupCompressed(t)
	plain := strings.TrimSuffix(p, ".zst")
	os.WriteFile(plain, []byte(original), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(plain, old, old)
	_, err := Begin(context.Background(), p, session.Codex, Options{})
	var ref *safety.RefusalError
	if !errors.As(err, &ref) {
		t.Fatalf("err %v, want a refusal", err)
	}
	if got, _ := os.ReadFile(p); string(got) != string(z) {
		t.Error("the compressed file changed")
	}
	if got, _ := os.ReadFile(plain); string(got) != original {
		t.Error("the plain file changed")
	}
}

// A damaged stream is never rewritten: what cannot be read would be lost
// from the session file.
func TestDamagedCompressedIsNotRewritten(t *testing.T) {
	p, z := setupCompressed(t)
	cut := z[:len(z)-5]
	os.WriteFile(p, cut, 0o640)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	tx, err := Begin(context.Background(), p, session.Codex, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	_, err = tx.Replace(context.Background(), keepFirstLine)
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("err %v, want a damaged-stream error", err)
	}
	if got, _ := os.ReadFile(p); string(got) != string(cut) {
		t.Error("the compressed file changed")
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range ents {
		if e.Name() != filepath.Base(p) && !strings.HasSuffix(e.Name(), ".sessctl.lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
