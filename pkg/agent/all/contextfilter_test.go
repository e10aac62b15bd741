package all_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// TestContextFilters holds every home's ContextFilter to its Gauge on
// every line of the test data, the shared samples (when there) and
// generated stores: a line whose record records a context size is one the
// filter lets through. Every agent must have some such lines here, or the
// test would prove nothing of its filter.
func TestContextFilters(t *testing.T) {
	dirs := []string{filepath.Join(repoRoot, "testdata")}
	if d := filepath.Join(repoRoot, "..", "shared", "samples"); isDir(d) {
		dirs = append(dirs, d)
	} else {
		t.Logf("%s not available: skipped", d)
	}
	if !testing.Short() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			t.Fatalf("no go command to run internal/gen: %v", err)
		}
		for _, kind := range []string{"claude", "codex", "kimicode"} {
			out := filepath.Join(t.TempDir(), kind)
			cmd := exec.Command(gobin, "run", filepath.Join(repoRoot, "internal", "gen"), kind, "-out", out, "-size", "3MB", "-files", "3")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("internal/gen %s: %v\n%s", kind, err, b)
			}
			dirs = append(dirs, out)
		}
	}
	recorded := map[session.Agent]int{}
	lines := 0
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".jsonl") {
				return err
			}
			a, err := session.DetectFile(p)
			if err != nil || session.HomeOf(a) == nil {
				return nil // not a session file (an index, a fixture of something else)
			}
			filter, ok := session.As[session.ContextFilter](a)
			if !ok {
				t.Errorf("%s has no ContextFilter", a)
				return nil
			}
			return session.ReadFile(p, session.HomeOf(a), func(r *session.Record) error {
				lines++
				if n, _ := session.RecordedContext(r); n >= 0 {
					recorded[a]++
					if !filter.MayRecordContext(r.Line.Raw) {
						t.Errorf("%s:%d: records a context of %d tokens; %s's filter says it does not", p, r.Line.Num, n, a)
					}
				}
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d lines; lines recording a context, by agent: %v", lines, recorded)
	for _, a := range []session.Agent{session.Claude, session.Codex, session.Kimi, session.KimiCode, session.Clawdcode} {
		if recorded[a] == 0 {
			t.Errorf("no line of %s records a context here: its filter is not tested", a)
		}
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// contextLines are lines, by agent, that record a context size in a way
// the test data has not: keys in another case or escaped, the records
// the clients seldom write.
var contextLines = []struct {
	agent session.Agent
	line  string
}{
	{session.Claude, `{"type":"assistant","uuid":"a","message":{"role":"assistant","model":"m","content":[],"USAGE":{"input_tokens":5}}}`},
	{session.Claude, `{"type":"assistant","uuid":"a","message":{"role":"assistant","model":"m","content":[],"\u0075sage":{"input_tokens":5}}}`},
	{session.Claude, `{"type":"system","subtype":"compact_boundary","uuid":"b","compactMetadata":{"PostTokens":900}}`},
	{session.Codex, `{"timestamp":"2026-11-01T10:00:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{"Last_Token_Usage":{"total_tokens":9}}}}`},
	{session.Kimi, `{"role":"_usage","TOKEN_COUNT":10}`},
	{session.KimiCode, `{"type":"context.update_token_count","tokenCount":123,"time":1795665981817}`},
	{session.KimiCode, `{"type":"context.update_token_count","TOKENCOUNT":123,"time":1795665981817}`},
	{session.KimiCode, `{"type":"token_counting.measured","Tokens":5,"time":1795665981817}`},
}

func TestContextFilterCases(t *testing.T) {
	for _, c := range contextLines {
		l, err := jsonl.NewReader(strings.NewReader(c.line + "\n")).Next()
		if err != nil {
			t.Fatal(err)
		}
		r := session.Decode(session.HomeOf(c.agent), l)
		n, _ := session.RecordedContext(&r)
		if n < 0 {
			t.Fatalf("%s: %s records no context: not a case of this test", c.agent, c.line)
		}
		filter, _ := session.As[session.ContextFilter](c.agent)
		if !filter.MayRecordContext(l.Raw) {
			t.Errorf("%s: %s records a context of %d tokens; the filter says it does not", c.agent, c.line, n)
		}
	}
}
