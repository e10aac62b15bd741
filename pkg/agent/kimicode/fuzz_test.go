package kimicode

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// FuzzWire: any bytes as a wire decode and fold without panicking, and the
// live history never lists a message that is not live.
func FuzzWire(f *testing.F) {
	for _, p := range []string{"testdata/compacted.wire.jsonl"} {
		fh, err := os.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if len(sc.Bytes()) < 4000 {
				f.Add(append([]byte(nil), sc.Bytes()...))
			}
		}
		fh.Close()
	}
	f.Add([]byte(`{"type":"context.undo","count":1}`))
	f.Add([]byte(`{"type":"context.apply_compaction","summary":{"role":"user","content":[{"type":"text","text":"s"}]},"count":2}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "wire.jsonl")
		// the line twice, to exercise the fold's state across records
		if err := os.WriteFile(path, append(append(append(b, '\n'), b...), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		err := Home{}.History(context.Background(), path, session.HistoryOptions{}, func(m *session.Message) error {
			if m.State != session.Live {
				t.Errorf("live history lists a %s message", m.State)
			}
			return nil
		})
		if err != nil {
			return
		}
		Home{}.History(context.Background(), path, session.HistoryOptions{All: true}, func(*session.Message) error { return nil })
		Home{}.Turns(context.Background(), path)
	})
}
