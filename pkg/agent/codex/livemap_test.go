package codex

import (
	"bytes"
	"context"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// mapRollouts are the Codex rollouts of the repository (the oracle's cases of
// the real Codex, the hand-written store), the shared samples when present,
// and a few internal/gen makes.
func mapRollouts(t *testing.T) []string {
	dirs := []string{"testdata", "../../../testdata/sessions/codex"}
	for _, d := range []string{"../../../../shared/samples/codex", "../../../../shared/samples/real-clients/codex-home"} {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		} else {
			t.Logf("%s not available: skipped", d)
		}
	}
	if gobin, err := exec.LookPath("go"); err == nil && !testing.Short() {
		out := filepath.Join(t.TempDir(), "gen")
		cmd := exec.Command(gobin, "run", "../../../internal/gen", "codex", "-out", out, "-size", "3MB", "-files", "4")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("internal/gen: %v\n%s", err, b)
		}
		dirs = append(dirs, out)
	}
	// a call without an output, and an output without its call
	own := filepath.Join(t.TempDir(), "rollout-2026-11-22T03-05-20-01a20137-32a6-77c1-b56b-38215cfaf5be.jsonl")
	if err := os.WriteFile(own, []byte(strings.Join(abortedRollout, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{own}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".jsonl") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestLiveMapAsHistory holds History through a rollout's live map to
// History reading the whole file: with Want taking every line, the same
// messages; taking none or about a third, the messages given are in the
// same order and the same as History's, and among them are every message
// of a line Want takes and every output Codex adds for a call left
// unanswered. The map must be used: a file that gets none fails.
func TestLiveMapAsHistory(t *testing.T) {
	ctx := context.Background()
	wants := map[string]func([]byte) bool{
		"every line": func([]byte) bool { return true },
		"no line":    func([]byte) bool { return false },
		"a third": func(raw []byte) bool {
			h := fnv.New32a()
			h.Write(raw)
			return h.Sum32()%3 == 0
		},
	}
	collect := func(to *[]session.Message) func(*session.Message) error {
		return func(m *session.Message) error {
			c := *m
			c.ToolCalls = append([]session.ToolCall(nil), m.ToolCalls...)
			c.ToolResults = append([]session.ToolResult(nil), m.ToolResults...)
			*to = append(*to, c)
			return nil
		}
	}
	files := mapRollouts(t)
	compared, synthetic := 0, 0
	defer func(n int) { session.LiveMapReadBuf = n }(session.LiveMapReadBuf)
	for k, path := range files {
		session.LiveMapReadBuf = []int{1 << 20, 300, 4096}[k%3]
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(raw, []byte("\n"))
		var full []session.Message
		if err := (Home{}).History(ctx, path, session.HistoryOptions{}, collect(&full)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, _, err := buildLiveMap(ctx, path, nil)
		if err != nil || b == nil {
			t.Fatalf("%s: no live map: %v", path, err)
		}
		kept := &session.LiveMapMemory{}
		kept.Keep(path, liveMapTag, b)
		for name, want := range wants {
			// through a map kept, and one made by this search (Want asked
			// during the replay)
			var got, made []session.Message
			for _, run := range []struct {
				lay *session.LiveMapMemory
				to  *[]session.Message
			}{{kept, &got}, {&session.LiveMapMemory{}, &made}} {
				done, err := Home{}.historyByLiveMap(ctx, path, session.HistoryOptions{Want: want, LiveMaps: run.lay}, collect(run.to))
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if !done {
					t.Fatalf("%s: no live map was made of it", path)
				}
			}
			if kept.Builds != 0 {
				t.Fatalf("%s: a kept map was made again", path)
			}
			if !reflect.DeepEqual(made, got) {
				t.Errorf("%s, want %s: through a map made now\n%+v\nthrough the kept one\n%+v", path, name, made, got)
			}
			compared += len(got)
			if name == "every line" {
				if !reflect.DeepEqual(got, full) {
					t.Errorf("%s: through the live map\n%+v\nreading the file\n%+v", path, got, full)
				}
				continue
			}
			j := 0
			for _, m := range full {
				line := bytes.TrimSuffix(lines[m.Line-1], []byte("\r"))
				must := want(line) || m.Synthetic
				if j < len(got) && reflect.DeepEqual(got[j], m) {
					j++
					continue
				}
				if must {
					t.Errorf("%s, want %s: line %d (%s) is missing, or out of order", path, name, m.Line, m.Role)
				}
			}
			if j != len(got) {
				t.Errorf("%s, want %s: %d messages History does not give, or not in its order", path, name, len(got)-j)
			}
		}
		for _, m := range full {
			if m.Synthetic {
				synthetic++
			}
		}
	}
	// without the shared samples: the repository's 12 rollouts (the
	// oracle's cases, the store, generated ones, the aborted one)
	if len(files) < 8 || compared < 200 || synthetic == 0 {
		t.Fatalf("only %d files, %d messages compared, %d outputs Codex adds", len(files), compared, synthetic)
	}
	t.Logf("%d files, %d messages compared, %d outputs Codex adds", len(files), compared, synthetic)
}

// TestReplayLiteAsFull: the replay's own decoder (replayHome, which leaves
// out the texts it does not read) gives the replay Home's decoder gives,
// on every rollout of mapRollouts.
func TestReplayLiteAsFull(t *testing.T) {
	files := mapRollouts(t)
	for _, path := range files {
		full, err := replayWith(context.Background(), path, Home{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		lite, err := replayWith(context.Background(), path, replayHome{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lite, full) {
			t.Errorf("%s: the replay's decoder gave\n%+v\nHome's\n%+v", path, lite, full)
		}
	}
	if len(files) < 8 {
		t.Fatalf("only %d rollouts", len(files))
	}
}
