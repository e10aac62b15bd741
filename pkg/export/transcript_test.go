package export

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/session"
)

// hostile is a Claude session whose prompt tries to break out of every
// format: HTML tags and a script, a Markdown fence, a heading, a terminal
// escape; the tool result is long enough to fold.
func hostile(t *testing.T) *session.Session {
	t.Helper()
	prompt := "</pre><script>alert(1)</script><img src=x onerror=alert(2)>\n```\n# not a heading\n\x1b[2J"
	p, _ := json.Marshal(prompt)
	var out strings.Builder
	for i := 0; i < 30; i++ {
		out.WriteString("line\n")
	}
	o, _ := json.Marshal(out.String())
	lines := []string{
		`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":` + string(p) + `},"uuid":"u1","timestamp":"2026-11-22T02:58:30.000Z","cwd":"/w","sessionId":"s1","version":"2.1.197"}`,
		`{"parentUuid":"u1","isSidechain":false,"message":{"id":"m1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":1,"output_tokens":1}},"type":"assistant","uuid":"a1","timestamp":"2026-11-22T02:58:31.000Z","sessionId":"s1"}`,
		`{"parentUuid":"a1","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":` + string(o) + `}]},"uuid":"r1","timestamp":"2026-11-22T02:58:32.000Z","sessionId":"s1"}`,
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "11111111-2222-4333-8444-555555555555.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &session.Session{Agent: session.Claude, ID: "11111111-2222-4333-8444-555555555555", Main: path,
		Files: []session.File{{Path: path, Role: session.FileMain}}}
}

func write(t *testing.T, s *session.Session, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(context.Background(), &b, s, Options{Format: format, Title: "<b>title</b>"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLEscapesSessionText(t *testing.T) {
	out := write(t, hostile(t), HTML)
	for _, bad := range []string{"<script", "<img", "</pre><script", "<b>title"} {
		if strings.Contains(out, bad) {
			t.Errorf("HTML carries %q raw", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "Content-Security-Policy", "default-src &#39;none&#39;",
		"<details><summary>18 more lines</summary>", "<h2>Turn 0</h2>", "</html>\n"} {
		if !strings.Contains(out, want) && !strings.Contains(out, strings.ReplaceAll(want, "&#39;", "'")) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(out, "http://") || strings.Contains(out, "https://") || strings.Contains(out, "src=\"") {
		t.Error("HTML refers to something outside the page")
	}
}

func TestMarkdownFenceHoldsSessionText(t *testing.T) {
	out := write(t, hostile(t), Markdown)
	// the prompt holds ``` so its block is fenced with ````
	if !strings.Contains(out, "````text\n</pre><script>") {
		t.Errorf("the prompt's fence is not longer than its backticks:\n%s", out)
	}
	if strings.Contains(out, "\n# not a heading") && !strings.Contains(out, "````text\n</pre>") {
		t.Error("session text became a heading")
	}
	if !strings.Contains(out, "# \\<b\\>title\\</b\\>\n") {
		t.Errorf("the title is not escaped:\n%s", out[:80])
	}
	if !strings.Contains(out, "<details><summary>18 more lines</summary>") {
		t.Error("the long tool result is not folded")
	}
}

func TestJSONTranscript(t *testing.T) {
	out := write(t, hostile(t), JSON)
	var v struct {
		Agent   string `json:"agent"`
		Session string `json:"session"`
		Items   []struct {
			Turn int    `json:"turn"`
			Role string `json:"role"`
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if v.Agent != "claude" || len(v.Items) != 3 || v.Items[1].Type != "tool_call" || !strings.HasPrefix(v.Items[0].Text, "</pre><script>") {
		t.Errorf("%+v", v)
	}
}
