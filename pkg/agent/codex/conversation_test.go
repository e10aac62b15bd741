package codex

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"testing"

	"github.com/sessctl/sessctl/internal/oracle"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestInjectedContext: the oracle's filter and decoding agree: a user
// message is injected context exactly when it is not a user turn, and
// show marks it injected (the rule cannot drift apart from the flag).
func TestInjectedContext(t *testing.T) {
	texts := map[string]bool{
		"<environment_context>\n  <cwd>/x</cwd>\n</environment_context>": true,
		"  <user_instructions>be brief</user_instructions>":              true,
		"# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>…":             true,
		"<skills_instructions>…</skills_instructions>":                   true,
		"<skill>\n<name>x</name></skill>":                                true,
		"<user_shell_command>ls</user_shell_command>":                    true,
		"<turn_aborted>The user interrupted</turn_aborted>":              true,
		"<subagent_notification>done</subagent_notification>":            true,
		"list the files":                    false,
		"please read <environment_context>": false,
	}
	for text, want := range texts {
		if got := (Home{}).InjectedContext(session.RoleUser, text); got != want {
			t.Errorf("InjectedContext(user, %q) = %v, want %v", text, got, want)
		}
		b, _ := json.Marshal(text)
		r := decodeLine(t, `{"timestamp":"2026-11-22T02:59:33.139Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":`+string(b)+`}]}}`)
		if r.UserPrompt == want {
			t.Errorf("%q: decoded as a user turn %v, injected %v", text, r.UserPrompt, want)
		}
		if m := message(&r); m.Injected != want {
			t.Errorf("%q: show's injected flag %v, the oracle's rule %v", text, m.Injected, want)
		}
	}
	for _, role := range []session.Role{session.RoleDeveloper, session.RoleSystem} {
		if !(Home{}).InjectedContext(role, "anything") {
			t.Errorf("%s messages are injected context", role)
		}
	}
	for _, role := range []session.Role{session.RoleAssistant, session.RoleTool} {
		if (Home{}).InjectedContext(role, "<environment_context>") {
			t.Errorf("%s items are never injected context", role)
		}
	}
}

// TestOracleCases replays resumes of the real Codex 0.169.0 that the e2e
// oracle kept (testdata/oracle, README.md there): the history this home
// predicts for each file must be what the client sent next.
func TestOracleCases(t *testing.T) {
	dir := filepath.Join("testdata", "oracle")
	cases, err := oracle.LoadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases in testdata/oracle")
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			c := cases[name]
			if c.Agent != Agent {
				t.Fatalf("a %s case", c.Agent)
			}
			d, err := oracle.Replay(context.Background(), dir, c)
			if err != nil {
				t.Fatal(err)
			}
			if d != "" {
				t.Errorf("the client sent something else:\n%s", d)
			}
		})
	}
}
