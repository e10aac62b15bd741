package codex

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// The history Codex rebuilds on resume (codex.md §6–§7, and the resume
// proofs in docs/e2e.md): response items are replayed in file order; the
// newest compacted record with a replacement_history replaces everything
// before it; a thread_rolled_back {num_turns: N} drops the newest N user
// turns (a user turn starts at a user message that is not injected
// context, and takes the injected messages right above it with it). A
// compacted record written after a rollback in the same turn (no
// task_started between them) is taken by Codex as part of the rolled-back
// turn and has no effect.
//
// Turns are the user prompts of the file in file order, numbered from 0;
// a prompt a later rollback removed gets no number (N is -1). A cut before
// a turn goes before its task_started event.

// SummaryPrefix starts the message of Codex's local compaction (codex.md
// §6); the summary follows after a newline.
const SummaryPrefix = "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:"

// contextPrefixes start the user messages that Codex itself calls
// contextual (codex-rs is_contextual_user_message_content): context it
// injects, never a user turn, never a boundary a rollback counts. The
// e2e oracle drops them from both sides of its comparison
// (InjectedContext), and decoding marks them not typed by the user.
var contextPrefixes = []string{
	"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
	"<skills_instructions>", "<skill>", "<permissions instructions>", "<user_shell_command>",
	"<turn_aborted>", "<subagent_notification>",
}

// Contextual reports whether a user message's text is context Codex
// injects (see contextPrefixes).
func Contextual(text string) bool { return session.HasAnyPrefix(text, contextPrefixes...) }

// InjectedContext reports whether a message is context Codex adds on its
// own: developer and system messages (the base instructions, permissions,
// skills) and the contextual user messages. It is the one rule by which
// the e2e oracle leaves injected context out (docs/show.md, "What the
// oracle compares"); show marks every such message injected.
func (Home) InjectedContext(role session.Role, text string) bool {
	switch role {
	case session.RoleDeveloper, session.RoleSystem:
		return true
	case session.RoleUser:
		return Contextual(text)
	}
	return false
}

// entry is one item of the rebuilt history: a line, or item sub of a
// compacted line's replacement history.
type entry struct {
	line   int
	off    int64
	len    int64 // the line's length without its terminator
	sub    int   // -1: the line itself
	hit    bool  // the replay's want took the line
	user   bool  // starts a user turn
	inject bool  // injected context (developer, environment, …)
	// the call ids the item makes and answers
	calls, results []string
}

// item states while replaying
type replay struct {
	hist  []entry
	gone  map[entryKey]session.State // entries that left the history, and why
	turns []session.Turn
	at    session.TurnIndex
	// effective compactions (offsets), for CompactedAfter
	compactions []int64
	// the call ids of the live history, and those a live output answers
	called, answered map[string]bool
}

type entryKey struct {
	line, sub int
}

// legacySub is the sub of the summary of a compaction without a
// replacement history.
const legacySub = -2

// historyItem reports whether a response item is part of what Codex sends
// (ghost snapshots are kept for /undo but never sent).
func historyItem(r *session.Record) bool {
	if !strings.HasPrefix(r.Type, "response_item/") && !strings.HasPrefix(r.Type, "(legacy)/") {
		return false
	}
	return r.Kind == session.KindMessage || r.Kind == session.KindCompaction
}

// injected reports whether a message item is context Codex injected.
func injected(r *session.Record) bool {
	switch r.Role {
	case session.RoleDeveloper, session.RoleSystem:
		return true
	case session.RoleUser:
		return !r.UserPrompt
	}
	return false
}

// replayFile is pass one: it replays the file's history as Codex does,
// keeping references, not texts.
func replayFile(ctx context.Context, path string) (*replay, error) {
	return replayWith(ctx, path, replayHome{}, nil)
}

// replayWith is replayFile with the decoder f (tests hold the replay's own
// to Home's); want, when set, is asked of the line of each history entry
// (entry.hit).
func replayWith(ctx context.Context, path string, f session.Format, want func([]byte) bool) (*replay, error) {
	rp := &replay{gone: map[entryKey]session.State{}}
	turnStart := int64(-1)
	rolledInTurn := false // a rollback since the last task_started
	var live []int        // turns not rolled back, by index into rp.turns
	err := session.ReadFileContext(ctx, path, f, func(r *session.Record) error {
		off := r.Line.Offset
		switch {
		case r.Type == "event_msg/task_started" || r.Type == "event_msg/turn_started":
			turnStart = off
			rolledInTurn = false
		case r.RollbackTurns > 0:
			rolledInTurn = true
			k := min(r.RollbackTurns, len(live))
			for _, i := range live[len(live)-k:] {
				rp.turns[i].State = session.RolledBack
			}
			live = live[:len(live)-k]
			rp.dropUserTurns(r.RollbackTurns)
		case r.Type == "compacted":
			if rolledInTurn {
				return nil // part of the rolled-back turn: Codex ignores it
			}
			items := replacement(r.Line.Raw)
			hit := want != nil && want(r.Line.Raw)
			var kept []entry
			if items == nil {
				// a legacy compaction: the user messages so far, then the summary
				for _, e := range rp.hist {
					if e.user {
						kept = append(kept, e)
					}
				}
				kept = append(kept, entry{line: r.Line.Num, off: off, len: r.Line.Len, sub: legacySub, hit: hit})
			}
			for _, e := range rp.hist {
				rp.gone[entryKey{e.line, e.sub}] = session.Compacted
			}
			rp.hist = append(rp.hist[:0], kept...)
			for i, it := range items {
				e := entry{line: r.Line.Num, off: off, len: r.Line.Len, sub: i, user: it.user, inject: it.inject, hit: hit}
				rec := it.record(r)
				for _, c := range rec.ToolCalls {
					e.calls = append(e.calls, c.ID)
				}
				for _, res := range rec.ToolResults {
					e.results = append(e.results, res.CallID)
				}
				rp.hist = append(rp.hist, e)
			}
			rp.compactions = append(rp.compactions, off)
			for i := range rp.turns {
				rp.turns[i].CompactedAfter = true
			}
		case historyItem(r):
			e := entry{line: r.Line.Num, off: off, len: r.Line.Len, sub: -1, user: r.UserPrompt, inject: injected(r),
				hit: want != nil && want(r.Line.Raw)}
			for _, c := range r.ToolCalls {
				e.calls = append(e.calls, c.ID)
			}
			for _, res := range r.ToolResults {
				e.results = append(e.results, res.CallID)
			}
			rp.hist = append(rp.hist, e)
			if r.UserPrompt {
				cut := off
				if turnStart >= 0 {
					cut = turnStart
				}
				turnStart = -1
				rp.turns = append(rp.turns, session.Turn{Line: r.Line.Num, Offset: off, Cut: cut, Timestamp: r.Timestamp,
					Prompt: session.Preview(r.Prompt, session.PreviewLen)})
				live = append(live, len(rp.turns)-1)
			}
		}
		return nil
	})
	n := 0
	for i := range rp.turns {
		t := &rp.turns[i]
		if t.State == session.RolledBack {
			t.N = -1
		} else {
			t.N = n
			n++
		}
		rp.at.Add(t.Cut, t.N)
	}
	rp.at.Sort()
	rp.called, rp.answered = map[string]bool{}, map[string]bool{}
	for _, e := range rp.hist {
		delete(rp.gone, entryKey{e.line, e.sub})
		for _, id := range e.calls {
			rp.called[id] = true
		}
		for _, id := range e.results {
			rp.answered[id] = true
		}
	}
	return rp, err
}

// dropUserTurns is ContextManager.drop_last_n_user_turns: the history
// from the n-th last user message on goes, with the context messages right
// above it, but never what came before the first user message (with more
// rollbacks than user messages, the history is cut at the first one and
// what precedes it stays whole). Both halves were seen in 0.169's requests
// by the e2e oracle.
func (rp *replay) dropUserTurns(n int) {
	cut, first := len(rp.hist), -1
	for i := len(rp.hist) - 1; i >= 0; i-- {
		if rp.hist[i].user {
			first = i
			if n > 0 {
				cut = i
				n--
			}
		}
	}
	if cut == len(rp.hist) {
		return
	}
	for cut > first && rp.hist[cut-1].inject {
		cut--
	}
	for _, e := range rp.hist[cut:] {
		rp.gone[entryKey{e.line, e.sub}] = session.RolledBack
	}
	rp.hist = rp.hist[:cut]
}

// TurnUnit implements session.Conversation.
func (Home) TurnUnit() string { return "turn" }

// Turns implements session.Conversation.
func (Home) Turns(ctx context.Context, path string) ([]session.Turn, error) {
	rp, err := replayFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return rp.turns, nil
}

// History implements session.Conversation.
func (h Home) History(ctx context.Context, path string, opt session.HistoryOptions, fn func(*session.Message) error) error {
	if opt.Want != nil && !opt.All {
		// through the live map, kept or made now: the replay gives it,
		// and then only the lines Want takes are decoded again
		if opt.LiveMaps == nil {
			opt.LiveMaps = session.NoLiveMaps
		}
		if done, err := h.historyByLiveMap(ctx, path, opt, fn); done {
			return err
		}
	}
	rp, err := replayFile(ctx, path)
	if err != nil {
		return err
	}
	live := make(map[entryKey]bool, len(rp.hist))
	for _, e := range rp.hist {
		live[entryKey{e.line, e.sub}] = true
	}
	send := func(r *session.Record, k entryKey) error {
		st := session.Live
		if !live[k] {
			if !opt.All {
				return nil
			}
			var ok bool
			if st, ok = rp.gone[k]; !ok {
				return nil // never part of the history (a compaction Codex ignored)
			}
		}
		m := message(r)
		m.Turn, m.State = rp.at.At(r.Line.Offset), st
		if st == session.Live && len(m.ToolResults) > 0 && len(m.ToolCalls) == 0 && !anyIn(m.ToolResults, rp.called) {
			// an output whose call is not in the history: Codex leaves it
			// out of every request (never out of the file)
			if !opt.All {
				return nil
			}
			m.State = session.Dropped
		}
		if err := fn(&m); err != nil || m.State != session.Live {
			return err
		}
		for _, c := range m.ToolCalls {
			if c.ID != "" && !rp.answered[c.ID] {
				if err := fn(abortedOutput(&m, c.ID)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return session.ReadFileContext(ctx, path, h, func(r *session.Record) error {
		if r.Type == "compacted" {
			items := replacement(r.Line.Raw)
			if items == nil {
				rec := legacySummary(r)
				return send(&rec, entryKey{r.Line.Num, legacySub})
			}
			for i, it := range items {
				rec := it.record(r)
				if err := send(&rec, entryKey{r.Line.Num, i}); err != nil {
					return err
				}
			}
			return nil
		}
		if !historyItem(r) {
			return nil
		}
		return send(r, entryKey{r.Line.Num, -1})
	})
}

// abortedOutput is the output Codex sends for call id of m when no output
// answers it (Codex was killed during the tool): every request carries
// Codex's own "aborted" for it, right after the call; the file never does.
func abortedOutput(m *session.Message, id string) *session.Message {
	return &session.Message{Turn: m.Turn, Role: session.RoleTool, Text: AbortedOutput, Injected: true, Synthetic: true,
		ToolResults: []session.ToolResult{{CallID: id, Output: AbortedOutput}},
		Line:        m.Line, Offset: m.Offset, ID: id, Timestamp: m.Timestamp}
}

func anyIn(rs []session.ToolResult, ids map[string]bool) bool {
	for _, r := range rs {
		if ids[r.CallID] {
			return true
		}
	}
	return false
}

// message makes the Message of a response item.
func message(r *session.Record) session.Message {
	m := session.Message{Role: r.Role, Text: r.Text, Thinking: r.Thinking, ToolCalls: r.ToolCalls, ToolResults: r.ToolResults,
		Prompt: r.UserPrompt, Line: r.Line.Num, Offset: r.Line.Offset, Model: r.Model, Timestamp: r.Timestamp}
	m.Summary = r.Kind == session.KindCompaction || r.Role == session.RoleUser && strings.HasPrefix(r.Text, SummaryPrefix)
	m.Injected = injected(r) && !m.Summary
	if len(r.ToolCalls) > 0 {
		m.ID = r.ToolCalls[0].ID
	}
	if len(r.ToolResults) > 0 {
		m.ID = r.ToolResults[0].CallID
	}
	return m
}

// replItem is one item of a compacted record's replacement history.
type replItem struct {
	raw    json.RawMessage
	user   bool // a user message that starts a turn
	inject bool
}

// record decodes the item as the response_item line it once was.
func (it replItem) record(from *session.Record) session.Record {
	line := jsonl.Line{Num: from.Line.Num, Offset: from.Line.Offset, Status: jsonl.OK,
		Raw: append(append([]byte(`{"type":"response_item","payload":`), it.raw...), '}')}
	r := session.Decode(Home{}, &line)
	r.Timestamp = from.Timestamp
	if r.Role == session.RoleUser && strings.HasPrefix(r.Text, SummaryPrefix) {
		r.UserPrompt, r.Prompt = false, ""
	}
	return r
}

// replacement returns the items of a compacted line's replacement_history,
// or nil when it has none.
func replacement(line []byte) []replItem {
	var v struct {
		Payload struct {
			History []json.RawMessage `json:"replacement_history"`
		} `json:"payload"`
	}
	if json.Unmarshal(jsonl.Strict(line), &v) != nil || v.Payload.History == nil {
		return nil
	}
	out := make([]replItem, 0, len(v.Payload.History))
	for _, raw := range v.Payload.History {
		it := replItem{raw: raw}
		var m struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(raw, &m)
		if m.Type == "message" {
			text := strings.TrimLeft(session.TextOf(m.Content), " \t\r\n")
			switch {
			case m.Role == "developer" || m.Role == "system":
				it.inject = true
			case m.Role == "user" && strings.HasPrefix(text, SummaryPrefix):
			case m.Role == "user" && Contextual(text):
				it.inject = true
			case m.Role == "user":
				it.user = true
			}
		}
		out = append(out, it)
	}
	return out
}

// legacySummary is the message of a compacted record without a
// replacement history (before 0.46): Codex rebuilds the history from the
// user messages so far and this summary.
func legacySummary(from *session.Record) session.Record {
	var v struct {
		Payload struct {
			Message string `json:"message"`
		} `json:"payload"`
	}
	json.Unmarshal(jsonl.Strict(from.Line.Raw), &v)
	return session.Record{Agent: Agent, Line: from.Line, Kind: session.KindCompaction, Type: "compacted",
		Role: session.RoleUser, Text: v.Payload.Message, Timestamp: from.Timestamp, ContextTokens: -1}
}
