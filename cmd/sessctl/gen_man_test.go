//go:build !urfave_cli_no_docs

package main

import (
	"strings"
	"testing"
)

// The man page names every command and is a section 1 page.
func TestGenMan(t *testing.T) {
	out, errOut, code := runCLI(t, "gen-man")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, ".nh\n.TH sessctl 1\n") {
		t.Fatalf("exit %d, stderr %q, start %q", code, errOut, out[:min(len(out), 40)])
	}
	for _, c := range allCommands(&appEnv{}) {
		if !c.Hidden && !strings.Contains(out, "\n.SH "+c.Name+"\n") {
			t.Errorf("the man page has no section for %s", c.Name)
		}
	}
	if strings.Contains(out, "gen-man") {
		t.Error("the hidden gen-man command is in the page")
	}
}
