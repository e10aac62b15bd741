package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/sessctl/sessctl/internal/fakemodel"
	"github.com/sessctl/sessctl/internal/oracle"
	"github.com/sessctl/sessctl/pkg/session"
)

// The oracle (issue 10 item 5, docs/show.md "What the oracle compares"):
// before a client resumes a session, `sessctl show --json --thinking`
// predicts the conversation the client will send; after the resume, the
// first model call of the new turn is read from the fake server's log. Both
// are flattened into items (text, tool call, tool result, thinking) and
// must be equal, the new prompt (and, for Claude Code, the synthetic
// "Continue from where you left off." / "No response requested." pair) being
// the only extra items on the request side.
//
// Context the client injects is left out by one rule per agent
// (internal/oracle.Rule), built on the one function its home exports
// (InjectedContext), so that show's `injected` flag and the oracle's filter
// cannot drift apart.
//
// ClaudeResume, CodexResume and ClaudePrompt with --continue run the
// oracle on every resume; Revert and Restore also hold the turns that
// `checkpoints` and `revert` number to it.

// ShowItem is one line of `sessctl show --json`.
type ShowItem = oracle.ShowItem

// ---- the sessctl binary ----

// The sessctl binary built from this repository, once per test process.
var sessctlBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// SessctlBinary builds cmd/sessctl once per test process and returns its
// path.
func SessctlBinary() (string, error) {
	b := &sessctlBuild
	b.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		repo := filepath.Dir(filepath.Dir(file))
		dir, err := os.MkdirTemp("", "sessctl-e2e-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "sessctl")
		cmd := exec.Command("go", "build", "-o", b.path, "./cmd/sessctl")
		cmd.Dir = repo
		b.out, b.err = cmd.CombinedOutput()
		if b.err != nil {
			b.err = fmt.Errorf("building sessctl: %w\n%s", b.err, b.out)
		}
	})
	return b.path, b.err
}

// RemoveSessctlBinary removes what SessctlBinary built (TestMain calls
// it once the tests are done, so that no run leaves its binary in the
// temporary directory).
func RemoveSessctlBinary() {
	if b := &sessctlBuild; b.path != "" {
		os.RemoveAll(filepath.Dir(b.path))
	}
}

// SessctlRun runs the built sessctl with args; it returns stdout, and an
// error that quotes stderr when the command fails.
func (h *Harness) SessctlRun(args ...string) (string, error) {
	h.t.Helper()
	bin, err := SessctlBinary()
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if err != nil {
		return stdout.String(), fmt.Errorf("sessctl %s: %w\n%s%s", quote(args), err, clip(stdout.String()), clip(stderr.String()))
	}
	return stdout.String(), nil
}

// Sessctl runs the built sessctl with args and returns stdout, failing the
// test when it fails.
func (h *Harness) Sessctl(args ...string) string {
	h.t.Helper()
	out, err := h.SessctlRun(args...)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// Show runs `sessctl show --json --thinking [flags] path` and returns its
// items.
func (h *Harness) Show(path string, flags ...string) []ShowItem {
	h.t.Helper()
	args := append(append([]string{"show", "--json", "--thinking"}, flags...), path)
	out := h.Sessctl(args...)
	var items []ShowItem
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var it ShowItem
		if err := dec.Decode(&it); err != nil {
			h.t.Fatalf("sessctl show --json %s: %v", path, err)
		}
		items = append(items, it)
	}
	return items
}

// nextTurn is the number the next prompt of the session at path will get:
// the count of turns `sessctl checkpoints` numbers.
func (h *Harness) nextTurn(path string) int {
	h.t.Helper()
	var c struct {
		Points []struct {
			N int `json:"n"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(h.Sessctl("checkpoints", "--json", path)), &c); err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, p := range c.Points {
		if p.N >= 0 {
			n++
		}
	}
	return n
}

// ---- predictions ----

// Prediction is what sessctl predicts a client sends when it resumes the
// session at Path next: show's live items in send order.
type Prediction struct {
	Agent session.Agent
	Path  string
	Items []ShowItem
	// Turn is the number the resumed prompt will get (`checkpoints`).
	Turn int
	// Rule is the agent's oracle rule (internal/oracle.Rule; the resume
	// helpers set it).
	Rule oracle.Rule
	// snapshot is the file as it was (kept with SESSCTL_E2E_KEEP only).
	snapshot []byte
}

// Predict runs `sessctl show` on the session at path before a resume.
func (h *Harness) Predict(agent session.Agent, path string) Prediction {
	h.t.Helper()
	p := Prediction{Agent: agent, Path: path, Items: h.Show(path), Turn: h.nextTurn(path)}
	if os.Getenv(EnvKeep) != "" {
		p.snapshot = h.ReadFile(path)
	}
	for _, it := range p.Items {
		if it.State != "live" {
			h.t.Fatalf("e2e: sessctl show without --all printed a %s item: %v", it.State, it)
		}
	}
	return p
}

// CheckResume is the oracle: the request r of a resume with prompt must
// carry exactly what p predicted (internal/oracle.Check). A failure lists
// both sides. With SESSCTL_E2E_KEEP set, the case is kept under
// <root>/oracle/ for a home's testdata (internal/oracle.Case).
func (h *Harness) CheckResume(p Prediction, r fakemodel.Request, prompt string) {
	h.t.Helper()
	f, err := oracle.FilterOf(p.Agent)
	if err != nil {
		h.t.Fatal(err)
	}
	sent, err := r.Items()
	if err != nil {
		h.t.Fatal(err)
	}
	if p.snapshot != nil {
		h.keepCase(p, r.N, sent, prompt)
	}
	if d := oracle.Check(f, p.Rule, p.Items, sent, prompt); d != "" {
		h.t.Errorf("e2e: oracle: request %d does not carry what `sessctl show %s` predicted (%s):\n%s\nshow printed:\n%s",
			r.N, filepath.Base(p.Path), p.Agent, d, oracle.List(p.Items))
		return
	}
	h.t.Logf("e2e: oracle: request %d carries the %d items show printed and the new prompt", r.N, len(p.Items))
}

// keepCase writes a resume as an internal/oracle.Case: the file before it,
// the prompt and what the client sent.
func (h *Harness) keepCase(p Prediction, n int, sent []fakemodel.Item, prompt string) {
	h.t.Helper()
	dir := filepath.Join(h.Root, "oracle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	h.kept++
	name := fmt.Sprintf("%02d", h.kept)
	c := oracle.Case{Agent: p.Agent, File: name + ".jsonl", Prompt: prompt, Rule: p.Rule, Request: n, Sent: sent}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, c.File), p.snapshot, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// ---- turns ----

// record keeps the prediction made before turn p.Turn of a session: the
// live history a revert to that turn must bring back.
func (h *Harness) record(p Prediction) {
	if h.before == nil {
		h.before = map[string]map[int][]ShowItem{}
	}
	m := h.before[p.Path]
	if m == nil {
		m = map[int][]ShowItem{}
		h.before[p.Path] = m
	}
	m[p.Turn] = p.Items
	for n := range m {
		if n > p.Turn {
			delete(m, n) // a later turn of an abandoned branch
		}
	}
}

// checkTurn checks that a resume gave its prompt the number the
// prediction expected.
func (h *Harness) checkTurn(p Prediction, prompt string) {
	h.t.Helper()
	var c struct {
		Points []struct {
			N       int    `json:"n"`
			Preview string `json:"preview"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(h.Sessctl("checkpoints", "--json", p.Path)), &c); err != nil {
		h.t.Fatal(err)
	}
	for _, pt := range c.Points {
		if pt.N == p.Turn {
			if !strings.HasPrefix(prompt, strings.TrimSuffix(pt.Preview, "…")) {
				h.t.Errorf("e2e: after the resume, `sessctl checkpoints` numbers %q as turn %d; want %q", pt.Preview, pt.N, prompt)
			}
			return
		}
	}
	h.t.Errorf("e2e: after the resume, `sessctl checkpoints` has no turn %d (the prompt %q)", p.Turn, prompt)
}

// comparable is what a revert must keep of an item.
type comparable struct {
	Turn                 int
	Role, Type, Text     string
	Name, ID             string
	Prompt, Injected, Er bool
}

func keyOf(it ShowItem) comparable {
	return comparable{it.Turn, it.Role, it.Type, it.Text, it.Name, it.ID, it.Prompt, it.Injected, it.IsError}
}

// Revert runs `sessctl revert --checkpoint n --force [args] path` and holds
// the turn numbering to the model: afterwards show's live items must be
// exactly the live items of turns before n — or, when a compaction
// follows turn n (`checkpoints` says compacted_after; the revert takes the
// compaction away), exactly what show predicted just before turn n was
// resumed, the history the client had then. It returns sessctl's output.
func (h *Harness) Revert(path string, n int, args ...string) string {
	h.t.Helper()
	var c struct {
		Points []struct {
			N              int  `json:"n"`
			CompactedAfter bool `json:"compacted_after"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(h.Sessctl("checkpoints", "--json", path)), &c); err != nil {
		h.t.Fatal(err)
	}
	compacted, found := false, false
	for _, p := range c.Points {
		if p.N == n {
			compacted, found = p.CompactedAfter, true
		}
	}
	if !found {
		h.t.Fatalf("e2e: revert %s to turn %d: `sessctl checkpoints` has no turn %d", filepath.Base(path), n, n)
	}
	var want []ShowItem
	what := fmt.Sprintf("the live items of turns before %d", n)
	if compacted {
		var ok bool
		if want, ok = h.before[path][n]; !ok {
			h.t.Fatalf("e2e: revert %s to turn %d: no prediction was recorded before turn %d was resumed", filepath.Base(path), n, n)
		}
		what = fmt.Sprintf("the history before turn %d was resumed (a compaction follows turn %d)", n, n)
	} else {
		for _, it := range h.Show(path) {
			if it.Turn < n {
				want = append(want, it)
			}
		}
	}
	out := h.Sessctl(append(append([]string{"revert", "--checkpoint", fmt.Sprint(n), "--force"}, args...), path)...)
	if plain := strings.TrimSuffix(path, ".zst"); plain != path {
		// a compressed rollout is the plain file after the revert
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			if h.before != nil {
				h.before[plain] = h.before[path]
			}
			path = plain
		}
	}
	after := h.Show(path)
	if d := diffShow(want, after); d != "" {
		h.t.Errorf("e2e: after `sessctl revert --checkpoint %d`, show's live items are not %s:\n%s", n, what, d)
	}
	if got := h.nextTurn(path); got != n {
		h.t.Errorf("e2e: after `sessctl revert --checkpoint %d`, checkpoints numbers %d turns", n, got)
	}
	for k := range h.before[path] {
		if k > n {
			delete(h.before[path], k)
		}
	}
	return out
}

func diffShow(want, got []ShowItem) string {
	first := -1
	for i := 0; i < max(len(want), len(got)); i++ {
		if i >= len(want) || i >= len(got) || keyOf(want[i]) != keyOf(got[i]) {
			first = i
			break
		}
	}
	if first < 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at item %d\nwant:\n%sgot:\n%s", first, oracle.List(want), oracle.List(got))
	return b.String()
}

// Restore runs rewrite (a sessctl command that rotates the session file
// first, such as a revert), then `sessctl restore --rotation K`, K being
// the rotation rewrite made. Afterwards show must print exactly what it
// printed before rewrite, and the turn predictions recorded before it hold
// again.
func (h *Harness) Restore(path string, rewrite func()) {
	h.t.Helper()
	want := h.Show(path, "--all")
	saved := map[int][]ShowItem{}
	for n, items := range h.before[path] {
		saved[n] = items
	}
	rotation := func() int {
		n := 0
		for k := 1; ; k++ {
			if _, err := os.Stat(fmt.Sprintf("%s.%d", path, k)); err != nil {
				return n
			}
			n = k
		}
	}
	k0 := rotation()
	rewrite()
	k := rotation()
	if k == k0 {
		h.t.Fatalf("e2e: restore: the rewrite of %s made no rotation", filepath.Base(path))
	}
	h.Sessctl("restore", "--rotation", fmt.Sprint(k), "--force", path)
	got := h.Show(path, "--all")
	// the rotation that restore made holds the rewritten version: --all
	// lists what only it holds first, as rotated; the main file's items
	// must be exactly those before the rewrite
	var main []ShowItem
	for _, it := range got {
		if it.State != "rotated" {
			main = append(main, it)
		}
	}
	var wantMain []ShowItem
	for _, it := range want {
		if it.State != "rotated" {
			wantMain = append(wantMain, it)
		}
	}
	if d := diffShow(wantMain, main); d != "" {
		h.t.Errorf("e2e: after `sessctl restore --rotation %d`, show --all does not print what it printed before the rewrite:\n%s", k, d)
	}
	for i := range main {
		if i < len(wantMain) && (main[i].State != wantMain[i].State || main[i].Line != wantMain[i].Line) {
			h.t.Errorf("e2e: after restore, item %d is %s at line %d, was %s at line %d", i, main[i].State, main[i].Line, wantMain[i].State, wantMain[i].Line)
		}
	}
	if h.before == nil {
		h.before = map[string]map[int][]ShowItem{}
	}
	h.before[path] = saved
}
