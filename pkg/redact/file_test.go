package redact_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakesecret"
	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/redact"
	"github.com/sessctl/sessctl/pkg/session"
)

func redactFile(t *testing.T, agent session.Agent, in string) (string, *redact.Report) {
	t.Helper()
	d, err := redact.Default()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := redact.File(context.Background(), strings.NewReader(in), &out, agent, d)
	if err != nil {
		t.Fatal(err)
	}
	// a dry run reports the same
	dry, err := redact.File(context.Background(), strings.NewReader(in), nil, agent, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Hits) != len(rep.Hits) || dry.Lines != rep.Lines {
		t.Errorf("dry run: %d hits in %d lines, rewrite: %d in %d", len(dry.Hits), dry.Lines, len(rep.Hits), rep.Lines)
	}
	return out.String(), rep
}

func TestFileClaude(t *testing.T) {
	pat := fakesecret.Get("github-pat")
	key := fakesecret.Get("anthropic-key")
	// hand-written in Claude Code's shape: JSON.stringify, compact, raw UTF-8
	in := fakesecret.Expand(
		`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"push with @FAKE:github-pat@ — danke"},"uuid":"u1","timestamp":"2026-11-01T10:00:00.000Z"}` + "\n" +
			`{"parentUuid":"u1","type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ANTHROPIC_API_KEY=@FAKE:anthropic-key@ claude -p hi","timeout":120000}}],"usage":{"input_tokens":3,"output_tokens":1.0}},"uuid":"a1"}` + "\n" +
			`{"parentUuid":"a1","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"nothing secret here, \u00e9\t\"quoted\""}]},"uuid":"u2"}` + "\r\n" +
			`{"type":"summary","summary":"no newline at the end"}`)
	want := strings.NewReplacer(pat, "[REDACTED:github-pat]", key, "[REDACTED:anthropic-api-key]").Replace(in)
	got, rep := redactFile(t, session.Claude, in)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(rep.Hits) != 2 || rep.Lines != 2 {
		t.Fatalf("hits %+v, lines %d", rep.Hits, rep.Lines)
	}
	h := rep.Hits[1]
	if h.Line != 2 || h.Rule != "anthropic-api-key" || h.Field != "message.content[1].input.command" {
		t.Errorf("hit %+v", h)
	}
	if rep.Hits[0].Field != "message.content" || rep.Hits[0].Offset != 0 {
		t.Errorf("hit %+v", rep.Hits[0])
	}
	for _, h := range rep.Hits {
		if strings.Contains(h.Preview, pat[4:12]) || strings.Contains(h.Preview, key[14:22]) {
			t.Errorf("preview shows the secret: %q", h.Preview)
		}
	}
}

func TestFilePrivateKeyEscaped(t *testing.T) {
	// the key's newlines are \n escapes in the line: the decoded string is
	// searched, and the changed string written back escaped
	in := fakesecret.Expand(`{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"cat id_rsa\n@FAKE:private-key:json@\n"}}` + "\n")
	want := `{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"cat id_rsa\n[REDACTED:private-key]\n"}}` + "\n"
	got, rep := redactFile(t, session.Codex, in)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(rep.Hits) != 1 || rep.Hits[0].Field != "payload.output" {
		t.Errorf("hits %+v", rep.Hits)
	}
}

func TestFileKimiStyles(t *testing.T) {
	// kimi-cli: its own records in json.dumps style (spaced, \u escapes),
	// its messages compact with raw UTF-8; each changed line stays in its
	// style
	in := fakesecret.Expand(
		`{"role": "_system_prompt", "content": "caf\u00e9 \u2014 DB_PASSWORD=@FAKE:env-password@"}` + "\n" +
			`{"role": "_checkpoint", "id": 0}` + "\n" +
			`{"role":"user","content":"café — DB_PASSWORD=@FAKE:env-password@"}` + "\n" +
			`{"role": "_usage", "token_count": 12}` + "\n")
	want := `{"role": "_system_prompt", "content": "caf\u00e9 \u2014 DB_PASSWORD=[REDACTED:env-assignment]"}` + "\n" +
		`{"role": "_checkpoint", "id": 0}` + "\n" +
		`{"role":"user","content":"café — DB_PASSWORD=[REDACTED:env-assignment]"}` + "\n" +
		`{"role": "_usage", "token_count": 12}` + "\n"
	got, rep := redactFile(t, session.Kimi, in)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if rep.Lines != 2 {
		t.Errorf("%d lines changed", rep.Lines)
	}
}

func TestFileCorruptLine(t *testing.T) {
	// a torn line is searched as text: a plain secret is replaced and the
	// line stays as broken as it was; a line without secrets is untouched
	in := fakesecret.Expand(`{"type":"user","message":{"content":"key @FAKE:aws-key-id@ and more` + "\n" + `not json at all` + "\n")
	got, rep := redactFile(t, session.Claude, in)
	want := `{"type":"user","message":{"content":"key [REDACTED:aws-access-token] and more` + "\n" + `not json at all` + "\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(rep.Hits) != 1 || rep.Hits[0].Unredacted || rep.Hits[0].Field != "" {
		t.Errorf("hits %+v", rep.Hits)
	}
	for i, l := range strings.SplitAfter(got, "\n") {
		if l != "" && i > 0 && jsonl.Valid([]byte(strings.TrimSuffix(l, "\n"))) {
			t.Errorf("line %d became valid JSON", i+1)
		}
	}
}

func TestFileNoSecretsByteForByte(t *testing.T) {
	in := `{"b":1,"a":"x"}` + "\n" + `{"type":"user","message":{"content":"the token count is 12"}}` + "\n\n" + `{"z" : [1, 2.50, "tok\u0065n"] }` + "\r\n"
	got, rep := redactFile(t, session.Claude, in)
	if got != in || len(rep.Hits) != 0 || rep.Lines != 0 {
		t.Errorf("got %q, %+v", got, rep)
	}
}

func TestFileEveryKindInEveryAgent(t *testing.T) {
	// each fake secret, in a string of each agent's line shape: gone from
	// the output, every line still valid JSON with the same keys
	for _, agent := range []session.Agent{session.Claude, session.Codex, session.Kimi, session.Clawdcode} {
		for _, c := range fakesecret.Cases() {
			line := `{"role":"user","uuid":"id-1","content":[{"type":"text","text":` + jsonString(c.Line()) + `}],"n":1}`
			got, rep := redactFile(t, agent, line+"\n")
			if strings.Contains(got, jsonString(c.Secret)[1:len(jsonString(c.Secret))-1]) || len(rep.Hits) != 1 {
				t.Errorf("%s %s: not redacted: %s", agent, c.Name, got)
			}
			want := `{"role":"user","uuid":"id-1","content":[{"type":"text","text":` + jsonString(strings.Replace(c.Line(), c.Secret, redact.Placeholder(c.Rule), 1)) + `}],"n":1}` + "\n"
			if got != want {
				t.Errorf("%s %s:\n got %s\nwant %s", agent, c.Name, got, want)
			}
		}
	}
}

// jsonString is s as JSON.stringify writes it (enough for the test texts:
// quotes, backslashes and newlines).
func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func TestFileJSONInAString(t *testing.T) {
	// Codex keeps a call's arguments as a JSON text in a string. Redacted
	// as text, the JWT's pattern would take the backslash of the \" after
	// it and break that JSON; the JSON inside is redacted instead.
	in := fakesecret.Expand(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":\"echo \\\"@FAKE:jwt@\\\" done\"}","call_id":"c1"}}` + "\n")
	want := `{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":\"echo \\\"[REDACTED:jwt]\\\" done\"}","call_id":"c1"}}` + "\n"
	got, rep := redactFile(t, session.Codex, in)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(rep.Hits) != 1 || rep.Hits[0].Field != "payload.arguments(json).command" {
		t.Errorf("hits %+v", rep.Hits)
	}
}
