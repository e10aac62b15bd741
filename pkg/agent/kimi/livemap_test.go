package kimi

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/livemaptest"
	"github.com/sessctl/sessctl/pkg/session"
)

// ownContext is a context file with what a live map must keep straight: a
// call and its result (named after it), a line of invalid UTF-8 (read as
// Python reads it), a message Kimi rejects, checkpoints, CRLF, and a last
// line without a terminator.
var ownContext = "{\"role\": \"_system_prompt\", \"content\": \"sys\"}\n" +
	"{\"role\": \"_checkpoint\", \"id\": 0}\n" +
	"{\"role\":\"user\",\"content\":\"find the needle\"}\n" +
	"{\"role\":\"assistant\",\"content\":[],\"tool_calls\":[{\"type\":\"function\",\"id\":\"t1\",\"function\":{\"name\":\"Grep\",\"arguments\":\"{}\"}}]}\n" +
	"{\"role\":\"tool\",\"content\":\"the needle is here\",\"tool_call_id\":\"t1\"}\n" +
	"{\"role\": \"_checkpoint\", \"id\": 1}\r\n" +
	"{\"role\":\"user\",\"content\":\"bad \xff byte, needle\"}\n" +
	"{\"role\":\"assistant\",\"content\":5}\n" +
	"{\"role\":\"tool\",\"content\":\"again\",\"tool_call_id\":\"t1\"}\n" +
	"{\"role\":\"assistant\",\"content\":\"done with the needle\"}"

// contexts are Kimi CLI context files: the repository's, the shared
// samples' when present, and ownContext.
func contexts(t *testing.T) []string {
	own := filepath.Join(t.TempDir(), "context.jsonl")
	if err := os.WriteFile(own, []byte(ownContext), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{own}
	dirs := []string{"../../../testdata/sessions/kimi"}
	if d := filepath.Join("..", "..", "..", "..", "shared", "samples", "kimi"); exists(d) {
		dirs = append(dirs, d)
	} else {
		t.Logf("%s not available: skipped", d)
	}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return err
			}
			// context files, and the edge cases (context files by another name)
			if strings.HasPrefix(e.Name(), "context") || strings.Contains(p, "edge-cases") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestLiveMapAsHistory holds History through a context file's live map to
// History reading the file (livemaptest.Check), also for a search of the
// word the own context is about. The map must be used: a file that gets
// none fails.
func TestLiveMapAsHistory(t *testing.T) {
	wants := map[string]func([]byte) bool{"needle": func(raw []byte) bool { return bytes.Contains(raw, []byte("needle")) }}
	for name, w := range livemaptest.Wants {
		wants[name] = w
	}
	files := contexts(t)
	compared := 0
	for k, path := range files {
		b, _, err := buildLiveMap(context.Background(), path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		_, n := livemaptest.Check(t, Home{}, path, liveMapTag, b, wants, nil, k)
		compared += n
	}
	if len(files) < 3 || compared < 20 {
		t.Fatalf("only %d files, %d messages compared", len(files), compared)
	}
	t.Logf("%d files, %d messages compared", len(files), compared)
}

// TestLiveMapOwnContext pins what the search of ownContext gives: the
// result of the line with the needle comes with its call (its name), the
// line of invalid UTF-8 is read as Kimi reads it, the rejected message is
// left out, and each message has its checkpoint.
func TestLiveMapOwnContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "context.jsonl")
	if err := os.WriteFile(path, []byte(ownContext), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := (Home{}).History(context.Background(), path, session.HistoryOptions{
		Want: func(raw []byte) bool {
			return bytes.Contains(raw, []byte("needle is")) || bytes.Contains(raw, []byte("byte"))
		},
		LiveMaps: &livemaptest.Memory{},
	}, func(m *session.Message) error {
		d := string(m.Role) + "@" + string(rune('0'+m.Turn)) + ":" + m.Text
		for _, c := range m.ToolCalls {
			d += " call " + c.ID + " " + c.Name
		}
		got = append(got, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"assistant@0: call t1 Grep", "tool@0:the needle is here", "user@1:bad \ufffd byte, needle", "tool@1:again"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
