// Package show lists the conversation a client will send the model when it
// resumes a session, item by item: each text, tool call, tool result and
// compaction summary, numbered by turn as `checkpoints` and `revert` number
// them. It reads through each agent's session.Conversation, so what it
// prints is the model every other operation uses.
package show

import (
	"context"
	"fmt"
	"hash/maphash"

	"github.com/sessctl/sessctl/pkg/session"
)

// Item types.
const (
	TypeText       = "text"
	TypeToolCall   = "tool_call"
	TypeToolResult = "tool_result"
	TypeSummary    = "summary"
	TypeThinking   = "thinking"
)

// Item is one piece of a message: its text, one tool call or one tool
// result. A message with text and two tool calls is three items.
type Item struct {
	Turn int    `json:"turn"`
	Role string `json:"role"`
	Type string `json:"type"`
	Text string `json:"text"`
	// Name is the tool's name (tool calls and results); ID the call id.
	Name    string `json:"name,omitempty"`
	ID      string `json:"id,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// Prompt marks the user prompt that starts Turn.
	Prompt bool `json:"prompt,omitempty"`
	// Injected marks context the client added itself (docs/show.md).
	Injected bool `json:"injected,omitempty"`
	// State is "live", or why the client no longer sends the item
	// (rolled_back, compacted, off_chain, sidechain, rotated, dropped).
	State session.State `json:"state"`
	File  string        `json:"file"`
	Line  int           `json:"line"`
	// Seq numbers the live items in the order the client sends them, from
	// 0; -1 for the others.
	Seq int `json:"seq"`
}

// Options control Show.
type Options struct {
	// All adds what the client no longer sends: rolled back, compacted
	// away, off the resumed chain, and what only a rotation still holds.
	All bool
	// Thinking adds the model's reasoning (never sent back as text).
	Thinking bool
	// Want lets the agent's home leave out live items of lines it
	// rejects (session.HistoryOptions.Want); no effect with All.
	Want func(raw []byte) bool
	// LiveMaps keeps the homes' live maps of files for Want
	// (session.HistoryOptions.LiveMaps).
	LiveMaps session.LiveMapCache
}

// ErrUnsupported is returned for a session whose agent has no
// conversation model.
var ErrUnsupported = fmt.Errorf("no conversation model for this agent")

// Show calls fn for every item of session s. With All, the items only
// rotations hold come first (oldest rotation first), then the main file's
// items in file order; without, the live items in send order.
func Show(ctx context.Context, s *session.Session, opt Options, fn func(*Item) error) error {
	conv, ok := session.As[session.Conversation](s.Agent)
	if !ok {
		return fmt.Errorf("%s: %w (%s)", s.Main, ErrUnsupported, s.Agent)
	}
	seq := 0
	calls := map[string]string{} // call id -> tool name
	emit := func(file string, m *session.Message, state session.State) error {
		for _, it := range Items(m, calls, opt.Thinking) {
			it.File, it.State = file, state
			it.Seq = -1
			if state == session.Live {
				it.Seq = seq
				seq++
			}
			if err := fn(&it); err != nil {
				return err
			}
		}
		return nil
	}
	if opt.All {
		seed := maphash.MakeSeed()
		inMain := map[uint64]bool{}
		err := conv.History(ctx, s.Main, session.HistoryOptions{All: true}, func(m *session.Message) error {
			inMain[key(seed, m)] = true
			return nil
		})
		if err != nil {
			return err
		}
		for _, f := range s.FilesWithRole(session.FileRotation) {
			err := conv.History(ctx, f.Path, session.HistoryOptions{All: true}, func(m *session.Message) error {
				k := key(seed, m)
				if inMain[k] {
					return nil
				}
				inMain[k] = true // a message in several rotations is shown once
				return emit(f.Path, m, session.Rotated)
			})
			if err != nil {
				return err
			}
		}
	}
	hopt := session.HistoryOptions{All: opt.All}
	if !opt.All {
		hopt.Want, hopt.LiveMaps = opt.Want, opt.LiveMaps
	}
	return conv.History(ctx, s.Main, hopt, func(m *session.Message) error {
		return emit(s.Main, m, m.State)
	})
}

// key identifies a message across the rotations of a file: its id when
// the client gives one, else what it says.
func key(seed maphash.Seed, m *session.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	if m.ID != "" {
		h.WriteString("id\x00" + m.ID)
		return h.Sum64()
	}
	h.WriteString(string(m.Role))
	h.WriteByte(0)
	h.WriteString(m.Text)
	for _, c := range m.ToolCalls {
		h.WriteString("\x00c" + c.ID + "\x00" + c.Name + "\x00" + c.Input)
	}
	for _, r := range m.ToolResults {
		h.WriteString("\x00r" + r.CallID + "\x00" + r.Output)
	}
	return h.Sum64()
}

// Items splits a message into its items. calls maps call ids to tool
// names; Items adds the message's calls to it and names results from it.
func Items(m *session.Message, calls map[string]string, thinking bool) []Item {
	base := Item{Turn: m.Turn, Role: string(m.Role), Injected: m.Injected, Line: m.Line}
	var out []Item
	if thinking && m.Thinking != "" {
		it := base
		it.Type, it.Text = TypeThinking, m.Thinking
		out = append(out, it)
	}
	switch {
	case m.Summary:
		it := base
		it.Type, it.Text = TypeSummary, m.Text
		out = append(out, it)
	case len(m.ToolResults) > 0:
		for _, r := range m.ToolResults {
			it := base
			it.Role = string(session.RoleTool)
			it.Type, it.Text, it.ID, it.IsError = TypeToolResult, r.Output, r.CallID, r.IsError
			it.Name = calls[r.CallID]
			delete(calls, r.CallID)
			out = append(out, it)
		}
	default:
		// a message with nothing but thinking (Claude Code writes each
		// block of a response as its own line) has no text item
		if m.Text != "" || len(m.ToolCalls) == 0 && m.Thinking == "" {
			it := base
			it.Type, it.Text, it.Prompt = TypeText, m.Text, m.Prompt
			out = append(out, it)
		}
		for _, c := range m.ToolCalls {
			it := base
			it.Role = string(session.RoleAssistant)
			it.Type, it.Text, it.Name, it.ID = TypeToolCall, c.Input, c.Name, c.ID
			if c.ID != "" {
				calls[c.ID] = c.Name
			}
			out = append(out, it)
		}
	}
	return out
}
