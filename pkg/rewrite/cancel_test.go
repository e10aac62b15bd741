package rewrite

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// untouched fails unless p holds the original and nothing else is in its
// directory but the lock file: no temp file, no rotation.
func untouched(t *testing.T, p string) {
	t.Helper()
	if got, _ := os.ReadFile(p); string(got) != original {
		t.Fatalf("session file %q", got)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range ents {
		if e.Name() != filepath.Base(p) && !strings.HasSuffix(e.Name(), ".sessctl.lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// Ctrl-C (a cancelled context) at any step, or while the new content is
// being written, rolls the rewrite back: the original untouched, no temp
// file, no rotation.
func TestCancelledRewriteRollsBack(t *testing.T) {
	for _, step := range []string{StepWritten, StepRotated, StepRename, "mid-write"} {
		t.Run(step, func(t *testing.T) {
			p := setup(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tx, err := Begin(ctx, p, session.Claude, Options{Fault: func(s string) error {
				if s == step {
					cancel()
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			_, err = tx.Replace(ctx, func(orig io.Reader, dst io.Writer) error {
				if step != "mid-write" {
					return keepFirstLine(orig, dst)
				}
				buf := make([]byte, 10)
				if _, err := io.ReadFull(orig, buf); err != nil {
					return err
				}
				dst.Write(buf)
				cancel() // the user presses Ctrl-C halfway
				_, err := io.Copy(dst, orig)
				return err
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Replace = %v, want context.Canceled", err)
			}
			untouched(t, p)
		})
	}
}

func TestCancelledBeforeBeginChangesNothing(t *testing.T) {
	p := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Begin(ctx, p, session.Claude, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Begin = %v", err)
	}
	untouched(t, p)
}
