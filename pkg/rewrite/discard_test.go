package rewrite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

func TestDiscardDeletesTheRotation(t *testing.T) {
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
	if err := tx.Discard(res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(res.Rotation.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rotation still there: %v", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "{\"role\": \"_checkpoint\", \"id\": 0}\n" {
		t.Fatalf("new file %q", got)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range ents {
		if e.Name() != "context.jsonl" && e.Name() != ".context.jsonl.lock" {
			t.Logf("left in the directory: %s", e.Name())
		}
		if e.Name() == filepath.Base(res.Rotation.Path) {
			t.Errorf("rotation %s listed", e.Name())
		}
	}
}

func TestDiscardKeepsAChangedRotation(t *testing.T) {
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
	// a writer that held the old file open appends to it: the rotation
	f, err := os.OpenFile(res.Rotation.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"late\":1}\n")
	f.Close()
	err = tx.Discard(res)
	var re *safety.RefusalError
	if !errors.As(err, &re) {
		t.Fatalf("Discard of a changed rotation: %v, want a refusal", err)
	}
	if _, err := os.Lstat(res.Rotation.Path); err != nil {
		t.Errorf("changed rotation removed: %v", err)
	}
	// and with late bytes already known, it is kept without looking
	res.LateBytes = 11
	if err := tx.Discard(res); err == nil {
		t.Error("Discard with late bytes succeeded")
	}
}
