// Package oracle is the comparison at the heart of the e2e oracle (issue
// 10 item 5, docs/show.md "What the oracle compares"): what `sessctl show`
// predicts a client sends when it resumes a session, against what the real
// client sent (read from the fake model server's log). The e2e harness
// runs it after every resume of the real clients; the agents' homes run it
// on the files and requests those runs produced (testdata/oracle), so that
// a finding of the real clients stays a unit test.
//
// Both sides are flattened into items (internal/fakemodel.Item: text, tool
// call, tool result, thinking); the context a client injects is dropped
// from both by one rule per agent, the one the agent's home exports
// (InjectedContext), so that show's `injected` flag and this filter cannot
// drift apart.
package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/internal/fakemodel"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/show"
)

// Item is an item as the oracle compares it.
type Item = fakemodel.Item

// ShowItem is one line of `sessctl show --json` (pkg/show.Item, with its
// state as the text JSON carries).
type ShowItem struct {
	Turn     int    `json:"turn"`
	Role     string `json:"role"`
	Type     string `json:"type"`
	Text     string `json:"text"`
	Name     string `json:"name,omitempty"`
	ID       string `json:"id,omitempty"`
	IsError  bool   `json:"is_error,omitempty"`
	Prompt   bool   `json:"prompt,omitempty"`
	Injected bool   `json:"injected,omitempty"`
	State    string `json:"state"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Seq      int    `json:"seq"`
}

func (it ShowItem) String() string {
	s := fmt.Sprintf("turn %d %s %s", it.Turn, it.Role, it.Type)
	if it.Name != "" {
		s += " " + it.Name
	}
	if it.ID != "" {
		s += " [" + it.ID + "]"
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{it.Prompt, "prompt"}, {it.Injected, "injected"}, {it.IsError, "error"}} {
		if f.on {
			s += " " + f.name
		}
	}
	if it.State != "" && it.State != "live" {
		s += " (" + it.State + ")"
	}
	return s + fmt.Sprintf(" %q", Clip(it.Text, 120))
}

// ContextFilter is what the oracle asks an agent's home: whether an item
// is context the client injects on its own (docs/show.md).
type ContextFilter interface {
	InjectedContext(role session.Role, text string) bool
}

// FilterOf returns the home of agent as a ContextFilter.
func FilterOf(agent session.Agent) (ContextFilter, error) {
	f, ok := session.As[ContextFilter](agent)
	if !ok {
		return nil, fmt.Errorf("oracle: the %s home exports no InjectedContext rule", agent)
	}
	return f, nil
}

// Normalise makes an item comparable: surrounding white space of texts is
// dropped (Claude Code adds a "\n" to a text it merges into one message
// with the next), tool inputs are compared as JSON values, and a tool
// result's name (which the wire does not carry) is left out.
func Normalise(it Item) Item {
	switch it.Type {
	case fakemodel.ItemToolCall:
		it.Text = canonicalJSON(it.Text)
	case fakemodel.ItemToolResult:
		it.Name = ""
		it.Text = strings.TrimSpace(it.Text)
	default:
		it.Text = strings.TrimSpace(it.Text)
	}
	return it
}

func canonicalJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return strings.TrimSpace(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}

// FromShow converts show's items to the oracle's, without the injected
// context the rule drops.
func FromShow(f ContextFilter, items []ShowItem) []Item {
	var out []Item
	for _, s := range items {
		it := Item{Role: s.Role, Text: s.Text, Name: s.Name, ID: s.ID}
		switch s.Type {
		case "summary", "text":
			it.Type = fakemodel.ItemText
		case "tool_call":
			it.Type, it.Role = fakemodel.ItemToolCall, "assistant"
		case "tool_result":
			it.Type, it.Role = fakemodel.ItemToolResult, "tool"
		case "thinking":
			it.Type = fakemodel.ItemThinking
		default:
			it.Type = s.Type
		}
		if f.InjectedContext(session.Role(it.Role), it.Text) {
			continue
		}
		out = append(out, Normalise(it))
	}
	return out
}

// FromRequest drops the injected context from a request's items (see
// fakemodel.Request.Items) and normalises the rest.
func FromRequest(f ContextFilter, items []Item) []Item {
	var out []Item
	for _, it := range items {
		if f.InjectedContext(session.Role(it.Role), it.Text) {
			continue
		}
		out = append(out, Normalise(it))
	}
	return out
}

// Claude Code's synthetic pair. When the history it resumes ends with a
// user message, it adds an assistant "No response requested." before the
// new prompt; when that user message is a tool result, or an attachment
// follows it, it first adds a user "Continue from where you left off."
// (and writes what it added into the file).
const (
	ClaudeContinue   = "Continue from where you left off."
	ClaudeNoResponse = "No response requested."
)

// Expected lists the requests a prediction allows for a resume with
// prompt: the predicted items then the prompt; with continuePair (Claude
// Code), when the items end with a user or tool item, "No response
// requested." before the prompt, with or without "Continue from where you
// left off." before it (which of the two depends on attachment lines show
// does not list).
func Expected(predicted []Item, prompt string, continuePair bool) [][]Item {
	return expected(predicted, prompt, Rule{ContinuePair: continuePair})
}

func expected(predicted []Item, prompt string, rule Rule) [][]Item {
	last := Normalise(Item{Role: "user", Type: fakemodel.ItemText, Text: prompt})
	bare := append(append([]Item(nil), predicted...), last)
	if rule.InterruptedCall {
		if want := interrupted(predicted, prompt); want != nil {
			return [][]Item{want}
		}
	}
	if !rule.ContinuePair || len(predicted) == 0 || predicted[len(predicted)-1].Role == "assistant" {
		return [][]Item{bare}
	}
	cont := Item{Role: "user", Type: fakemodel.ItemText, Text: ClaudeContinue}
	none := Item{Role: "assistant", Type: fakemodel.ItemText, Text: ClaudeNoResponse}
	out := [][]Item{
		append(append([]Item(nil), predicted...), none, last),
		append(append([]Item(nil), predicted...), cont, none, last),
	}
	if end := predicted[len(predicted)-1]; rule.NoPairAfterCommand && end.Role == "user" &&
		strings.HasPrefix(end.Text, localCommandStdout) {
		out = append(out, bare)
	}
	return out
}

// ClaudeInterrupted is the tool result Claude Code 2.1.330 sends (and
// writes) for a tool call at the tip of the history that has none.
const ClaudeInterrupted = "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]"

// interrupted is what Claude Code 2.1.330 sends for predicted items that
// end with tool calls without results: a ClaudeInterrupted result for each
// of them, "No response requested.", the prompt; nil when they do not end
// so.
func interrupted(predicted []Item, prompt string) []Item {
	answered := map[string]bool{}
	for _, it := range predicted {
		if it.Type == fakemodel.ItemToolResult {
			answered[it.ID] = true
		}
	}
	var open []Item
	for k := len(predicted) - 1; k >= 0 && predicted[k].Role == "assistant"; k-- {
		if it := predicted[k]; it.Type == fakemodel.ItemToolCall && !answered[it.ID] {
			open = append([]Item{{Role: "tool", Type: fakemodel.ItemToolResult, ID: it.ID, Text: ClaudeInterrupted}}, open...)
		}
	}
	if len(open) == 0 {
		return nil
	}
	out := append(append([]Item(nil), predicted...), open...)
	return append(out, Item{Role: "assistant", Type: fakemodel.ItemText, Text: ClaudeNoResponse},
		Normalise(Item{Role: "user", Type: fakemodel.ItemText, Text: prompt}))
}

// localCommandStdout starts the output of a local command (/compact's
// "Compacted …") that Claude Code writes as a user message.
const localCommandStdout = "<local-command-stdout>"

// Rule is how the oracle leaves out the context a client injects; each
// agent has one (docs/show.md, "What the oracle compares").
type Rule struct {
	// Anywhere drops every item the home's InjectedContext names, on
	// both sides (Claude Code: it adds reminders and system entries to
	// every request, wherever it likes).
	Anywhere bool `json:"anywhere,omitempty"`
	// Otherwise injected context is compared like everything else,
	// except for what the client adds around the history: its base
	// instructions (one developer message first, which the file keeps
	// apart) and the context of the new turn (contextual messages right
	// before the new prompt) (Codex).

	// ContinuePair allows Claude Code's synthetic pair (Expected).
	ContinuePair bool `json:"continue_pair,omitempty"`
	// NoPairAfterCommand also allows no pair when the history ends with a
	// local command's output: Claude Code 2.1.330 sends the new prompt
	// right after its own /compact's "<local-command-stdout>Compacted"
	// message, where 2.1.197 added the pair.
	NoPairAfterCommand bool `json:"no_pair_after_command,omitempty"`
	// InterruptedCall: when the history ends with tool calls that have no
	// result, Claude Code 2.1.330 sends them, each with its own
	// ClaudeInterrupted result, then "No response requested." (2.1.197
	// drops them; sessctl's show predicts either, by the file's version).
	InterruptedCall bool `json:"interrupted_call,omitempty"`
	// SystemFirst: the client sends its system prompt as a leading
	// message of role "system", which the file keeps apart (Kimi Code:
	// profile.bind); it is left out like Codex's developer message.
	SystemFirst bool `json:"system_first,omitempty"`
	// ContextAfterPrompt: the new turn's context comes after the new
	// prompt (Kimi Code's permission-mode and date reminders); injected
	// items at the end of the request are left out.
	ContextAfterPrompt bool `json:"context_after_prompt,omitempty"`
}

// Check compares a prediction (show's live items, in send order) with the
// items a request carried (unfiltered, as fakemodel.Request.Items gives
// them); it returns "" when they agree, else both lists with the first
// difference marked.
func Check(f ContextFilter, rule Rule, predicted []ShowItem, sent []Item, prompt string) string {
	if rule.Anywhere {
		got := FromRequest(f, sent)
		var d string
		for _, want := range expected(FromShow(f, predicted), prompt, rule) {
			if d = Diff(want, got); d == "" {
				return ""
			}
		}
		return d
	}
	got := FromRequest(keepAll{}, sent)
	want := expected(FromShow(keepAll{}, predicted), prompt, rule)[0]
	if len(got) > 0 && (got[0].Role == string(session.RoleDeveloper) ||
		rule.SystemFirst && got[0].Role == string(session.RoleSystem)) {
		got = got[1:] // the base instructions
	}
	if rule.ContextAfterPrompt {
		// the new turn's context, after the prompt
		for len(got) > 0 && f.InjectedContext(session.Role(got[len(got)-1].Role), got[len(got)-1].Text) {
			got = got[:len(got)-1]
		}
	}
	// the new turn's context, between the history and the prompt
	if n := len(want) - 1; len(got) > len(want) && Diff(want[:n], got[:n]) == "" {
		extra := got[n : len(got)-1]
		all := true
		for _, it := range extra {
			if !f.InjectedContext(session.Role(it.Role), it.Text) {
				all = false
			}
		}
		if all {
			got = append(got[:n:n], got[len(got)-1])
		}
	}
	return Diff(want, got)
}

// keepAll is a filter that keeps everything.
type keepAll struct{}

func (keepAll) InjectedContext(session.Role, string) bool { return false }

// Diff is "" when want and got are equal, else both lists with the first
// difference marked.
func Diff(want, got []Item) string {
	first := -1
	for i := 0; i < max(len(want), len(got)); i++ {
		if i >= len(want) || i >= len(got) || want[i] != got[i] {
			first = i
			break
		}
	}
	if first < 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at item %d\n", first)
	for i := 0; i < max(len(want), len(got)); i++ {
		mark := "  "
		if i == first {
			mark = "> "
		}
		w, g := "-", "-"
		if i < len(want) {
			w = want[i].String()
		}
		if i < len(got) {
			g = got[i].String()
		}
		if w == g {
			fmt.Fprintf(&b, "%s%2d  both      %s\n", mark, i, w)
			continue
		}
		fmt.Fprintf(&b, "%s%2d  predicted %s\n%s    sent      %s\n", mark, i, w, mark, g)
	}
	return b.String()
}

// List lists show's items, one a line.
func List(items []ShowItem) string {
	var b strings.Builder
	for i, it := range items {
		fmt.Fprintf(&b, "  %2d %v\n", i, it)
	}
	if len(items) == 0 {
		b.WriteString("  (nothing)\n")
	}
	return b.String()
}

// Clip returns the first n runes of s, with an ellipsis when it cut.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Case is a resume the e2e harness kept (SESSCTL_E2E_KEEP): the session
// file as it was just before the resume (in File, beside the case), the
// prompt, and what the client sent. Homes replay such cases as unit tests.
type Case struct {
	Agent  session.Agent `json:"agent"`
	File   string        `json:"file"`
	Prompt string        `json:"prompt"`
	Rule   Rule          `json:"rule"`
	// Request is the number of the request in the fake server's log.
	Request int    `json:"request"`
	Sent    []Item `json:"sent"`
}

// Predict is what `sessctl show --json --thinking` prints for the session
// file at path, computed in-process: the live items in send order.
func Predict(ctx context.Context, agent session.Agent, path string) ([]ShowItem, error) {
	conv, ok := session.As[session.Conversation](agent)
	if !ok {
		return nil, fmt.Errorf("oracle: no conversation model for %s", agent)
	}
	var out []ShowItem
	calls := map[string]string{}
	err := conv.History(ctx, path, session.HistoryOptions{}, func(m *session.Message) error {
		for _, it := range show.Items(m, calls, true) {
			out = append(out, ShowItem{Turn: it.Turn, Role: it.Role, Type: it.Type, Text: it.Text, Name: it.Name, ID: it.ID,
				IsError: it.IsError, Prompt: it.Prompt, Injected: it.Injected, State: m.State.String(), File: path,
				Line: it.Line, Seq: len(out)})
		}
		return nil
	})
	return out, err
}

// Replay runs the oracle on a kept case: the case's file, as the agent's
// home predicts it, against what the client sent. It returns "" when they
// agree.
func Replay(ctx context.Context, dir string, c Case) (string, error) {
	f, err := FilterOf(c.Agent)
	if err != nil {
		return "", err
	}
	pred, err := Predict(ctx, c.Agent, filepath.Join(dir, c.File))
	if err != nil {
		return "", err
	}
	if d := Check(f, c.Rule, pred, c.Sent, c.Prompt); d != "" {
		return d + "predicted from:\n" + List(pred), nil
	}
	return "", nil
}

// LoadCases reads every case (*.json) in dir.
func LoadCases(dir string) (map[string]Case, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]Case{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var c Case
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out[strings.TrimSuffix(filepath.Base(n), ".json")] = c
	}
	return out, nil
}
