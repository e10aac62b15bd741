package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Hostile text as a session file can hold it: an OSC 0 title change, a
// screen clear, an OSC 52 clipboard write, a NUL and a one-character CSI
// (C1, U+009B), all JSON-escaped inside valid records.
const (
	evilTitle  = "T\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\x00\u009b2J end"
	evilPrompt = "hi \x1b]0;pwned\x07 \x1b[2J \x1b]52;c;cHduZWQ=\x07 nul\x00 \u202egnp.exe"
	evilOutput = "out \x1b]0;pwned\x07\x1b[2J\x00"
	evilTool   = "Bash\x1b[2J"
)

// jsonString encodes s as a JSON string (control characters as \u escapes,
// as the clients write them).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// evilClaude is a Claude Code transcript with hostile text in the title,
// both prompts, a tool call and its output, and a corrupt line holding a raw
// ESC, BEL and bytes that are not UTF-8.
func evilClaude(second string) string {
	const sid = "5e55e55e-0000-4000-8000-000000000001"
	l := []string{
		`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":` + jsonString(evilPrompt) + `},"uuid":"aaaaaaaa-0000-4000-8000-000000000001","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/home/evil\u001b[2J","sessionId":"` + sid + `"}`,
		`{"parentUuid":"aaaaaaaa-0000-4000-8000-000000000001","isSidechain":false,"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_1","name":` + jsonString(evilTool) + `,"input":{"command":` + jsonString("echo "+evilOutput) + `}}],"usage":{"input_tokens":10,"output_tokens":5}},"uuid":"aaaaaaaa-0000-4000-8000-000000000002","timestamp":"2026-11-01T10:00:01.000Z","sessionId":"` + sid + `"}`,
		`{"parentUuid":"aaaaaaaa-0000-4000-8000-000000000002","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":` + jsonString(evilOutput) + `}]},"uuid":"aaaaaaaa-0000-4000-8000-000000000003","timestamp":"2026-11-01T10:00:02.000Z","sessionId":"` + sid + `"}`,
		`{"type":"custom-title","customTitle":` + jsonString(evilTitle) + `,"sessionId":"` + sid + `"}`,
		"{\"type\":\"user\",\"broken\":\"\x1b]0;raw\x07\x1b[2J\xff\xfe",
		`{"parentUuid":"aaaaaaaa-0000-4000-8000-000000000003","isSidechain":false,"type":"user","message":{"role":"user","content":` + jsonString(second) + `},"uuid":"aaaaaaaa-0000-4000-8000-000000000004","timestamp":"2026-11-01T10:00:03.000Z","sessionId":"` + sid + `"}`,
		`{"parentUuid":"aaaaaaaa-0000-4000-8000-000000000004","isSidechain":false,"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":` + jsonString("done \x1b[2J") + `}],"usage":{"input_tokens":20,"output_tokens":5}},"uuid":"aaaaaaaa-0000-4000-8000-000000000005","timestamp":"2026-11-01T10:00:04.000Z","sessionId":"` + sid + `"}`,
	}
	return strings.Join(l, "\n") + "\n"
}

// assertTerminalSafe fails when out holds anything a terminal acts on: C0
// controls other than newline, DEL, C1 controls, bidi overrides, or bytes
// that are not UTF-8.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: output is not valid UTF-8: %q", what, out)
	}
	for i, r := range out {
		bad := r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
		if bad {
			lo := max(0, i-40)
			t.Errorf("%s: raw %U at byte %d: …%q…", what, r, i, out[lo:min(len(out), i+20)])
			return
		}
	}
}

// TestNoRawControlsReachTheTerminal runs every command that shows session
// text on a session full of escape sequences, in a directory and under a
// file name that hold some too: nothing raw may reach stdout or stderr. The
// JSON output carries the exact text.
func TestNoRawControlsReachTheTerminal(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("NO_COLOR", "1")
	root := filepath.Join(home, ".claude")
	proj := filepath.Join(root, "projects", "-home-evil\x1b[2J")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "evil\x1b]0;pwned\x07\n\xff.jsonl"
	path := filepath.Join(proj, name)
	other := filepath.Join(proj, "other\x1b[2J.jsonl")
	must(t, os.WriteFile(path, []byte(evilClaude("again \x1b]0;t\x07")), 0o644))
	must(t, os.WriteFile(other, []byte(evilClaude("changed \x1b[31mred\x1b]52;c;eA==\x07")), 0o644))
	old := time.Now().Add(-90 * 24 * time.Hour)
	for _, p := range []string{path, other} {
		must(t, os.Chtimes(p, old, old))
	}

	runs := [][]string{
		{"ls", "--root", root},
		{"ls", path},
		{"check", root},
		{"check", path},
		{"stats", "--heuristic", path},
		{"stats", "--root", root},
		{"stats", "--root", root, "--by", "project"},
		{"stats", "--root", root, "--by", "model"},
		{"checkpoints", path},
		{"revert", "--checkpoint", "1", "--dry-run", path},
		{"diff", path, other},
		{"diff", "--stat", path, other},
		{"compact", "--dry-run", "--keep", "1", path},
		{"cleanup", "--root", root},
		{"rotations", path},
		{"show", path},
		{"show", "--all", "--full", "--thinking", path},
		{"prune-rotations", "--keep", "0", "--dry-run", path},
		{"repair", "--dry-run", "--force", path},
		{"grep", "--root", root, "echo"},
		{"export", "--format", "md", path},
		{"redact", "--dry-run", "--force", path},
		{"stats", filepath.Join(proj, "nope\x1b]0;x\x07.jsonl")},
		{"checkpoints", "nope\x1b[2J"},
	}
	for _, args := range runs {
		out, errOut, code := runCLI(t, args...)
		what := strings.Join(args[:1], " ")
		assertTerminalSafe(t, what+" stdout", out)
		assertTerminalSafe(t, what+" stderr", errOut)
		if code == exitError && args[0] != "stats" && args[0] != "checkpoints" {
			t.Errorf("%q: exit %d, stderr %s", args, code, errOut)
		}
		if len(out)+len(errOut) == 0 {
			t.Errorf("%q printed nothing", args)
		}
	}

	// watch: follows the file until it is deleted
	watched := filepath.Join(proj, "w\x1b]0;x\x07.jsonl")
	must(t, os.WriteFile(watched, []byte(evilClaude("w")), 0o644))
	go func() {
		time.Sleep(300 * time.Millisecond)
		f, _ := os.OpenFile(watched, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"type":"user","message":{"role":"user","content":` + jsonString(evilPrompt) + `},"uuid":"x"}` + "\n")
		f.Close()
		time.Sleep(300 * time.Millisecond)
		os.Remove(watched)
	}()
	out, errOut, code := runCLI(t, "watch", "--poll", "50ms", watched)
	if code != 0 {
		t.Errorf("watch: exit %d, %s", code, errOut)
	}
	assertTerminalSafe(t, "watch stdout", out)
	assertTerminalSafe(t, "watch stderr", errOut)
	if !strings.Contains(out, `\x1b]0;pwned\a`) {
		t.Errorf("watch does not show the escaped prompt:\n%s", out)
	}

	// the text forms show what is there, escaped
	out, _, _ = runCLI(t, "ls", "--root", root)
	if !strings.Contains(out, `T\x1b]0;pwned\a\x1b]52;c;aGk=\a\x00\u009b2J end`) {
		t.Errorf("ls does not show the escaped title:\n%s", out)
	}
	if !strings.Contains(out, `/home/evil\x1b[2J`) {
		t.Errorf("ls does not show the escaped project:\n%s", out)
	}

	// --json carries the exact text
	out, _, _ = runCLI(t, "ls", "--json", path)
	var rows []lsRow
	must(t, json.Unmarshal([]byte(out), &rows))
	if len(rows) != 1 || rows[0].Title != evilTitle || rows[0].CWD != "/home/evil\x1b[2J" {
		t.Fatalf("ls --json: %+v", rows)
	}
	out, _, _ = runCLI(t, "checkpoints", "--json", path)
	var cps struct { // only the fields looked at (Point's others may change)
		Session string `json:"session"`
		Points  []struct {
			Preview string `json:"preview"`
		} `json:"points"`
	}
	must(t, json.Unmarshal([]byte(out), &cps))
	if len(cps.Points) != 2 || !strings.HasPrefix(cps.Points[0].Preview, "hi \x1b]0;pwned\x07 \x1b[2J") || !strings.Contains(cps.Points[0].Preview, "nul\x00") {
		t.Fatalf("checkpoints --json: %+v", cps.Points)
	}
	if cps.Session != path[:len(path)-len("\xff.jsonl")]+"\ufffd.jsonl" {
		// encoding/json cannot carry bytes that are not UTF-8: they become
		// U+FFFD, and only they
		t.Errorf("checkpoints --json session %q", cps.Session)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
