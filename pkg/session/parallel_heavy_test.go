//go:build heavy

package session_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestParallelReadMatchesSerial: the parallel read hands over the records
// of the one-core read, in order, with batches cut by size and by count,
// huge lines alone and back to back, corrupt lines and a torn end; and an
// error from fn stops it.
func TestParallelReadMatchesSerial(t *testing.T) {
	var b bytes.Buffer
	huge := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("big é ", 400_000) + `"}}` + "\n"
	for i := range 5000 {
		switch {
		case i == 1200, i == 3000, i == 3001:
			b.WriteString(huge)
		case i%97 == 0:
			b.WriteString("{bad\n\n")
		default:
			fmt.Fprintf(&b, `{"type":"assistant","uuid":"u%d","message":{"role":"assistant","model":"m","content":[{"type":"text","text":"t%d"}],"usage":{"input_tokens":%d}}}`+"\n", i, i, i)
		}
	}
	b.WriteString(`{"type":"user","mess`)
	data := b.Bytes()
	f := session.FormatFor(session.Claude)
	collect := func(read func(fn func(*session.Record) error) error) []session.Record {
		var out []session.Record
		if err := read(func(r *session.Record) error {
			c := *r
			c.Line = r.Line.Clone()
			out = append(out, c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := collect(func(fn func(*session.Record) error) error { return session.ReadSerial(bytes.NewReader(data), f, fn) })
	got := collect(func(fn func(*session.Record) error) error { return session.ReadRecords(bytes.NewReader(data), f, fn) })
	if len(got) != len(want) || len(want) < 5000 {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].Line, want[i].Line) || got[i].Kind != want[i].Kind || got[i].Text != want[i].Text ||
			got[i].UUID != want[i].UUID || !reflect.DeepEqual(got[i].Usage, want[i].Usage) {
			t.Fatalf("record %d differs:\n%+v\n%+v", i, got[i].Line, want[i].Line)
		}
	}
	stop := errors.New("stop here")
	n := 0
	err := session.ReadRecords(bytes.NewReader(data), f, func(r *session.Record) error {
		if n++; r.Line.Num == 3001 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3001 {
		t.Errorf("stopped with %v after %d records", err, n)
	}
}
