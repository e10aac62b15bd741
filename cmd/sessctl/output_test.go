package main

import (
	"bytes"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// writeJSONStream must print the very bytes writeJSON prints.
func TestWriteJSONStreamIsWriteJSON(t *testing.T) {
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
	for _, c := range []struct {
		name             string
		groups, sessions []elem
	}{
		{"empty", nil, nil},
		{"one each", tricky[:1], tricky[1:2]},
		{"many", tricky, append(tricky, tricky...)},
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
			jsonArray{"groups", len(full.Groups), func(i int) any { return full.Groups[i] }},
			jsonArray{"sessions", len(full.Sessions), func(i int) any { return full.Sessions[i] }})
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: streamed\n%s\nwant\n%s", c.name, got.String(), want.String())
		}
	}
}

func TestWriteJSONStreamMissingField(t *testing.T) {
	var out bytes.Buffer
	err := writeJSONStream(&out, struct {
		A []int `json:"a"`
	}{A: []int{1}}, jsonArray{"a", 1, func(int) any { return 1 }})
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
