package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// event is one parsed SSE event.
type event struct {
	Name string
	Data map[string]any
	Raw  string
}

// parseSSE checks the framing strictly: every event is exactly
// "event: <name>\ndata: <one-line JSON object>\n\n", and the JSON's "type"
// equals the event name.
func parseSSE(t *testing.T, body string) []event {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("SSE body does not end with a blank line: %q", tail(body))
	}
	var evs []event
	for _, chunk := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		lines := strings.Split(chunk, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("bad SSE event framing: %q", chunk)
		}
		name := strings.TrimPrefix(lines[0], "event: ")
		raw := strings.TrimPrefix(lines[1], "data: ")
		var data map[string]any
		if err := json.Unmarshal([]byte(raw), &data); err != nil {
			t.Fatalf("event %s: data is not a JSON object: %v: %s", name, err, raw)
		}
		if data["type"] != name {
			t.Fatalf("event %s: data type is %v", name, data["type"])
		}
		if !strings.HasPrefix(raw, `{"type":`) {
			t.Errorf("event %s: \"type\" is not the first key: %s", name, raw)
		}
		evs = append(evs, event{Name: name, Data: data, Raw: raw})
	}
	return evs
}

func tail(s string) string {
	if len(s) > 80 {
		return s[len(s)-80:]
	}
	return s
}

func names(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func post(t *testing.T, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var bashTool = map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}}

// claudeBody builds a Messages request the way Claude Code does: a leading
// system-reminder block in the first user message and role "system"
// entries inside messages.
func claudeBody(t *testing.T, msgs ...map[string]any) string {
	t.Helper()
	return mustMarshal(t, map[string]any{
		"model": "claude-opus-4-8", "max_tokens": 64000, "stream": true,
		"system":   []any{map[string]any{"type": "text", "text": "You are Claude Code."}},
		"tools":    []any{bashTool},
		"messages": msgs,
	})
}

func userMsg(content any) map[string]any { return map[string]any{"role": "user", "content": content} }

func textBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func firstUser(prompt string) map[string]any {
	return userMsg([]any{textBlock("<system-reminder>\nskills…\n</system-reminder>"), textBlock(prompt)})
}

func TestStartRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "example.com:80", "nonsense"} {
		if s, err := Start(Options{Addr: addr}); err == nil {
			s.Close()
			t.Errorf("Start(%q) succeeded; want an error", addr)
		}
	}
	s := start(t, Options{})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || strings.HasSuffix(s.URL(), ":0") {
		t.Errorf("URL() = %q", s.URL())
	}
}

func TestAnthropicDefaultToolCall(t *testing.T) {
	s := start(t, Options{})
	resp, body := post(t, s.URL()+"/v1/messages?beta=true", claudeBody(t, firstUser("Please list the files")), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.HasPrefix(resp.Header.Get("request-id"), "req_") {
		t.Errorf("request-id header = %q", resp.Header.Get("request-id"))
	}
	evs := parseSSE(t, body)
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if got := names(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	msg := evs[0].Data["message"].(map[string]any)
	if msg["role"] != "assistant" || msg["model"] != "claude-opus-4-8" || !strings.HasPrefix(msg["id"].(string), "msg_") {
		t.Errorf("message_start message = %v", msg)
	}
	var text, partial string
	for _, e := range evs {
		if e.Name != "content_block_delta" {
			continue
		}
		d := e.Data["delta"].(map[string]any)
		switch d["type"] {
		case "text_delta":
			text += d["text"].(string)
		case "input_json_delta":
			partial += d["partial_json"].(string)
		}
	}
	if text != "Let me list the files." {
		t.Errorf("text = %q", text)
	}
	if partial != `{"command":"ls"}` {
		t.Errorf("tool input = %q", partial)
	}
	tool := evs[6].Data["content_block"].(map[string]any)
	if tool["type"] != "tool_use" || tool["name"] != "Bash" || !strings.HasPrefix(tool["id"].(string), "toolu_") {
		t.Errorf("tool_use block = %v", tool)
	}
	if evs[6].Data["index"] != 1.0 {
		t.Errorf("tool_use index = %v", evs[6].Data["index"])
	}
	delta := evs[10].Data["delta"].(map[string]any)
	if delta["stop_reason"] != "tool_use" {
		t.Errorf("stop_reason = %v", delta["stop_reason"])
	}
	u := evs[10].Data["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		if v, ok := u[k].(float64); !ok || v <= 0 {
			t.Errorf("usage %s = %v", k, u[k])
		}
	}
}

// claudeTurn runs one Messages request and returns the concatenated text,
// the stop reason and the events.
func claudeTurn(t *testing.T, s *Server, body string) (string, string, []event) {
	t.Helper()
	resp, b := post(t, s.URL()+"/v1/messages?beta=true", body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	evs := parseSSE(t, b)
	var text, stop string
	for _, e := range evs {
		switch e.Name {
		case "content_block_delta":
			if d := e.Data["delta"].(map[string]any); d["type"] == "text_delta" {
				text += d["text"].(string)
			}
		case "message_delta":
			stop = e.Data["delta"].(map[string]any)["stop_reason"].(string)
		}
	}
	return text, stop, evs
}

func TestAnthropicScript(t *testing.T) {
	s := start(t, Options{})
	toolUse := map[string]any{"role": "assistant", "content": []any{
		textBlock("Let me list the files."),
		map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls"}},
	}}
	toolResult := userMsg([]any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt\n\nb.txt"}})
	system := map[string]any{"role": "system", "content": "Called the Read tool with …"}

	cases := []struct {
		name      string
		body      string
		wantText  string
		wantStop  string
		wantBlock []string // content_block_start types
	}{
		{"notool", claudeBody(t, firstUser("NOTOOL turn A, a prompt that is longer than forty characters")),
			"ACK: NOTOOL turn A, a prompt that is longer t", "end_turn", []string{"text"}},
		{"tool result", claudeBody(t, firstUser("list"), toolUse, toolResult, system),
			"Done. The tool returned: a.txt b.txt", "end_turn", []string{"text"}},
		{"think", claudeBody(t, firstUser("THINK NOTOOL hi")),
			"ACK: THINK NOTOOL hi", "end_turn", []string{"thinking", "text"}},
		{"string content resume", claudeBody(t, firstUser("NOTOOL turn A"),
			map[string]any{"role": "assistant", "content": []any{textBlock("ACK")}}, userMsg("NOTOOL turn B")),
			"ACK: NOTOOL turn B", "end_turn", []string{"text"}},
		{"compaction", claudeBody(t, firstUser("NOTOOL turn A"),
			map[string]any{"role": "assistant", "content": []any{textBlock("ACK")}},
			userMsg("Your task is to create a detailed summary of the conversation so far.\nCRITICAL: Respond with TEXT ONLY.")),
			"<analysis>\nFake analysis of the conversation.\n</analysis>\n<summary>\nFAKE SUMMARY. Earlier user messages:\n- NOTOOL turn A\n</summary>",
			"end_turn", []string{"text"}},
		{"read", claudeBody(t, firstUser("show READ:/tmp/x.txt please")),
			"Let me read the file.", "tool_use", []string{"text", "tool_use"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, stop, evs := claudeTurn(t, s, c.body)
			if text != c.wantText || stop != c.wantStop {
				t.Errorf("got (%q, %q), want (%q, %q)", text, stop, c.wantText, c.wantStop)
			}
			var blocks []string
			for _, e := range evs {
				if e.Name == "content_block_start" {
					blocks = append(blocks, e.Data["content_block"].(map[string]any)["type"].(string))
				}
			}
			if !reflect.DeepEqual(blocks, c.wantBlock) {
				t.Errorf("blocks %v, want %v", blocks, c.wantBlock)
			}
		})
	}

	// THINK: thinking deltas and a signature delta.
	_, _, evs := claudeTurn(t, s, claudeBody(t, firstUser("THINK NOTOOL hi")))
	var thinking, sig string
	for _, e := range evs {
		if e.Name == "content_block_delta" {
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "thinking_delta":
				thinking += d["thinking"].(string)
			case "signature_delta":
				sig += d["signature"].(string)
			}
		}
	}
	if thinking == "" || sig == "" {
		t.Errorf("thinking %q, signature %q", thinking, sig)
	}
}

func TestAnthropicUsageDeterministicAndBig(t *testing.T) {
	body := claudeBody(t, firstUser("BIGUSAGE NOTOOL"))
	p1, err := PlanAnthropic([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := PlanAnthropic([]byte(body))
	if !reflect.DeepEqual(p1, p2) {
		t.Errorf("plans differ:\n%+v\n%+v", p1, p2)
	}
	if p1.Usage.CacheReadInputTokens != 185000 {
		t.Errorf("BIGUSAGE cache_read = %d", p1.Usage.CacheReadInputTokens)
	}
	est := (len(body) + 3) / 4
	small, _ := PlanAnthropic([]byte(claudeBody(t, firstUser("NOTOOL"))))
	u := small.Usage
	if got := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens; got < est-10 || got > est {
		t.Errorf("input total %d, want about %d", got, est)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	s := start(t, Options{})
	body := strings.Replace(claudeBody(t, firstUser("NOTOOL hi")), `"stream":true`, `"stream":false`, 1)
	resp, b := post(t, s.URL()+"/v1/messages", body, nil)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var msg struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Content    []struct{ Type, Text string }
		Usage      map[string]any
	}
	if err := json.Unmarshal([]byte(b), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != "ACK: NOTOOL hi" {
		t.Errorf("message = %s", b)
	}
}

// codexBody builds a Responses request the way Codex does: a developer
// message first, then injected context, then the conversation.
func codexBody(t *testing.T, items ...map[string]any) string {
	t.Helper()
	input := []any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "You are a coding agent running in the Codex CLI"}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"}}},
	}
	for _, it := range items {
		input = append(input, it)
	}
	return mustMarshal(t, map[string]any{
		"model": "gpt-5", "stream": true, "tool_choice": "auto", "store": false,
		"tools": []any{map[string]any{"type": "function", "name": "exec_command"}},
		"input": input,
	})
}

func codexUser(s string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": s}}}
}

func codexTurn(t *testing.T, s *Server, body string) []event {
	t.Helper()
	resp, b := post(t, s.URL()+"/v1/responses", body, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	evs := parseSSE(t, b)
	for i, e := range evs {
		if e.Data["sequence_number"] != float64(i) {
			t.Fatalf("event %d (%s): sequence_number %v", i, e.Name, e.Data["sequence_number"])
		}
	}
	if len(evs) < 3 || evs[0].Name != "response.created" || evs[1].Name != "response.in_progress" || evs[len(evs)-1].Name != "response.completed" {
		t.Fatalf("events %v", names(evs))
	}
	return evs
}

func completedOutput(t *testing.T, evs []event) ([]any, map[string]any) {
	t.Helper()
	r := evs[len(evs)-1].Data["response"].(map[string]any)
	if r["status"] != "completed" {
		t.Errorf("status %v", r["status"])
	}
	return r["output"].([]any), r["usage"].(map[string]any)
}

func TestResponsesDefaultToolCall(t *testing.T) {
	s := start(t, Options{})
	evs := codexTurn(t, s, codexBody(t, codexUser("Please list the files")))
	want := []string{"response.created", "response.in_progress",
		"response.output_item.added", "response.output_text.delta", "response.output_text.delta", "response.output_text.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done",
		"response.completed"}
	if got := names(evs); !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	out, usage := completedOutput(t, evs)
	if len(out) != 2 {
		t.Fatalf("output %v", out)
	}
	call := out[1].(map[string]any)
	if call["type"] != "function_call" || call["name"] != "exec_command" || call["arguments"] != `{"cmd":"ls"}` ||
		!strings.HasPrefix(call["call_id"].(string), "call_") {
		t.Errorf("call %v", call)
	}
	var args string
	for _, e := range evs {
		if e.Name == "response.function_call_arguments.delta" {
			args += e.Data["delta"].(string)
		}
	}
	if args != `{"cmd":"ls"}` {
		t.Errorf("argument deltas %q", args)
	}
	in, _ := usage["input_tokens"].(float64)
	outTok, _ := usage["output_tokens"].(float64)
	cached := usage["input_tokens_details"].(map[string]any)["cached_tokens"].(float64)
	if in <= 0 || outTok <= 0 || cached <= 0 || cached > in || usage["total_tokens"] != in+outTok {
		t.Errorf("usage %v", usage)
	}
}

func codexText(t *testing.T, evs []event) (string, []string) {
	t.Helper()
	out, _ := completedOutput(t, evs)
	var text string
	var types []string
	for _, it := range out {
		m := it.(map[string]any)
		types = append(types, m["type"].(string))
		if m["type"] == "message" {
			text += m["content"].([]any)[0].(map[string]any)["text"].(string)
		}
	}
	var deltas string
	for _, e := range evs {
		if e.Name == "response.output_text.delta" {
			deltas += e.Data["delta"].(string)
		}
	}
	if deltas != text {
		t.Errorf("deltas %q != final text %q", deltas, text)
	}
	return text, types
}

func TestResponsesScript(t *testing.T) {
	s := start(t, Options{})
	call := map[string]any{"type": "function_call", "name": "exec_command", "arguments": `{"cmd":"ls"}`, "call_id": "call_1"}
	output := map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "Process exited with code 0\nOutput:\na.txt"}
	assistant := map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "ACK"}}}
	cases := []struct {
		name      string
		body      string
		wantText  string
		wantTypes []string
	}{
		{"notool", codexBody(t, codexUser("NOTOOL turn A")), "ACK: NOTOOL turn A", []string{"message"}},
		{"tool result", codexBody(t, codexUser("list"), call, output),
			"Done. The command output was: Process exited with code 0 Output: a.txt", []string{"message"}},
		{"think", codexBody(t, codexUser("THINK then list")), "Let me list the files.", []string{"reasoning", "message", "function_call"}},
		{"compaction", codexBody(t, codexUser("NOTOOL turn A"), assistant,
			codexUser("You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary")),
			"<analysis>\nFake analysis of the conversation.\n</analysis>\n<summary>\nFAKE SUMMARY. Earlier user messages:\n- NOTOOL turn A\n</summary>",
			[]string{"message"}},
		{"bridge", codexBody(t, codexUser("turn 1"), codexUser("Another language model started to solve this problem and produced a summary")),
			"ACK: continuing after compaction.", []string{"message"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, types := codexText(t, codexTurn(t, s, c.body))
			if text != c.wantText || !reflect.DeepEqual(types, c.wantTypes) {
				t.Errorf("got (%q, %v), want (%q, %v)", text, types, c.wantText, c.wantTypes)
			}
		})
	}
}

func TestResponsesReasoningAndBigUsage(t *testing.T) {
	s := start(t, Options{})
	evs := codexTurn(t, s, codexBody(t, codexUser("THINK BIGUSAGE list")))
	var got []string
	for _, e := range evs[:8] {
		got = append(got, e.Name)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added",
		"response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
		"response.reasoning_summary_part.done"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events %v", got)
	}
	out, usage := completedOutput(t, evs)
	rs := out[0].(map[string]any)
	if rs["type"] != "reasoning" || rs["encrypted_content"] == "" || len(rs["summary"].([]any)) != 1 {
		t.Errorf("reasoning item %v", rs)
	}
	if usage["input_tokens"] != 200000.0 || usage["input_tokens_details"].(map[string]any)["cached_tokens"] != 150000.0 {
		t.Errorf("usage %v", usage)
	}
	if r := usage["output_tokens_details"].(map[string]any)["reasoning_tokens"].(float64); r <= 0 || r > usage["output_tokens"].(float64) {
		t.Errorf("reasoning tokens %v", usage)
	}
	// The answer to the tool result of a BIGUSAGE turn reports normal usage.
	call := map[string]any{"type": "function_call", "name": "exec_command", "arguments": `{}`, "call_id": "c"}
	output := map[string]any{"type": "function_call_output", "call_id": "c", "output": "x"}
	p, err := PlanResponses([]byte(codexBody(t, codexUser("BIGUSAGE list"), call, output)))
	if err != nil {
		t.Fatal(err)
	}
	if p.Usage.InputTokens == 200000 {
		t.Errorf("tool-result answer has BIGUSAGE usage")
	}
}

func TestLoggingBeforeAnswer(t *testing.T) {
	var mem bytes.Buffer
	var memMu sync.Mutex
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	s := start(t, Options{LogPath: logPath, Log: lockedWriter{&memMu, &mem}})

	// HEAD / is answered 404 and logged.
	req, _ := http.NewRequest(http.MethodHead, s.URL()+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("HEAD / status %d", resp.StatusCode)
	}

	// A streamed request is in the log before its first event arrives.
	body := claudeBody(t, firstUser("NOTOOL logged"))
	hreq, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages?beta=true", strings.NewReader(body))
	hreq.Header.Set("x-api-key", "sk-ant-secret")
	hreq.Header.Set("Authorization", "Bearer sk-secret")
	hreq.Header.Set("X-Claude-Code-Session-Id", "sess-1")
	resp, err = http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || first != "event: message_start\n" {
		t.Fatalf("first line %q, %v", first, err)
	}
	if n := s.Count(); n != 2 {
		t.Errorf("after the first event: %d requests logged, want 2", n)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	post(t, s.URL()+"/v1/responses", codexBody(t, codexUser("NOTOOL codex")), map[string]string{
		"X-Codex-Turn-Metadata": `{"request_kind":"turn","history_initialization":"new"}`,
	})
	post(t, s.URL()+"/v1/messages", "not json", nil)

	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	if r := reqs[0]; r.N != 1 || r.Kind != KindOther || r.Method != "HEAD" || r.Path != "/" {
		t.Errorf("request 1 = %+v", r)
	}
	r := reqs[1]
	if r.Kind != KindMessages || r.Query != "beta=true" || r.Header("x-claude-code-session-id") != "sess-1" {
		t.Errorf("request 2 = %+v", r)
	}
	if r.Reply == nil || r.Reply.Reason != ReasonNoTool || r.Reply.Text != "ACK: NOTOOL logged" {
		t.Errorf("request 2 reply = %+v", r.Reply)
	}
	if texts, err := r.UserTexts(); err != nil || !reflect.DeepEqual(texts, []string{"NOTOOL logged"}) {
		t.Errorf("UserTexts = %q, %v", texts, err)
	}
	var compact bytes.Buffer
	json.Compact(&compact, []byte(body))
	if string(r.Body) != compact.String() {
		t.Errorf("logged body differs from the request body")
	}
	if md := reqs[2].CodexTurnMetadata(); md["request_kind"] != "turn" {
		t.Errorf("turn metadata %v", md)
	}
	if texts, _ := reqs[2].UserTexts(); !reflect.DeepEqual(texts, []string{"NOTOOL codex"}) {
		t.Errorf("codex UserTexts = %q", texts)
	}
	if reqs[3].Error == "" || reqs[3].BodyText != "not json" {
		t.Errorf("bad request logged as %+v", reqs[3])
	}

	// The file and the writer hold the same lines, one per request, with no
	// credentials.
	fileLog, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	memMu.Lock()
	memLog := mem.String()
	memMu.Unlock()
	if string(fileLog) != memLog {
		t.Errorf("log file and log writer differ")
	}
	lines := strings.Split(strings.TrimSuffix(memLog, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d log lines", len(lines))
	}
	for i, l := range lines {
		var got Request
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if got.N != i+1 {
			t.Errorf("line %d has n=%d", i+1, got.N)
		}
	}
	for _, secret := range []string{"sk-ant-secret", "sk-secret", "x-api-key", "authorization"} {
		if strings.Contains(strings.ToLower(memLog), secret) {
			t.Errorf("log contains %q", secret)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestUnknownRoutesAndExtras(t *testing.T) {
	s := start(t, Options{})
	resp, _ := post(t, s.URL()+"/v1/completions", "{}", nil)
	if resp.StatusCode != 404 {
		t.Errorf("unknown route: status %d", resp.StatusCode)
	}
	resp, b := post(t, s.URL()+"/v1/messages/count_tokens", claudeBody(t, firstUser("x")), nil)
	if resp.StatusCode != 200 || !strings.Contains(b, `"input_tokens"`) {
		t.Errorf("count_tokens: %d %s", resp.StatusCode, b)
	}
	r, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Errorf("models: %d", r.StatusCode)
	}
}

// TestDeterministic: the same requests in the same order get byte-identical
// answers from two servers.
func TestDeterministic(t *testing.T) {
	bodies := []struct{ path, body string }{
		{"/v1/messages?beta=true", claudeBody(t, firstUser("THINK list"))},
		{"/v1/responses", codexBody(t, codexUser("THINK list"))},
	}
	var answers [2][]string
	for i := range answers {
		s := start(t, Options{})
		for _, b := range bodies {
			_, a := post(t, s.URL()+b.path, b.body, nil)
			answers[i] = append(answers[i], a)
		}
	}
	if !reflect.DeepEqual(answers[0], answers[1]) {
		t.Errorf("answers differ:\n%s\n%s", answers[0], answers[1])
	}
}

func TestConcurrentRequests(t *testing.T) {
	s := start(t, Options{LogPath: filepath.Join(t.TempDir(), "log.jsonl")})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := claudeBody(t, firstUser(fmt.Sprintf("NOTOOL %d", i)))
			req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	reqs := s.Requests()
	ids := map[string]bool{}
	for i, r := range reqs {
		if r.N != i+1 {
			t.Errorf("request %d numbered %d", i+1, r.N)
		}
		ids[r.Reply.ID] = true
	}
	if len(reqs) != 20 || len(ids) != 20 {
		t.Errorf("%d requests, %d distinct reply ids", len(reqs), len(ids))
	}
}

// TestAnthropicAgentForeground: an AGENT prompt asks for a foreground
// agent when the request's Agent tool takes run_in_background (Claude Code
// 2.1.330), and sends no such key when it does not (2.1.197).
func TestAnthropicAgentForeground(t *testing.T) {
	body := func(props string) []byte {
		return []byte(`{"model":"claude-opus-5-5","stream":true,"messages":[{"role":"user","content":"AGENT please"}],` +
			`"tools":[{"name":"Bash","input_schema":{"type":"object"}},{"name":"Agent","input_schema":{"type":"object","properties":{` + props + `}}}]}`)
	}
	for _, c := range []struct {
		props string
		want  string
	}{
		{`"prompt":{"type":"string"},"run_in_background":{"type":"boolean"}`, `"run_in_background":false`},
		{`"prompt":{"type":"string"}`, ``},
	} {
		p, err := PlanAnthropic(body(c.props))
		if err != nil {
			t.Fatal(err)
		}
		if p.Tool == nil || p.Tool.Name != "Agent" {
			t.Fatalf("plan %+v", p)
		}
		in := string(p.Tool.Input)
		if c.want != "" && !strings.Contains(in, c.want) || c.want == "" && strings.Contains(in, "run_in_background") {
			t.Errorf("tool properties %s: input %s", c.props, in)
		}
	}
}
