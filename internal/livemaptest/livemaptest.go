// Package livemaptest holds a home's History through a live map to its
// History without one: the test of every home whose client sends its
// messages in file order and that keeps live maps (Codex, Kimi CLI; the
// Claude Code home, whose History honours Want without a map, is held to
// that exactly).
package livemaptest

import (
	"bytes"
	"context"
	"hash/fnv"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// Wants are the predicates a home's test searches with: every line, none,
// and about a third of them.
var Wants = map[string]func([]byte) bool{
	"every line": func([]byte) bool { return true },
	"no line":    func([]byte) bool { return false },
	"a third": func(raw []byte) bool {
		h := fnv.New32a()
		h.Write(raw)
		return h.Sum32()%3 == 0
	},
}

// Collect appends a copy of each message to *to.
func Collect(to *[]session.Message) func(*session.Message) error {
	return func(m *session.Message) error {
		c := *m
		c.ToolCalls = append([]session.ToolCall(nil), m.ToolCalls...)
		c.ToolResults = append([]session.ToolResult(nil), m.ToolResults...)
		*to = append(*to, c)
		return nil
	}
}

// Check searches the file at path with each of wants, through the live map
// b (kept under tag) and through one the search makes, and holds what they
// give to History without Want: the two the same; with every line wanted,
// History's messages; otherwise History's messages in its order, among
// them every message of a line want takes and every one must says (nil:
// none). It returns History's messages and how many messages were
// compared. k chooses the size of the forward read's buffer (smaller than
// the lines, a little larger, 1 MiB).
func Check(t *testing.T, conv session.Conversation, path, tag string, b []byte, wants map[string]func([]byte) bool, must func(*session.Message) bool, k int) (full []session.Message, compared int) {
	t.Helper()
	ctx := context.Background()
	if _, ok := session.DecodeLiveMap(tag, b); !ok {
		t.Fatalf("%s: no live map was made of it", path)
	}
	defer func(n int) { session.LiveMapReadBuf = n }(session.LiveMapReadBuf)
	session.LiveMapReadBuf = []int{1 << 20, 300, 4096}[k%3]
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(raw, []byte("\n"))
	if err := conv.History(ctx, path, session.HistoryOptions{}, Collect(&full)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	kept := &Memory{}
	kept.Keep(path, tag, b)
	for name, want := range wants {
		var got, made []session.Message
		now := &Memory{}
		for _, run := range []struct {
			maps *Memory
			to   *[]session.Message
		}{{kept, &got}, {now, &made}} {
			if err := conv.History(ctx, path, session.HistoryOptions{Want: want, LiveMaps: run.maps}, Collect(run.to)); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		if kept.Builds != 0 || kept.Uses == 0 || now.Builds != 1 {
			t.Fatalf("%s: the kept map was used %d times and made %d times, the new one made %d times", path, kept.Uses, kept.Builds, now.Builds)
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
		for i := range full {
			m := &full[i]
			if j < len(got) && reflect.DeepEqual(got[j], *m) {
				j++
				continue
			}
			if want(bytes.TrimSuffix(lines[m.Line-1], []byte("\r"))) || must != nil && must(m) {
				t.Errorf("%s, want %s: line %d (%s) is missing, or out of order", path, name, m.Line, m.Role)
			}
		}
		if j != len(got) {
			t.Errorf("%s, want %s: %d messages History does not give, or not in its order", path, name, len(got)-j)
		}
	}
	return full, compared
}

// Memory is a session.LiveMapCache in memory, safe for concurrent use, that
// counts the maps it made and those it gave back.
type Memory struct {
	mu           sync.Mutex
	m            map[string][]byte
	Builds, Uses int
}

// LiveMap implements session.LiveMapCache.
func (c *Memory) LiveMap(path, tag string, build func() ([]byte, error)) ([]byte, error) {
	k := path + "\x00" + tag
	c.mu.Lock()
	b, ok := c.m[k]
	if ok {
		c.Uses++
	}
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := build()
	if err != nil {
		return nil, err
	}
	c.Keep(path, tag, b)
	c.mu.Lock()
	c.Builds++
	c.mu.Unlock()
	return b, nil
}

// Keep stores b as the map of the file at path under tag.
func (c *Memory) Keep(path, tag string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]byte{}
	}
	c.m[path+"\x00"+tag] = b
}
