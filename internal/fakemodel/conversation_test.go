package fakemodel

import (
	"encoding/json"
	"reflect"
	"testing"
)

func itemsOf(t *testing.T, kind, body string) []Item {
	t.Helper()
	items, err := Request{N: 1, Kind: kind, Body: json.RawMessage(body)}.Items()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestItemsMessages: a Messages request flattens block by block, in order;
// tool results are role "tool" whatever message carries them, and nothing
// is filtered (system entries and reminders stay).
func TestItemsMessages(t *testing.T) {
	body := claudeBody(t,
		firstUser("list the files"),
		map[string]any{"role": "system", "content": "Available agent types"},
		map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": "hmm", "signature": "sig"},
			textBlock("Let me list the files."),
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls"}},
		}},
		userMsg([]any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{textBlock("a"), textBlock("b")}},
			textBlock("Continue from where you left off."),
		}),
		map[string]any{"role": "assistant", "content": "No response requested."},
	)
	want := []Item{
		{Role: "user", Type: ItemText, Text: "<system-reminder>\nskills…\n</system-reminder>"},
		{Role: "user", Type: ItemText, Text: "list the files"},
		{Role: "system", Type: ItemText, Text: "Available agent types"},
		{Role: "assistant", Type: ItemThinking, Text: "hmm"},
		{Role: "assistant", Type: ItemText, Text: "Let me list the files."},
		{Role: "assistant", Type: ItemToolCall, Name: "Bash", ID: "toolu_1", Text: `{"command":"ls"}`},
		{Role: "tool", Type: ItemToolResult, ID: "toolu_1", Text: "a\nb"},
		{Role: "user", Type: ItemText, Text: "Continue from where you left off."},
		{Role: "assistant", Type: ItemText, Text: "No response requested."},
	}
	if got := itemsOf(t, KindMessages, body); !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n got %v\nwant %v", got, want)
	}
}

// TestItemsResponses: a Responses request flattens item by item (a
// message's text parts joined); reasoning items carry their summary.
func TestItemsResponses(t *testing.T) {
	body := codexBody(t,
		codexUser("list the files"),
		map[string]any{"type": "message", "role": "developer", "content": []any{
			map[string]any{"type": "input_text", "text": "<permissions instructions>p</permissions instructions>"},
			map[string]any{"type": "input_text", "text": ""},
			map[string]any{"type": "input_text", "text": "<skills_instructions>s</skills_instructions>"}}},
		map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": "think"}}, "encrypted_content": "x"},
		map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "Let me list the files."}}},
		map[string]any{"type": "function_call", "name": "exec_command", "arguments": `{"cmd":"ls"}`, "call_id": "call_1"},
		map[string]any{"type": "function_call_output", "call_id": "call_1", "output": "a\nb"},
		map[string]any{"type": "web_search_call", "status": "completed"},
	)
	want := []Item{
		{Role: "developer", Type: ItemText, Text: "You are a coding agent running in the Codex CLI"},
		{Role: "user", Type: ItemText, Text: "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"},
		{Role: "user", Type: ItemText, Text: "list the files"},
		{Role: "developer", Type: ItemText, Text: "<permissions instructions>p</permissions instructions>\n<skills_instructions>s</skills_instructions>"},
		{Role: "assistant", Type: ItemThinking, Text: "think"},
		{Role: "assistant", Type: ItemText, Text: "Let me list the files."},
		{Role: "assistant", Type: ItemToolCall, Name: "exec_command", ID: "call_1", Text: `{"cmd":"ls"}`},
		{Role: "tool", Type: ItemToolResult, ID: "call_1", Text: "a\nb"},
		{Role: "", Type: "web_search_call"},
	}
	if got := itemsOf(t, KindResponses, body); !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n got %v\nwant %v", got, want)
	}
}

func TestItemsNotAModelCall(t *testing.T) {
	if _, err := (Request{N: 3, Kind: KindModels, Method: "GET", Path: "/v1/models"}).Items(); err == nil {
		t.Error("a models request gave items")
	}
}
