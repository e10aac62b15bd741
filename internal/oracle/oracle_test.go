package oracle

import (
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakemodel"
	"github.com/sessctl/sessctl/pkg/session"
)

// tagFilter calls a text injected context when it starts with "<ctx>", and
// every system or developer item.
type tagFilter struct{}

func (tagFilter) InjectedContext(role session.Role, text string) bool {
	return role == session.RoleSystem || role == session.RoleDeveloper || strings.HasPrefix(text, "<ctx>")
}

func text(role, s string) Item { return Item{Role: role, Type: fakemodel.ItemText, Text: s} }

func shown(role, typ, s string) ShowItem {
	return ShowItem{Role: role, Type: typ, Text: s, State: "live"}
}

func TestCheckAnywhere(t *testing.T) {
	rule := Rule{Anywhere: true, ContinuePair: true}
	pred := []ShowItem{shown("user", "text", "A"), shown("assistant", "text", "ACK A")}
	ok := []Item{text("user", "<ctx>reminder"), text("user", "A"), text("system", "agents"), text("assistant", "ACK A\n"), text("user", "B")}
	if d := Check(tagFilter{}, rule, pred, ok, "B"); d != "" {
		t.Errorf("context anywhere, white space: %s", d)
	}
	if d := Check(tagFilter{}, rule, pred, []Item{text("user", "A"), text("user", "B")}, "B"); d == "" {
		t.Error("a missing assistant item was not seen")
	}
	if d := Check(tagFilter{}, rule, pred, []Item{text("user", "A"), text("assistant", "ACK A"), text("assistant", ClaudeNoResponse), text("user", "B")}, "B"); d == "" {
		t.Error("the synthetic pair after an assistant item was accepted")
	}
	// ending with a user item: "No response requested." is required,
	// "Continue from where you left off." optional
	pred = append(pred, shown("user", "summary", "S"))
	none := []Item{text("user", "A"), text("assistant", "ACK A"), text("user", "S"), text("assistant", ClaudeNoResponse), text("user", "B")}
	if d := Check(tagFilter{}, rule, pred, none, "B"); d != "" {
		t.Errorf("no response: %s", d)
	}
	both := []Item{text("user", "A"), text("assistant", "ACK A"), text("user", "S"), text("user", ClaudeContinue), text("assistant", ClaudeNoResponse), text("user", "B")}
	if d := Check(tagFilter{}, rule, pred, both, "B"); d != "" {
		t.Errorf("continue and no response: %s", d)
	}
	if d := Check(tagFilter{}, rule, pred, []Item{text("user", "A"), text("assistant", "ACK A"), text("user", "S"), text("user", "B")}, "B"); d == "" {
		t.Error("a missing \"No response requested.\" was not seen")
	}
}

func TestCheckAroundTheHistory(t *testing.T) {
	rule := Rule{}
	pred := []ShowItem{shown("developer", "text", "skills"), shown("user", "text", "<ctx>env"), shown("user", "text", "A"),
		shown("assistant", "tool_call", `{"cmd": "ls"}`), shown("tool", "tool_result", "out")}
	pred[3].Name, pred[3].ID, pred[4].ID, pred[4].Name = "exec", "c1", "c1", "exec"
	call := Item{Role: "assistant", Type: fakemodel.ItemToolCall, Name: "exec", ID: "c1", Text: `{"cmd":"ls"}`}
	res := Item{Role: "tool", Type: fakemodel.ItemToolResult, ID: "c1", Text: "out"}
	base := text("developer", "you are codex")
	ok := []Item{base, text("developer", "skills"), text("user", "<ctx>env"), text("user", "A"), call, res, text("user", "<ctx>new env"), text("user", "B")}
	if d := Check(tagFilter{}, rule, pred, ok, "B"); d != "" {
		t.Errorf("base instructions and the new turn's context: %s", d)
	}
	// injected context inside the history is compared
	missing := []Item{base, text("developer", "skills"), text("user", "A"), call, res, text("user", "B")}
	if d := Check(tagFilter{}, rule, pred, missing, "B"); d == "" {
		t.Error("a context message missing from the history was not seen")
	}
	// only context may come between the history and the prompt
	extra := append(append([]Item(nil), ok[:6]...), text("assistant", "hi"), text("user", "B"))
	if d := Check(tagFilter{}, rule, pred, extra, "B"); d == "" {
		t.Error("an assistant item before the prompt was accepted")
	}
	// a different call id
	bad := append([]Item(nil), ok...)
	bad[5].ID = "c2"
	if d := Check(tagFilter{}, rule, pred, bad, "B"); d == "" || !strings.Contains(d, "first difference at item 4") {
		t.Errorf("a result for another call was not seen: %s", d)
	}
}

// TestNoPairAfterCommand: Claude Code 2.1.330 sends the new prompt right
// after its /compact's stdout message; the rule allows that there and only
// there, and still allows the pair.
func TestNoPairAfterCommand(t *testing.T) {
	stdout := "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>"
	pred := []ShowItem{shown("user", "summary", "S"), shown("user", "text", stdout)}
	bare := []Item{text("user", "S"), text("user", stdout), text("user", "B")}
	pair := []Item{text("user", "S"), text("user", stdout), text("user", ClaudeContinue), text("assistant", ClaudeNoResponse), text("user", "B")}
	r197 := Rule{Anywhere: true, ContinuePair: true}
	r330 := Rule{Anywhere: true, ContinuePair: true, NoPairAfterCommand: true}
	if d := Check(tagFilter{}, r197, pred, bare, "B"); d == "" {
		t.Error("2.1.197's rule accepted no pair after the command")
	}
	if d := Check(tagFilter{}, r330, pred, bare, "B"); d != "" {
		t.Errorf("2.1.330's rule: no pair after the command: %s", d)
	}
	if d := Check(tagFilter{}, r330, pred, pair, "B"); d != "" {
		t.Errorf("2.1.330's rule: the pair after the command: %s", d)
	}
	// after a user message that is not a command's output, the pair stays required
	pred = []ShowItem{shown("user", "text", "A")}
	if d := Check(tagFilter{}, r330, pred, []Item{text("user", "A"), text("user", "B")}, "B"); d == "" {
		t.Error("2.1.330's rule accepted no pair after a plain prompt")
	}
}
