// Package e2e drives the real Claude Code and Codex CLI binaries, offline,
// against the loopback fake model server in internal/fakemodel, so that a
// test can prove what history a client sends after sessctl rewrote its
// session file.
//
// Everything is skipped unless SESSCTL_E2E=1; scripts/e2e.sh installs the
// pinned clients and runs these tests (and fails if they were skipped).
// With SESSCTL_E2E=1 a missing client is a failure, never a skip.
//
// A typical proof:
//
//	h := e2e.NewHarness(t)
//	a := h.ClaudePrompt("NOTOOL turn A")
//	… rewrite h.ClaudeSessionFile(a.SessionID) …
//	mark := h.Mark()
//	h.ClaudeResume(a.SessionID, "NOTOOL turn D")
//	got := h.UserTexts(h.FirstModelCallSince(mark))
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/internal/fakemodel"
	"github.com/sessctl/sessctl/internal/oracle"
	"github.com/sessctl/sessctl/pkg/session"
)

// Pinned client versions: the on-disk formats change between releases.
const (
	ClaudeVersion = "2.1.197"
	CodexVersion  = "0.169.0"
	// Claude330 is the second pinned Claude Code (issue 12): it writes
	// api-request, api-request-shape, api-request-blob, cost-state,
	// tools-used and atis-latch records and defaults to claude-opus-5-5.
	// scripts/e2e.sh installs it in its own directory under the clients
	// directory (ClaudeDir), since npm keeps one version of a package per
	// node_modules.
	Claude330 = "2.1.330"
)

// ClaudeDir is the directory under the clients directory that holds the
// Claude Code of version v: the clients directory itself for ClaudeVersion,
// claude-code-<v> for any other.
func ClaudeDir(clients, v string) string {
	if v == ClaudeVersion {
		return clients
	}
	return filepath.Join(clients, "claude-code-"+v)
}

// Option configures a Harness.
type Option func(*Harness)

// WithClaude makes the harness run Claude Code version v (ClaudeVersion
// unless given) instead.
func WithClaude(v string) Option { return func(h *Harness) { h.ClaudeVersion = v } }

// Environment variables.
const (
	// EnvEnable must be "1" for anything here to run.
	EnvEnable = "SESSCTL_E2E"
	// EnvClients overrides the directory the clients were installed in
	// (it holds node_modules/.bin/claude and node_modules/.bin/codex).
	EnvClients = "SESSCTL_E2E_CLIENTS"
	// EnvClaude, if set, is the Claude Code version every harness runs
	// unless a test asks for one (WithClaude): scripts/e2e.sh runs the
	// Claude tests once more with Claude330.
	EnvClaude = "SESSCTL_E2E_CLAUDE"
	// EnvCodex, if set, is the Codex version every harness runs (installed
	// in codex-<version> under the clients directory): make e2e-latest.
	EnvCodex = "SESSCTL_E2E_CODEX"
	// EnvKeep, if set to a directory, keeps every harness's home, project
	// and request log under it instead of deleting them.
	EnvKeep = "SESSCTL_E2E_KEEP"
)

// Fake credentials given to the clients; the fake server accepts anything.
const (
	fakeAnthropicKey = "sk-ant-fake-key-0000"
	fakeOpenAIKey    = "sk-fake-openai-key-0000"
)

// DefaultTimeout bounds one client invocation.
const DefaultTimeout = 120 * time.Second

// ClientsDir returns the directory the clients are installed in:
// $SESSCTL_E2E_CLIENTS, else ${XDG_CACHE_HOME:-$HOME/.cache}/sessctl/e2e-clients.
func ClientsDir() (string, error) {
	if d := os.Getenv(EnvClients); d != "" {
		return filepath.Abs(d)
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("e2e: no cache directory: %w", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "sessctl", "e2e-clients"), nil
}

// Harness is one isolated world: a private HOME, a scratch project
// directory (the clients' cwd), and a fake model server. Create it with
// NewHarness; it is cleaned up when the test ends.
type Harness struct {
	t testing.TB

	// Root holds Home, Project and the request log.
	Root string
	// Home is the clients' private $HOME.
	Home string
	// Project is the clients' working directory (symlinks resolved). It
	// holds hello.txt and main.go so `ls` has something to show.
	Project string
	// Server is the fake model server.
	Server *fakemodel.Server
	// LogPath is the server's request log (one JSON line per request).
	LogPath string
	// Timeout bounds each client invocation (DefaultTimeout).
	Timeout time.Duration

	// ClaudeVersion is the Claude Code version this harness runs.
	ClaudeVersion string

	claude, codex string
	// kimiCodeOnly: the harness runs Kimi Code only (NewKimiCodeHarness);
	// kimiNode and kimiMain are its Node and entry point.
	kimiCodeOnly       bool
	KimiCodeVersion    string
	kimiNode, kimiMain string
	env                []string
	last               Run
	// before holds, per session file and turn number, the live history
	// show predicted just before that turn was resumed (see Revert).
	before map[string]map[int][]ShowItem
	kept   int // oracle cases kept (SESSCTL_E2E_KEEP)
}

// Run is the outcome of one client invocation.
type Run struct {
	Args     []string
	Stdout   string
	Stderr   string
	ExitCode int
	Duration time.Duration
}

// NewHarness skips the test unless SESSCTL_E2E=1; otherwise it finds the
// pinned clients (failing the test if they are missing or the wrong
// version), starts a fake model server and prepares a private HOME with
// the Codex configuration.
func NewHarness(t testing.TB, opts ...Option) *Harness {
	t.Helper()
	if os.Getenv(EnvEnable) != "1" {
		t.Skipf("e2e: real-client test skipped: set %s=1 (scripts/e2e.sh installs the clients and does)", EnvEnable)
	}
	dir, err := ClientsDir()
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{t: t, Timeout: DefaultTimeout, ClaudeVersion: ClaudeVersion}
	if v := os.Getenv(EnvClaude); v != "" {
		h.ClaudeVersion = v
	}
	for _, o := range opts {
		o(h)
	}
	if h.kimiCodeOnly {
		if err := h.findKimiCode(dir); err != nil {
			t.Fatal(err)
		}
	} else {
		h.claude, err = findClient(ClaudeDir(dir, h.ClaudeVersion), "claude", "@anthropic-ai/claude-code", h.ClaudeVersion)
		if err != nil {
			t.Fatal(err)
		}
		codexDir, codexVersion := dir, CodexVersion
		if v := os.Getenv(EnvCodex); v != "" && v != CodexVersion {
			// another Codex (make e2e-latest), in its own directory as the
			// second Claude Code is
			codexDir, codexVersion = filepath.Join(dir, "codex-"+v), v
		}
		h.codex, err = findClient(codexDir, "codex", "@openai/codex", codexVersion)
		if err != nil {
			t.Fatal(err)
		}
	}

	h.Root = t.TempDir()
	if keep := os.Getenv(EnvKeep); keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
		if h.Root, err = os.MkdirTemp(keep, name+"-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("e2e: keeping %s", h.Root)
	}
	if h.Root, err = filepath.EvalSymlinks(h.Root); err != nil {
		t.Fatal(err)
	}
	h.Home = filepath.Join(h.Root, "home")
	h.Project = filepath.Join(h.Root, "project")
	for _, d := range []string{h.Home, h.Project, filepath.Join(h.Home, ".codex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{
		"hello.txt": "hello from the e2e project\n",
		"main.go":   "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(h.Project, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	h.LogPath = filepath.Join(h.Root, "requests.jsonl")
	h.Server, err = fakemodel.Start(fakemodel.Options{LogPath: h.LogPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			h.logRequests()
		}
		if err := h.Server.Close(); err != nil {
			t.Errorf("e2e: closing the fake model server: %v", err)
		}
	})

	config := fmt.Sprintf(`model = "gpt-5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "Fake local"
base_url = "%s/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[otel]
exporter = "none"
`, h.Server.URL())
	if err := os.WriteFile(filepath.Join(h.Home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if h.kimiCodeOnly {
		h.writeKimiCodeConfig()
	}

	// A clean environment: nothing of the developer's (API keys, proxies,
	// CLAUDE_CONFIG_DIR, CODEX_HOME, …) leaks into the clients.
	h.env = []string{
		"HOME=" + h.Home,
		"PATH=" + os.Getenv("PATH"), // node, for the Codex launcher
		"LANG=C.UTF-8",
		"TZ=UTC",
		"TERM=dumb",
		"XDG_CONFIG_HOME=" + filepath.Join(h.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(h.Home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(h.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(h.Home, ".local", "state"),
		"ANTHROPIC_BASE_URL=" + h.Server.URL(),
		"ANTHROPIC_API_KEY=" + fakeAnthropicKey,
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"FAKE_OPENAI_KEY=" + fakeOpenAIKey,
		"NO_PROXY=127.0.0.1,localhost",
		"no_proxy=127.0.0.1,localhost",
		"KIMI_CODE_NO_AUTO_UPDATE=1",
		"KIMI_DISABLE_TELEMETRY=1",
	}
	for _, k := range []string{"USER", "LOGNAME"} {
		if v, ok := os.LookupEnv(k); ok {
			h.env = append(h.env, k+"="+v)
		}
	}
	return h
}

// findClient returns node_modules/.bin/<bin> under dir after checking the
// installed package's version.
func findClient(dir, bin, pkg, version string) (string, error) {
	hint := "run scripts/e2e.sh, which installs the pinned clients (or set " + EnvClients + ")"
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("e2e: %s not installed: %w\n%s", bin, err, hint)
	}
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		return "", fmt.Errorf("e2e: %s: %w\n%s", pkg, err, hint)
	}
	var meta struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", fmt.Errorf("e2e: %s/package.json: %w", pkg, err)
	}
	if meta.Version != version {
		return "", fmt.Errorf("e2e: %s is version %s, want %s\n%s", pkg, meta.Version, version, hint)
	}
	return path, nil
}

// Env returns the environment the clients run with.
func (h *Harness) Env() []string { return append([]string(nil), h.env...) }

// Last returns the most recent client invocation.
func (h *Harness) Last() Run { return h.last }

// Claude runs the claude binary with args in the project directory, stdin
// closed. It returns stdout; a nonzero exit is an error that quotes stderr.
func (h *Harness) Claude(args ...string) (string, error) { return h.run("claude", h.claude, args) }

// Codex runs the codex binary with args in the project directory, stdin
// closed. It returns stdout (the final answer, for `codex exec`); Codex
// prints the thread id on stderr: see Last and CodexThreadID.
func (h *Harness) Codex(args ...string) (string, error) { return h.run("codex", h.codex, args) }

func (h *Harness) run(name, bin string, args []string) (string, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), h.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = h.Project
	cmd.Env = h.env
	cmd.Stdin = nil // /dev/null: codex exec reads a non-terminal stdin until EOF
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	killGroup(cmd)
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	r := Run{Args: append([]string{name}, args...), Stdout: stdout.String(), Stderr: stderr.String(),
		Duration: time.Since(start), ExitCode: cmd.ProcessState.ExitCode()}
	h.last = r
	h.t.Logf("e2e: $ %s  (exit %d, %.1fs)", quote(r.Args), r.ExitCode, r.Duration.Seconds())
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %s: %w", h.Timeout, ctx.Err())
	}
	if err != nil {
		return r.Stdout, fmt.Errorf("e2e: %s: %w\nstdout:\n%s\nstderr:\n%s", quote(r.Args), err, clip(r.Stdout), clip(r.Stderr))
	}
	return r.Stdout, nil
}

func quote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
			a = fmt.Sprintf("%q", a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func clip(s string) string {
	const n = 4000
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// ---- Claude Code ----

// ClaudeResult is the JSON object `claude -p --output-format json` prints.
type ClaudeResult struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	IsError   bool   `json:"is_error"`
	Result    string `json:"result"`
	SessionID string `json:"session_id"`
	NumTurns  int    `json:"num_turns"`
}

// ParseClaudeResult decodes the stdout of `claude -p --output-format json`.
func ParseClaudeResult(stdout string) (ClaudeResult, error) {
	var r ClaudeResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &r); err != nil {
		return r, fmt.Errorf("e2e: claude output is not one JSON object: %w: %s", err, clip(stdout))
	}
	if r.Type != "result" || r.SessionID == "" {
		return r, fmt.Errorf("e2e: claude output is not a result with a session id: %s", clip(stdout))
	}
	return r, nil
}

// ClaudePrompt starts a new Claude session with prompt and returns its
// result, failing the test if claude fails or reports an error.
// With --continue (which resumes the newest session of the project) it
// runs the oracle as ClaudeResume does.
func (h *Harness) ClaudePrompt(prompt string, extra ...string) ClaudeResult {
	h.t.Helper()
	var p *Prediction
	if slices.Contains(extra, "--continue") && !strings.HasPrefix(prompt, "/") {
		if path := h.newestClaudeSession(); path != "" {
			pr := h.Predict(session.Claude, path)
			pr.Rule = h.claudeRule()
			p = &pr
		}
	}
	mark := h.Mark()
	r := h.claudeP(prompt, extra)
	switch {
	case p != nil:
		if got := h.ClaudeSessionFile(r.SessionID); got != p.Path {
			h.t.Fatalf("e2e: --continue resumed %s, not the newest session %s", got, p.Path)
		}
		h.afterResume(*p, h.FirstModelCallSince(mark), prompt)
	case !slices.Contains(extra, "--resume") && !slices.Contains(extra, "--continue"):
		h.record(Prediction{Agent: session.Claude, Path: h.ClaudeSessionFile(r.SessionID)}) // a new session: nothing before turn 0
	}
	return r
}

// newestClaudeSession is the most recently written session file of the
// project, "" when there is none.
func (h *Harness) newestClaudeSession() string {
	h.t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.Home, ".claude", "projects", ClaudeProjectDirName(h.Project), "*.jsonl"))
	var newest string
	var at time.Time
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.ModTime().After(at) {
			newest, at = f, fi.ModTime()
		}
	}
	return newest
}

// ClaudeResume resumes session id with prompt (`--resume <id>`). Unless
// the prompt is a slash command (/compact sends its own request), it runs
// the oracle: `sessctl show` predicts the history before, and the first
// model call of the new turn must carry it (CheckResume).
func (h *Harness) ClaudeResume(id, prompt string, extra ...string) ClaudeResult {
	h.t.Helper()
	var p *Prediction
	if !strings.HasPrefix(prompt, "/") {
		pr := h.Predict(session.Claude, h.ClaudeSessionFile(id))
		pr.Rule = h.claudeRule()
		p = &pr
	}
	mark := h.Mark()
	r := h.claudeP(prompt, append([]string{"--resume", id}, extra...))
	if r.SessionID != id {
		h.t.Fatalf("e2e: claude --resume %s answered for session %s", id, r.SessionID)
	}
	if p != nil {
		h.afterResume(*p, h.FirstModelCallSince(mark), prompt)
	}
	return r
}

// The agents' oracle rules (docs/show.md, "What the oracle compares").
var (
	claudeRule = oracle.Rule{Anywhere: true, ContinuePair: true}
	// Claude Code 2.1.330 adds no pair after its own /compact, and answers
	// an unanswered call at the tip itself.
	claude330Rule = oracle.Rule{Anywhere: true, ContinuePair: true, NoPairAfterCommand: true, InterruptedCall: true}
	codexRule     = oracle.Rule{}
)

// Claude330OrLater reports whether the harness runs Claude Code 2.1.330 or
// a later release (make e2e-latest runs the newest), whose behaviour the
// tests hold as 2.1.330's.
func (h *Harness) Claude330OrLater() bool {
	var a, b, c int
	if n, _ := fmt.Sscanf(h.ClaudeVersion, "%d.%d.%d", &a, &b, &c); n != 3 {
		return false
	}
	return a > 2 || a == 2 && (b > 1 || b == 1 && c >= 330)
}

// claudeRule is the oracle rule of the Claude Code this harness runs.
func (h *Harness) claudeRule() oracle.Rule {
	if h.Claude330OrLater() {
		return claude330Rule
	}
	return claudeRule
}

// afterResume runs the oracle on the first request of a resumed turn and
// records the prediction for Revert.
func (h *Harness) afterResume(p Prediction, r fakemodel.Request, prompt string) {
	h.t.Helper()
	h.CheckResume(p, r, prompt)
	if plain := strings.TrimSuffix(p.Path, ".zst"); plain != p.Path {
		// Codex appended to a compressed rollout: it decompressed it to the
		// plain file first, which is the session from now on
		if _, err := os.Stat(p.Path); errors.Is(err, fs.ErrNotExist) {
			if h.before != nil {
				h.before[plain] = h.before[p.Path]
			}
			p.Path = plain
		}
	}
	h.checkTurn(p, prompt)
	h.record(p)
}

func (h *Harness) claudeP(prompt string, extra []string) ClaudeResult {
	h.t.Helper()
	args := append([]string{"-p", prompt, "--output-format", "json"}, extra...)
	// --dangerously-skip-permissions is refused when running as root, so
	// allow the tools the fake server calls instead. The list is variadic:
	// it must come last.
	args = append(args, "--allowedTools", "Bash", "Read", "Agent")
	out, err := h.Claude(args...)
	if err != nil {
		h.t.Fatal(err)
	}
	r, err := ParseClaudeResult(out)
	if err != nil {
		h.t.Fatal(err)
	}
	if r.IsError {
		h.t.Fatalf("e2e: claude reported an error: %s", clip(out))
	}
	return r
}

// ClaudeProjectDirName is Claude Code's directory name for a project path:
// every character that is not an ASCII letter or digit becomes "-" (paths
// longer than 200 characters get a hash suffix, which is not implemented
// here).
func ClaudeProjectDirName(path string) string {
	var b strings.Builder
	for _, r := range path {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else if r > 0xFFFF {
			b.WriteString("--") // two UTF-16 code units
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ClaudeSessionFile returns ~/.claude/projects/<escaped project>/<id>.jsonl,
// failing the test if it does not exist there.
func (h *Harness) ClaudeSessionFile(id string) string {
	h.t.Helper()
	p := filepath.Join(h.Home, ".claude", "projects", ClaudeProjectDirName(h.Project), id+".jsonl")
	if _, err := os.Stat(p); err != nil {
		found, _ := filepath.Glob(filepath.Join(h.Home, ".claude", "projects", "*", id+".jsonl"))
		h.t.Fatalf("e2e: claude session file: %v (found instead: %q)", err, found)
	}
	return p
}

// ---- Codex ----

var threadIDRE = regexp.MustCompile(`(?m)^session id: ([0-9a-fA-F-]{36})\s*$`)

// CodexThreadID extracts the thread id from `codex exec` stderr
// ("session id: <uuid>").
func CodexThreadID(stderr string) (string, error) {
	m := threadIDRE.FindStringSubmatch(stderr)
	if m == nil {
		return "", fmt.Errorf("e2e: no \"session id:\" line in codex stderr: %s", clip(stderr))
	}
	return m[1], nil
}

// CodexExec starts a new Codex thread with prompt (`codex exec
// --skip-git-repo-check`) and returns its thread id.
func (h *Harness) CodexExec(prompt string, extra ...string) string {
	h.t.Helper()
	args := append(append([]string{"exec", "--skip-git-repo-check"}, extra...), prompt)
	if _, err := h.Codex(args...); err != nil {
		h.t.Fatal(err)
	}
	id, err := CodexThreadID(h.last.Stderr)
	if err != nil {
		h.t.Fatal(err)
	}
	h.record(Prediction{Agent: session.Codex, Path: h.CodexSessionFile(id)}) // nothing before turn 0
	return id
}

// CodexResume resumes thread id with prompt (`codex exec
// --skip-git-repo-check resume <id> <prompt>`) and returns stdout.
// It runs the oracle: `sessctl show` predicts the history before, and the
// first request of the new turn must carry it (CheckResume).
func (h *Harness) CodexResume(id, prompt string, extra ...string) string {
	h.t.Helper()
	p := h.Predict(session.Codex, h.CodexSessionFile(id))
	p.Rule = codexRule
	mark := h.Mark()
	args := append(append([]string{"exec", "--skip-git-repo-check"}, extra...), "resume", id, prompt)
	out, err := h.Codex(args...)
	if err != nil {
		h.t.Fatal(err)
	}
	if got, err := CodexThreadID(h.last.Stderr); err != nil || got != id {
		h.t.Fatalf("e2e: codex resume %s reported thread %q (%v)", id, got, err)
	}
	first := h.FirstModelCallSince(mark)
	if md := first.CodexTurnMetadata(); md["request_kind"] != "turn" {
		h.t.Fatalf("e2e: the first request of the resumed turn is a %v request, not the turn's (metadata %v)", md["request_kind"], md)
	}
	h.afterResume(p, first, prompt)
	return out
}

// CodexSessionFile returns the rollout of thread id
// (~/.codex/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl, or its compressed
// form …jsonl.zst when there is no plain one), failing the test unless
// there is exactly one.
func (h *Harness) CodexSessionFile(id string) string {
	h.t.Helper()
	var found []string
	root := filepath.Join(h.Home, ".codex", "sessions")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if !d.IsDir() && strings.HasPrefix(n, "rollout-") && strings.HasSuffix(n, "-"+id+".jsonl") {
			found = append(found, p)
		}
		return nil
	})
	if err == nil && len(found) == 0 {
		// compressed by Codex's rollout maintenance (rollout-….jsonl.zst);
		// the plain file wins when both exist
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), "-"+id+".jsonl.zst") {
				found = append(found, p)
			}
			return nil
		})
	}
	if err != nil || len(found) != 1 {
		h.t.Fatalf("e2e: codex rollout for %s: %v, found %q", id, err, found)
	}
	return found[0]
}

// ---- the request log ----

// Requests returns every request the fake server received, in order.
func (h *Harness) Requests() []fakemodel.Request { return h.Server.Requests() }

// Mark returns the current request count; pass it to the *Since helpers to
// look only at requests made after it.
func (h *Harness) Mark() int { return h.Server.Count() }

// ModelCallsSince returns the Messages and Responses requests made after
// mark.
func (h *Harness) ModelCallsSince(mark int) []fakemodel.Request {
	var out []fakemodel.Request
	for _, r := range h.Server.Requests()[mark:] {
		if r.IsModelCall() {
			out = append(out, r)
		}
	}
	return out
}

// FirstModelCallSince returns the first model call after mark: the request
// of a resumed turn that carries the whole history. It fails the test if
// there is none.
func (h *Harness) FirstModelCallSince(mark int) fakemodel.Request {
	h.t.Helper()
	calls := h.ModelCallsSince(mark)
	if len(calls) == 0 {
		h.t.Fatalf("e2e: no model call after request %d", mark)
	}
	return calls[0]
}

// LastModelCall returns the newest model call, failing the test if there
// is none.
func (h *Harness) LastModelCall() fakemodel.Request {
	h.t.Helper()
	calls := h.ModelCallsSince(0)
	if len(calls) == 0 {
		h.t.Fatal("e2e: no model call yet")
	}
	return calls[len(calls)-1]
}

// UserTexts returns the user texts a model call carried (see
// fakemodel.Request.UserTexts), failing the test if it cannot be decoded.
func (h *Harness) UserTexts(r fakemodel.Request) []string {
	h.t.Helper()
	texts, err := r.UserTexts()
	if err != nil {
		h.t.Fatal(err)
	}
	return texts
}

// LastUserTexts returns the user texts of the newest model call.
func (h *Harness) LastUserTexts() []string {
	h.t.Helper()
	return h.UserTexts(h.LastModelCall())
}

// logRequests logs one line per request, to make a failure readable
// without the request log (which the test's temporary directory loses;
// set SESSCTL_E2E_KEEP to keep it).
func (h *Harness) logRequests() {
	for _, r := range h.Server.Requests() {
		line := fmt.Sprintf("e2e: request %d: %s %s", r.N, r.Method, r.Path)
		if r.Reply != nil {
			texts, _ := r.UserTexts()
			line += fmt.Sprintf(" → %s %q; user texts %q", r.Reply.Reason, r.Reply.Text, texts)
		}
		if r.Error != "" {
			line += " error: " + r.Error
		}
		h.t.Log(line)
	}
}

// ---- file helpers ----

// ReadFile returns the content of path, failing the test on error.
func (h *Harness) ReadFile(path string) []byte {
	h.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// Size returns the size of path, failing the test on error.
func (h *Harness) Size(path string) int64 {
	h.t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		h.t.Fatal(err)
	}
	return fi.Size()
}

// Truncate cuts path to size bytes; the byte before the cut must be a
// newline, so the file still ends with a complete line.
func (h *Harness) Truncate(path string, size int64) {
	h.t.Helper()
	b := h.ReadFile(path)
	if size <= 0 || size > int64(len(b)) || b[size-1] != '\n' {
		h.t.Fatalf("e2e: truncate %s to %d bytes: not just after a newline (file has %d bytes)", path, size, len(b))
	}
	if err := os.Truncate(path, size); err != nil {
		h.t.Fatal(err)
	}
}

// AppendLine appends one JSON line (plus "\n") to path.
func (h *Harness) AppendLine(path string, line string) {
	h.t.Helper()
	if strings.Contains(line, "\n") || !json.Valid([]byte(line)) {
		h.t.Fatalf("e2e: append to %s: not one line of JSON: %s", path, line)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	_, err = f.WriteString(line + "\n")
	if err = errors.Join(err, f.Close()); err != nil {
		h.t.Fatal(err)
	}
}

// AssertAppendOnly fails the test unless path still starts with before and
// ends with a newline (the clients only ever append).
func (h *Harness) AssertAppendOnly(path string, before []byte) {
	h.t.Helper()
	after := h.ReadFile(path)
	if !bytes.HasPrefix(after, before) {
		h.t.Errorf("e2e: %s: the first %d bytes changed", path, len(before))
	}
	if len(after) == 0 || after[len(after)-1] != '\n' {
		h.t.Errorf("e2e: %s does not end with a newline", path)
	}
}
