package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// writeJSONStream must print the very bytes writeJSON prints.
func TestWriteJSONStreamIsWriteJSON(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // several encoders on any machine
	type elem struct {
		Key  string         `json:"key"`
		List []int          `json:"list"`
		Map  map[string]int `json:"map,omitempty"`
	}
	type report struct {
		By       string  `json:"by"`
		Groups   []elem  `json:"groups"`
		Note     string  `json:"note"`
		Sessions []*elem `json:"sessions"`
		Tail     int     `json:"tail"`
	}
	tricky := []elem{
		{Key: "plain"},
		{Key: "a\n  \"sessions\": [] inside a string, <html> & ünïcode", List: []int{1, 2}},
		{Key: "", List: []int{}, Map: map[string]int{"b": 2, "a": 1}},
	}
	many := make([]elem, 1000)
	for i := range many {
		many[i].Key, many[i].List = strconv.Itoa(i), make([]int, i%5)
	}
	for _, c := range []struct {
		name             string
		groups, sessions []elem
	}{
		{"empty", nil, nil},
		{"one each", tricky[:1], tricky[1:2]},
		{"many", tricky, append(tricky, tricky...)},
		// past a batch on each of several encoders, each element its own
		{"hundreds", nil, many},
	} {
		full := report{By: "session", Note: "\"groups\": []", Tail: 7, Groups: []elem{}, Sessions: []*elem{}}
		full.Groups = append(full.Groups, c.groups...)
		for i := range c.sessions {
			full.Sessions = append(full.Sessions, &c.sessions[i])
		}
		var want, got bytes.Buffer
		if err := writeJSON(&want, full); err != nil {
			t.Fatal(err)
		}
		head := full
		head.Groups, head.Sessions = []elem{}, []*elem{}
		err := writeJSONStream(&got, head,
			jsonArray{"groups", len(full.Groups), func(i int) (any, error) { return full.Groups[i], nil }},
			jsonArray{"sessions", len(full.Sessions), func(i int) (any, error) { return full.Sessions[i], nil }})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: streamed\n%s\nwant\n%s", c.name, got.String(), want.String())
		}
	}
}

// An element that cannot be encoded stops the stream with its error,
// whichever encoder meets it, and elements are asked for one at a time.
func TestWriteJSONStreamError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, bad := range []int{0, 5, elemBatch, 700, 999} {
		busy := false
		asked := 0
		err := writeJSONStream(io.Discard, struct {
			A []any `json:"a"`
		}{A: []any{}}, jsonArray{"a", 1000, func(i int) (any, error) {
			if busy {
				t.Error("elem called while another call runs")
			}
			busy = true
			defer func() { busy = false }()
			asked++
			if i == bad {
				return math.NaN(), nil
			}
			return i, nil
		}})
		if err == nil || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("element %d: err %v, want NaN's", bad, err)
		}
		if asked > bad+elemBatch*(3*runtime.GOMAXPROCS(0)+2) {
			t.Errorf("element %d: %d asked for after it", bad, asked-bad-1)
		}
	}
}

// An element that cannot be had (a session that cannot be read back)
// stops the stream with its error, and no element after it is written, in
// the one-encoder path and the parallel one.
func TestWriteJSONStreamElemError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	lost := errors.New("lost")
	for _, c := range []struct{ n, bad int }{{10, 3}, {1000, 0}, {1000, 517}} {
		var out bytes.Buffer
		err := writeJSONStream(&out, struct {
			A []any `json:"a"`
		}{A: []any{}}, jsonArray{"a", c.n, func(i int) (any, error) {
			if i == c.bad {
				return nil, lost
			}
			return fmt.Sprintf("e%d", i), nil
		}})
		if !errors.Is(err, lost) {
			t.Errorf("%d elements, %d lost: err %v", c.n, c.bad, err)
		}
		for i := c.bad; i < c.n; i++ {
			if strings.Contains(out.String(), fmt.Sprintf(`"e%d"`, i)) {
				t.Errorf("%d elements, %d lost: element %d written after it", c.n, c.bad, i)
				break
			}
		}
	}
}

func TestWriteJSONStreamMissingField(t *testing.T) {
	var out bytes.Buffer
	err := writeJSONStream(&out, struct {
		A []int `json:"a"`
	}{A: []int{1}}, jsonArray{"a", 1, func(int) (any, error) { return 1, nil }})
	if err == nil {
		t.Fatal("a field that is not empty was accepted")
	}
}

// TestJSONArrayWriterMatchesWriteJSON: the streamed array is the bytes of
// the whole slice written at once, for no, one and several elements.
func TestJSONArrayWriterMatchesWriteJSON(t *testing.T) {
	rows := []lsRow{{Agent: "claude", ID: "a", Title: "<x> & \"y\"\n", Files: []session.File{{Path: "/p", Role: session.FileMain}}},
		{Agent: "codex", ID: "b"}, {Agent: "kimi", ID: "c", Error: "e"}}
	for n := 0; n <= len(rows); n++ {
		var want, got bytes.Buffer
		if err := writeJSON(&want, append([]lsRow{}, rows[:n]...)); err != nil {
			t.Fatal(err)
		}
		a := newJSONArrayWriter(&got)
		for i := range rows[:n] {
			a.add(&rows[i])
		}
		if err := a.close(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d rows:\n%s\nwant\n%s", n, got.String(), want.String())
		}
	}
}

// tablewriterTable draws rows with newTable through trimWriter.
func tablewriterTable(header []string, rows [][]string) string {
	var out bytes.Buffer
	tw := trimWriter(&out)
	tb := newTable(tw, header...)
	for _, r := range rows {
		tb.Append(r)
	}
	tb.Render()
	flushTable(tw)
	return out.String()
}

// TestDrawTableMatchesTablewriter: drawTable writes the bytes of newTable
// through trimWriter, on cells of every kind ls shows: wide characters,
// emoji, colour escapes, escapes of control characters, empty cells.
func TestDrawTableMatchesTablewriter(t *testing.T) {
	col := colorer{true}
	cells := []string{"", "a", "claude", "日本語のタイトル", "émoji 👍 ok", col.red("3"), col.red("error: bad"), "…/src/web",
		line("tab\there\x1b[31m"), "1,234", "12.5 MiB", "3d ago", "ＡＢＣ", "a\u0301e", "x" + strings.Repeat("y", 40)}
	header := []string{"AGENT", "ID", "PROJECT", "TITLE", "UPDATED"}
	const reset = "\x1b[0m"
	for n := 0; n < 40; n += 7 {
		var rows [][]string
		for i := range n {
			var r []string
			for j := range header {
				r = append(r, cells[(i*7+j*3)%len(cells)])
			}
			rows = append(rows, r)
		}
		want := tablewriterTable(header, rows)
		var got bytes.Buffer
		if err := drawTable(&got, header, rows); err != nil {
			t.Fatal(err)
		}
		// tablewriter starts the cell after a coloured one with a
		// redundant reset of its own (each coloured cell ends with one),
		// and pads a coloured last cell with spaces between resets, which
		// trimWriter cannot trim; the rest is the same bytes
		norm := func(s string) string {
			ls := strings.Split(strings.ReplaceAll(s, reset, ""), "\n")
			for i := range ls {
				ls[i] = strings.TrimRight(ls[i], " ")
			}
			return strings.Join(ls, "\n")
		}
		if g, w := norm(got.String()), norm(want); g != w {
			gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Errorf("%d rows, line %d:\n%q\n%q", n, i, gl[i], wl[i])
				}
			}
		}
		for _, l := range strings.Split(got.String(), "\n") {
			if strings.Count(l, "\x1b[31m") != strings.Count(l, reset) {
				t.Errorf("colour not reset in %q", l)
			}
		}
	}
	// without colour, byte for byte
	rows := [][]string{{"claude", "日本語", "x"}, {"", "émoji 👍", "ＡＢＣ"}, {"a", "", ""}}
	var got bytes.Buffer
	drawTable(&got, []string{"A", "B", "C"}, rows)
	if want := tablewriterTable([]string{"A", "B", "C"}, rows); got.String() != want {
		t.Errorf("without colour:\n%s\nwant\n%s", got.String(), want)
	}
}
