package show

import (
	"reflect"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestItemsThinkingOnly: Claude Code writes each block of a response as its
// own line; a line holding only thinking has no text item (the model was
// sent no empty text), and gives nothing at all without --thinking.
func TestItemsThinkingOnly(t *testing.T) {
	m := &session.Message{Turn: 0, Role: session.RoleAssistant, Thinking: "hmm"}
	if got := Items(m, map[string]string{}, true); len(got) != 1 || got[0].Type != TypeThinking || got[0].Text != "hmm" {
		t.Errorf("with thinking: %+v", got)
	}
	if got := Items(m, map[string]string{}, false); len(got) != 0 {
		t.Errorf("without thinking: %+v", got)
	}
	// an empty message still shows as an empty text
	if got := Items(&session.Message{Role: session.RoleUser}, map[string]string{}, false); len(got) != 1 || got[0].Type != TypeText {
		t.Errorf("empty message: %+v", got)
	}
}

// TestItemsToolNames: a result is named after the call it answers.
func TestItemsToolNames(t *testing.T) {
	calls := map[string]string{}
	call := &session.Message{Role: session.RoleAssistant, Text: "Let me look.",
		ToolCalls: []session.ToolCall{{ID: "c1", Name: "Bash", Input: `{"command":"ls"}`}}}
	res := &session.Message{Role: session.RoleTool, ToolResults: []session.ToolResult{{CallID: "c1", Output: "a"}}}
	var got []string
	for _, it := range append(Items(call, calls, false), Items(res, calls, false)...) {
		got = append(got, it.Role+" "+it.Type+" "+it.Name+" "+it.ID+" "+it.Text)
	}
	want := []string{"assistant text   Let me look.", `assistant tool_call Bash c1 {"command":"ls"}`, "tool tool_result Bash c1 a"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items:\n got %q\nwant %q", got, want)
	}
}
