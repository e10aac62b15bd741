package main

import (
	"reflect"
	"testing"
	"time"
)

func TestInterspersed(t *testing.T) {
	app := newApp(&appEnv{getenv: func(string) string { return "" }, now: time.Now})
	cases := []struct{ in, want []string }{
		{[]string{"sessctl", "diff", "S", "--rotation", "1"}, []string{"sessctl", "diff", "--rotation", "1", "S"}},
		{[]string{"sessctl", "diff", "S", "--stat", "--rotation=2"}, []string{"sessctl", "diff", "--stat", "--rotation=2", "S"}},
		{[]string{"sessctl", "ls", "A", "--json", "B", "--agent", "kimi"}, []string{"sessctl", "ls", "--json", "--agent", "kimi", "A", "B"}},
		{[]string{"sessctl", "check", "--", "-odd-name.jsonl", "--json"}, []string{"sessctl", "check", "--", "-odd-name.jsonl", "--json"}},
		{[]string{"sessctl", "--version"}, []string{"sessctl", "--version"}},
		{[]string{"sessctl", "nosuch", "x", "--y"}, []string{"sessctl", "nosuch", "x", "--y"}},
		// a subcommand's own flags, after its arguments
		{[]string{"sessctl", "trash", "restore", "ID", "--json"}, []string{"sessctl", "trash", "restore", "--json", "ID"}},
		{[]string{"sessctl", "trash", "empty", "--older-than", "7d", "--dry-run"}, []string{"sessctl", "trash", "empty", "--older-than", "7d", "--dry-run"}},
	}
	for _, c := range cases {
		if got := interspersed(app, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}
