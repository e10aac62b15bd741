package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakesecret"
)

// A prompt holds fake secrets (internal/fakesecret: assembled at run time,
// never real). `sessctl redact` rewrites the session the real client wrote;
// the real client resumes it, and the model receives the redacted text and
// nothing of the secrets. Every resume runs the oracle (ClaudeResume,
// CodexResume): what `sessctl show` predicts of the redacted file is what
// the client sends. docs/redact.md.

// redactSecrets are the fake secrets the prompts carry, and the
// placeholders they become.
func redactSecrets() map[string]string {
	return map[string]string{
		fakesecret.Get("github-pat"):    "[REDACTED:github-pat]",
		fakesecret.Get("anthropic-key"): "[REDACTED:anthropic-api-key]",
	}
}

func secretPrompt(turn string) string {
	return "NOTOOL " + turn + ": push with " + fakesecret.Get("github-pat") + " and call with " + fakesecret.Get("anthropic-key") + " please"
}

// redactClean runs `sessctl redact --force` (the session was written
// seconds ago) on path and checks what it left: no secret in the file,
// the original in the rotation, every line valid JSON, and each changed
// line exactly the original line with its secrets replaced (only string
// values changed, in the client's own serialisation).
func redactClean(t *testing.T, h *Harness, path string) {
	t.Helper()
	before := h.ReadFile(path)
	secrets := redactSecrets()
	for s := range secrets {
		if !bytes.Contains(before, []byte(s)) {
			t.Fatalf("the client did not write the fake secret %s… into %s", s[:4], path)
		}
	}
	out := h.Sessctl("redact", "--force", path)
	t.Logf("sessctl redact:\n%s", out)
	if !strings.Contains(out, ": redacted ") || !strings.Contains(out, "STILL HOLDS THE SECRETS") {
		t.Errorf("redact did not say it redacted and that the rotation holds the secrets:\n%s", out)
	}
	for s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("redact printed a secret")
		}
	}
	rot, err := os.ReadFile(path + ".1")
	if err != nil || !bytes.Equal(rot, before) {
		t.Fatalf("the rotation does not hold the original: %v", err)
	}
	after := h.ReadFile(path)
	for s := range secrets {
		if bytes.Contains(after, []byte(s)) {
			t.Errorf("the redacted file still holds a secret")
		}
	}
	oldLines := bytes.Split(before, []byte("\n"))
	newLines := bytes.Split(after, []byte("\n"))
	if len(oldLines) != len(newLines) {
		t.Fatalf("%d lines became %d", len(oldLines), len(newLines))
	}
	changed := 0
	for i := range newLines {
		if len(newLines[i]) == 0 {
			continue
		}
		if !json.Valid(newLines[i]) {
			t.Errorf("line %d is not valid JSON after redact", i+1)
		}
		if bytes.Equal(oldLines[i], newLines[i]) {
			continue
		}
		changed++
		back := string(newLines[i])
		for s, ph := range secrets {
			back = strings.ReplaceAll(back, ph, s)
		}
		if back != string(oldLines[i]) {
			t.Errorf("line %d changed beyond its secrets:\n old %.300s\n new %.300s", i+1, oldLines[i], newLines[i])
		}
	}
	if changed == 0 {
		t.Errorf("no line changed")
	}
	if out, err := h.SessctlRun("check", path); err != nil {
		t.Errorf("check fails after redact: %v\n%s", err, out)
	}
	if again := h.Sessctl("redact", "--force", path); !strings.Contains(again, "no secrets found") {
		t.Errorf("a second redact finds more:\n%s", again)
	}
	// the client's other files that still hold the prompt (docs/redact.md
	// names them): logged, not failed; redact rewrites the session only
	filepath.WalkDir(h.Home, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || p == path+".1" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(fakesecret.Get("github-pat"))) {
			rel, _ := filepath.Rel(h.Home, p)
			t.Logf("still holds the secret (not a session file): ~/%s", rel)
		}
		return nil
	})
}

// noSecretSent fails when a request sent since mark carries a secret, or
// none carries the placeholders.
func noSecretSent(t *testing.T, h *Harness, mark int) {
	t.Helper()
	reqs := h.ModelCallsSince(mark)
	if len(reqs) == 0 {
		t.Fatal("no model call after the resume")
	}
	placeholders := false
	for _, r := range reqs {
		for s, ph := range redactSecrets() {
			if bytes.Contains(r.Body, []byte(s)) {
				t.Errorf("the resumed client sent a secret the session no longer holds")
			}
			placeholders = placeholders || bytes.Contains(r.Body, []byte(ph))
		}
	}
	if !placeholders {
		t.Errorf("the resumed client did not send the redacted text")
	}
}

// TestRedactClaudeResume: Claude Code resumes a redacted session; the
// model receives the redacted prompt and reply.
func TestRedactClaudeResume(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	a := h.ClaudePrompt(secretPrompt("turn A"))
	id := a.SessionID
	h.ClaudeResume(id, "NOTOOL turn B")
	path := h.ClaudeSessionFile(id)
	redactClean(t, h, path)

	mark := h.Mark()
	h.ClaudeResume(id, "NOTOOL turn C")
	noSecretSent(t, h, mark)
	got := h.UserTexts(h.FirstModelCallSince(mark))
	want := secretPrompt("turn A")
	for s, ph := range redactSecrets() {
		want = strings.ReplaceAll(want, s, ph)
	}
	wantTexts(t, "turn C request", got, []string{want, "NOTOOL turn B", "NOTOOL turn C"})
}

// TestRedactCodexResume: Codex resumes a redacted rollout; the model
// receives the redacted prompt and reply.
func TestRedactCodexResume(t *testing.T) {
	t.Parallel()
	h := NewHarness(t)
	id := h.CodexExec(secretPrompt("turn A"))
	h.CodexResume(id, "NOTOOL turn B")
	path := h.CodexSessionFile(id)
	redactClean(t, h, path)

	mark := h.Mark()
	h.CodexResume(id, "NOTOOL turn C")
	noSecretSent(t, h, mark)
	got := h.UserTexts(h.FirstModelCallSince(mark))
	want := secretPrompt("turn A")
	for s, ph := range redactSecrets() {
		want = strings.ReplaceAll(want, s, ph)
	}
	wantTexts(t, "turn C request", got, []string{want, "NOTOOL turn B", "NOTOOL turn C"})
}
