package fakemodel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// chatBody builds a Chat Completions request the way Kimi Code 2.1.0 sends
// it: a system message first, <system-reminder> user messages after the
// prompt, usage requested in the stream.
func chatBody(t *testing.T, msgs ...map[string]any) string {
	t.Helper()
	all := append([]map[string]any{{"role": "system", "content": "You are Kimi Code CLI."}}, msgs...)
	return mustMarshal(t, map[string]any{
		"model": "gpt-5", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "Bash",
			"parameters": map[string]any{"type": "object"}}}},
		"messages": all,
	})
}

func chatUser(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

var chatReminder = chatUser("<system-reminder>\nAuto permission mode is active.\n</system-reminder>")

// chatChunk is one parsed data event of a Chat Completions stream.
type chatChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// parseChat checks the framing strictly: "data: <one-line JSON>\n\n"
// events without event names, ending in "data: [DONE]\n\n".
func parseChat(t *testing.T, body string) []chatChunk {
	t.Helper()
	if !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("stream does not end with [DONE]: %q", tail(body))
	}
	var out []chatChunk
	for _, ev := range strings.Split(strings.TrimSuffix(body, "data: [DONE]\n\n"), "\n\n") {
		if ev == "" {
			continue
		}
		if !strings.HasPrefix(ev, "data: ") || strings.Contains(ev, "\n") {
			t.Fatalf("bad chat stream event framing: %q", ev)
		}
		var c chatChunk
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &c); err != nil {
			t.Fatalf("event is not JSON: %v: %s", err, ev)
		}
		if c.Object != "chat.completion.chunk" || !strings.HasPrefix(c.ID, "chatcmpl-") {
			t.Errorf("chunk %s", ev)
		}
		out = append(out, c)
	}
	return out
}

// chatAnswer is what a client assembles from the chunks.
type chatAnswer struct {
	text, reasoning, finish string
	callID, name, args      string
	prompt, completion      int
	cached, total           int
	usageChunks             int
}

func assemble(t *testing.T, chunks []chatChunk) chatAnswer {
	t.Helper()
	var a chatAnswer
	for i, c := range chunks {
		if c.Usage != nil {
			a.usageChunks++
			if len(c.Choices) != 0 || i != len(chunks)-1 {
				t.Errorf("usage chunk %d has choices or is not last", i)
			}
			a.prompt, a.completion, a.total = c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens
			a.cached = c.Usage.PromptTokensDetails.CachedTokens
		}
		for _, ch := range c.Choices {
			a.text += ch.Delta.Content
			a.reasoning += ch.Delta.ReasoningContent
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" {
					a.callID, a.name = tc.ID, tc.Function.Name
				}
				a.args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				a.finish = *ch.FinishReason
			}
		}
	}
	return a
}

func TestChatDefaultToolCall(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "req.log")
	s := start(t, Options{LogPath: logPath})
	body := chatBody(t, chatUser("Please list the files"), chatReminder)
	resp, out := post(t, s.URL()+"/v1/chat/completions", body, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	a := assemble(t, parseChat(t, out))
	if a.text != "Let me list the files." || a.name != "Bash" || a.args != `{"command":"ls"}` ||
		!strings.HasPrefix(a.callID, "call_") || a.finish != "tool_calls" {
		t.Errorf("answer %+v", a)
	}
	if a.usageChunks != 1 || a.prompt != (len(body)+3)/4 || a.cached != a.prompt*70/100 ||
		a.completion <= 0 || a.total != a.prompt+a.completion {
		t.Errorf("usage %+v (body %d bytes)", a, len(body))
	}

	// logged the same way as the other APIs, with the prompt found past
	// the reminder
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Kind != KindChat || !reqs[0].IsModelCall() || reqs[0].Reply == nil ||
		reqs[0].Reply.Prompt != "Please list the files" || reqs[0].Reply.Reason != ReasonDefault {
		t.Fatalf("requests %+v", reqs)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var logged Request
	if err := json.Unmarshal(b, &logged); err != nil || logged.Kind != KindChat || logged.Path != "/v1/chat/completions" {
		t.Errorf("log line %s (%v)", b, err)
	}
}

func TestChatScript(t *testing.T) {
	call := map[string]any{"role": "assistant", "content": "Let me list the files.", "tool_calls": []any{
		map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "Bash", "arguments": `{"command":"ls"}`}}}}
	result := map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "Wall time: 0.032 seconds\nhello.txt\n"}
	for _, c := range []struct {
		name       string
		body       string
		reason     string
		text, tool string
		finish     string
	}{
		{"notool", chatBody(t, chatUser("NOTOOL say hi"), chatReminder), ReasonNoTool, "ACK: NOTOOL say hi", "", "stop"},
		{"tool result", chatBody(t, chatUser("list"), chatReminder, call, result), ReasonToolResult,
			"Done. The tool returned: Wall time: 0.032 seconds hello.txt", "", "stop"},
		{"assistant last", chatBody(t, chatUser("x"), map[string]any{"role": "assistant", "content": "hi"}), ReasonAssistantLast, "ACK: x", "", "stop"},
		{"read", chatBody(t, chatUser("READ:/etc/hostname please")), ReasonRead, "Let me read the file.", "Read", "tool_calls"},
		{"slow", chatBody(t, chatUser("SLOWTOOL x")), ReasonDefault, "Let me list the files.", "Bash", "tool_calls"},
	} {
		p, err := PlanChat([]byte(c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Reason != c.reason || p.Text != c.text {
			t.Errorf("%s: reason %s text %q", c.name, p.Reason, p.Text)
		}
		if (p.Tool == nil) != (c.tool == "") || p.Tool != nil && p.Tool.Name != c.tool {
			t.Errorf("%s: tool %+v", c.name, p.Tool)
		}
		if p.finishReason() != c.finish {
			t.Errorf("%s: finish %s", c.name, p.finishReason())
		}
	}
	p, _ := PlanChat([]byte(chatBody(t, chatUser("SLOWTOOL x"))))
	if string(p.Tool.Input) != `{"command":"echo waiting \u0026\u0026 sleep 60"}` {
		t.Errorf("slow tool input %s", p.Tool.Input)
	}
}

func TestChatThinkBigUsageAndNoUsage(t *testing.T) {
	s := start(t, Options{})
	_, out := post(t, s.URL()+"/v1/chat/completions", chatBody(t, chatUser("THINK BIGUSAGE NOTOOL go")), nil)
	a := assemble(t, parseChat(t, out))
	if a.reasoning != thinkingText || a.text != "ACK: THINK BIGUSAGE NOTOOL go" || a.prompt != 200000 || a.cached != 150000 {
		t.Errorf("answer %+v", a)
	}
	// without stream_options.include_usage there is no usage chunk
	body := strings.Replace(chatBody(t, chatUser("NOTOOL x")), `"include_usage":true`, `"include_usage":false`, 1)
	_, out = post(t, s.URL()+"/v1/chat/completions", body, nil)
	if a := assemble(t, parseChat(t, out)); a.usageChunks != 0 || a.finish != "stop" {
		t.Errorf("answer without usage %+v", a)
	}
}

func TestChatNonStreamingAndBadBody(t *testing.T) {
	s := start(t, Options{})
	body := strings.Replace(chatBody(t, chatUser("list")), `"stream":true`, `"stream":false`, 1)
	resp, out := post(t, s.URL()+"/v1/chat/completions", body, nil)
	var v struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					Function struct{ Name, Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v: %s", resp.StatusCode, err, out)
	}
	if v.Object != "chat.completion" || len(v.Choices) != 1 || v.Choices[0].FinishReason != "tool_calls" ||
		v.Choices[0].Message.ToolCalls[0].Function.Name != "Bash" || v.Usage.PromptTokens == 0 {
		t.Errorf("reply %s", out)
	}
	resp, _ = post(t, s.URL()+"/v1/chat/completions", "{not json", nil)
	if resp.StatusCode != 400 {
		t.Errorf("bad body: status %d", resp.StatusCode)
	}
}

func TestChatItemsAndUserTexts(t *testing.T) {
	call := map[string]any{"role": "assistant", "content": nil, "reasoning_content": "hmm", "tool_calls": []any{
		map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "Bash", "arguments": `{"command":"ls"}`}}}}
	result := map[string]any{"role": "tool", "tool_call_id": "call_1", "content": []any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "text", "text": "b"}}}
	r := Request{Kind: KindChat, Body: json.RawMessage(chatBody(t, chatUser("hi"), chatReminder, call, result))}
	items, err := r.Items()
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{Role: "system", Type: ItemText, Text: "You are Kimi Code CLI."},
		{Role: "user", Type: ItemText, Text: "hi"},
		{Role: "user", Type: ItemText, Text: "<system-reminder>\nAuto permission mode is active.\n</system-reminder>"},
		{Role: "assistant", Type: ItemThinking, Text: "hmm"},
		{Role: "assistant", Type: ItemToolCall, Name: "Bash", ID: "call_1", Text: `{"command":"ls"}`},
		{Role: "tool", Type: ItemToolResult, ID: "call_1", Text: "a\nb"},
	}
	if !reflect.DeepEqual(items, want) {
		t.Errorf("items\n got %v\nwant %v", items, want)
	}
	texts, err := r.UserTexts()
	if err != nil || !reflect.DeepEqual(texts, []string{"hi"}) {
		t.Errorf("user texts %q %v", texts, err)
	}
}

// TestChatKimiCompaction: Kimi Code's compaction request gets a summary;
// after it, BIGUSAGE in the quoted prompt does not trigger another one.
func TestChatKimiCompaction(t *testing.T) {
	p, err := PlanChat([]byte(chatBody(t, chatUser("BIGUSAGE list"), chatReminder,
		chatUser("You are about to run out of context. Create a handoff summary for the\nmodel that will resume"))))
	if err != nil {
		t.Fatal(err)
	}
	if p.Reason != ReasonCompaction || !strings.Contains(p.Text, "- BIGUSAGE list") || p.Tool != nil || p.Usage.InputTokens == 200000 {
		t.Errorf("compaction reply %+v", p)
	}
	p, _ = PlanChat([]byte(chatBody(t, chatUser("BIGUSAGE list"),
		chatUser("The conversation so far has been compacted to free up context.\n- BIGUSAGE list"))))
	if p.Usage.InputTokens == 200000 {
		t.Error("BIGUSAGE counted again after a compaction")
	}
	p, _ = PlanChat([]byte(chatBody(t, chatUser("BIGUSAGE list"))))
	if p.Usage.InputTokens != 200000 || p.Usage.CachedTokens != 150000 {
		t.Errorf("BIGUSAGE usage %+v", p.Usage)
	}
}
