package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const claudeRecord = `{"type":"user","uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}` + "\n"

// leftoverSession makes a Claude session with a temp file that a killed
// sessctl left (its pid is beyond pid_max) and an empty rotation placeholder.
func leftoverSession(t *testing.T) (main, temp, placeholder string) {
	dir := filepath.Join(t.TempDir(), "projects", "-p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	main = filepath.Join(dir, "s.jsonl")
	temp = filepath.Join(dir, ".sessctl-tmp-s.jsonl-2147483647-0123456789ab")
	placeholder = filepath.Join(dir, "s.jsonl.1")
	old := time.Now().Add(-time.Hour)
	for p, content := range map[string]string{main: claudeRecord, temp: claudeRecord[:20], placeholder: ""} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	return main, temp, placeholder
}

// check reports leftovers (exit 1) and changes nothing.
func TestCheckReportsLeftovers(t *testing.T) {
	main, temp, placeholder := leftoverSession(t)
	for _, arg := range []string{filepath.Dir(main), main} {
		out, errOut, code := runCLI(t, "check", arg)
		if code != exitFindings {
			t.Fatalf("check %s: exit %d, stderr %q", arg, code, errOut)
		}
		for _, want := range []string{
			temp + "  leftover: temp file of an interrupted sessctl rewrite, 20 B (process 2147483647 that made it is gone; stale: sessctl cleanup --apply removes it",
			placeholder + "  leftover: empty rotation placeholder of an interrupted sessctl rewrite, 0 B (empty: removing it loses nothing; stale",
			"2 problems",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("check %s: stdout lacks %q:\n%s", arg, want, out)
			}
		}
	}
	out, _, code := runCLI(t, "check", "--json", main)
	var v struct {
		Problems  int `json:"problems"`
		Leftovers []struct {
			Path  string `json:"path"`
			Kind  string `json:"kind"`
			Stale bool   `json:"stale"`
			PID   int    `json:"pid"`
		} `json:"leftovers"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitFindings {
		t.Fatalf("--json: %v, exit %d: %s", err, code, out)
	}
	if v.Problems != 2 || len(v.Leftovers) != 2 || v.Leftovers[0].Path != temp || v.Leftovers[0].PID != 2147483647 || !v.Leftovers[0].Stale || v.Leftovers[1].Kind != "placeholder" {
		t.Errorf("--json leftovers %+v", v)
	}
	for _, p := range []string{temp, placeholder} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("check removed %s", p)
		}
	}
}

// prune-rotations holds the session's lock: it removes the stale leftovers
// and says so on stderr.
func TestPruneRemovesLeftovers(t *testing.T) {
	main, temp, placeholder := leftoverSession(t)
	os.WriteFile(main+".2", []byte(claudeRecord), 0o600)
	_, errOut, code := runCLI(t, "prune-rotations", "--keep", "1", main)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, p := range []string{temp, placeholder} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
		if !strings.Contains(errOut, "sessctl: warning: removed "+p) {
			t.Errorf("stderr does not say %s was removed: %q", p, errOut)
		}
	}
	if b, err := os.ReadFile(main + ".2"); err != nil || string(b) != claudeRecord {
		t.Errorf("the rotation with bytes went: %v", err)
	}
}
