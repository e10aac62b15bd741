package rewrite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/safety"
	"github.com/sessctl/sessctl/pkg/session"
)

// appender is an agent that keeps its session file open for appending, in
// its own goroutine; the rewrite's Fault hook asks it to write at a given
// step and waits until it has (deterministic, unlike a free-running writer).
type appender struct {
	f    *os.File
	ask  chan string
	done chan error
}

func newAppender(t *testing.T, path string) *appender {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := &appender{f: f, ask: make(chan string), done: make(chan error)}
	go func() {
		for line := range a.ask {
			_, err := a.f.WriteString(line)
			a.done <- err
		}
	}()
	t.Cleanup(func() { close(a.ask); f.Close() })
	return a
}

func (a *appender) write(line string) error {
	a.ask <- line
	return <-a.done
}

// at returns a Fault hook that makes the appender write line at step.
func (a *appender) at(step, line string) func(string) error {
	return func(s string) error {
		if s == step {
			return a.write(line)
		}
		return nil
	}
}

// noAlias fails when any other name in the directory is the live file's
// inode (a rotation that would grow with the session) or a temp file is left.
func noAlias(t *testing.T, p string) {
	t.Helper()
	live, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range ents {
		q := filepath.Join(filepath.Dir(p), e.Name())
		if q == p {
			continue
		}
		if strings.HasPrefix(e.Name(), ".sessctl-tmp-") {
			t.Errorf("temp file left: %s", e.Name())
		}
		if fi, err := os.Stat(q); err == nil && os.SameFile(fi, live) {
			t.Errorf("%s is a second name of the live file", e.Name())
		}
	}
}

// With --force and a writer appending at any step before the rename, the
// rewrite is a safety refusal (exit 3), the live file keeps the original and
// the appended line, and no rotation is left that is the live file itself.
// The step "written" comes just before the rotation is linked: the append
// lands between the last look at the file and the link, the case that used
// to fail with "rotation does not hold the whole original" (exit 2) and
// leave the rotation as a hard link to the live file.
func TestAppendDuringForcedRewriteIsARefusal(t *testing.T) {
	const late = "{\"role\":\"user\",\"content\":\"late\"}\n"
	for _, step := range []string{StepWritten, StepRotated, StepRename} {
		t.Run(step, func(t *testing.T) {
			p := setup(t)
			w := newAppender(t, p)
			tx, err := Begin(context.Background(), p, session.Kimi, Options{Force: true, Fault: w.at(step, late)})
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			res, err := tx.Replace(context.Background(), keepFirstLine)
			var r *safety.RefusalError
			if !errors.Is(err, safety.ErrChanged) || !errors.As(err, &r) {
				t.Fatalf("Replace = %v, want an ErrChanged refusal", err)
			}
			if res != nil {
				t.Errorf("a result after a refusal: %+v", res)
			}
			if got, _ := os.ReadFile(p); string(got) != original+late {
				t.Fatalf("live file %q", got)
			}
			noAlias(t, p)
			if m, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "context_*.jsonl")); len(m) != 0 {
				t.Errorf("rotation left although nothing was replaced: %v", m)
			}
			// and the writer goes on writing into the live file
			if err := w.write(late); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); string(got) != original+late+late {
				t.Fatalf("live file after a second append %q", got)
			}
		})
	}
}

// A writer that keeps its file open (Kimi, Codex) and appends after the
// rename writes into the replaced inode, which is now the rotation: the
// rewrite reports those bytes and names the rotation.
func TestLateAppendAfterForcedRewriteIsReported(t *testing.T) {
	const late = "{\"role\":\"user\",\"content\":\"late\"}\n"
	p := setup(t)
	w := newAppender(t, p)
	tx, err := Begin(context.Background(), p, session.Kimi, Options{Force: true, Fault: w.at(StepRenamed, late)})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	res, err := tx.Replace(context.Background(), keepFirstLine)
	if err != nil {
		t.Fatal(err)
	}
	if res.LateBytes != int64(len(late)) || !res.LateInRotation {
		t.Fatalf("late bytes %d (in rotation %v), want %d", res.LateBytes, res.LateInRotation, len(late))
	}
	rot, _ := os.ReadFile(res.Rotation.Path)
	if string(rot) != original+late {
		t.Fatalf("rotation %q", rot)
	}
	if got, _ := os.ReadFile(p); string(got) != "{\"role\": \"_checkpoint\", \"id\": 0}\n" {
		t.Fatalf("new file %q", got)
	}
	notes := tx.Notes(res)
	if len(notes) != 1 || !strings.Contains(notes[0], res.Rotation.Path) || !strings.Contains(notes[0], fmt.Sprintf("%d bytes", len(late))) {
		t.Fatalf("notes %q", notes)
	}
	// without a late append there is nothing to say
	p2 := setup(t)
	tx2, err := Begin(context.Background(), p2, session.Kimi, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Close()
	res2, err := tx2.Replace(context.Background(), keepFirstLine)
	if err != nil || res2.LateBytes != 0 || len(tx2.Notes(res2)) != 0 {
		t.Fatalf("%v %+v %q", err, res2, tx2.Notes(res2))
	}
}
