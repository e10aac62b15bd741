package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

// InterruptedToolUse is the tool result Claude Code writes for a tool call
// it did not run to the end (its constant for "interrupted by user for
// tool use", 2.1.197 and 2.1.330).
const InterruptedToolUse = "[Request interrupted by user for tool use]"

// InterruptedSessionEnd is the tool result Claude Code 2.1.330 writes, when
// it resumes, for a call the last session ended during.
const InterruptedSessionEnd = "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is unknown. Check whether it took effect before relying on it or running it again.]"

// NewMend implements repair.Mender.
func (Home) NewMend(now time.Time) repair.Mend {
	return &mend{now: now, pending: map[string]*pendingCall{}, early: map[string]bool{}, answered: map[string]bool{}, inMid: map[string]bool{},
		links: repair.Links{Strip: stripResults, SetParent: setParent}}
}

type pendingCall struct {
	id    string
	line  jsonl.Line // the assistant line that made the call (Raw not kept)
	owner string     // that line's uuid
	seq   int
}

// envelope is what a record Claude Code writes carries besides its message.
type envelope struct {
	UserType   string `json:"userType"`
	Entrypoint string `json:"entrypoint"`
	CWD        string `json:"cwd"`
	SessionID  string `json:"sessionId"`
	Version    string `json:"version"`
	GitBranch  string `json:"gitBranch"`
	PromptID   string `json:"promptId"`
	AgentID    string `json:"agentId"`
}

type mend struct {
	now      time.Time
	pending  map[string]*pendingCall
	early    map[string]bool // results whose call was not seen yet
	parents  map[string]link // recent main-chain uuid -> parent
	answered map[string]bool // every call id a main-chain result answers
	inMid    map[string]bool // calls noted in a mid
	mids     []mid
	version  string // of the newest record that says
	side     bool   // the side (sidechain or not) of the file's chain
	sideSet  bool
	seq      int
	leaf     string   // uuid of the newest main-chain record
	env      envelope // of the newest main-chain assistant record with a call
	promptID string   // of the newest main-chain user record
	links    repair.Links
}

// Record implements repair.Mend: it follows the main chain's tool calls
// and their results.
func (m *mend) Record(r *session.Record) []repair.Fix {
	// a progress line is not a parent the client gives a record it appends
	// (children of one hang from its parent when the file is loaded)
	m.links.Record(r, r.Type != "progress", len(r.ToolResults) > 0 && r.Text == "" && r.Thinking == "" && len(r.ToolCalls) == 0)
	if r.Version != "" {
		m.version = r.Version
	}
	if r.UUID != "" && !m.sideSet {
		// the chain is the side of the file's first entry: the main chain,
		// or in a subagent's own transcript its sidechain
		m.side, m.sideSet = r.Sidechain, true
	}
	if r.Sidechain != m.side {
		return nil
	}
	prev := m.leaf
	if r.UUID != "" {
		m.leaf = r.UUID
	}
	if len(m.pending) > 0 && r.Role != session.RoleAssistant && len(r.ToolResults) == 0 &&
		r.Type != "progress" && r.UUID != "" && r.ParentUUID != "" && (r.ParentUUID == prev || m.beforeCalls(r.ParentUUID)) {
		// the conversation went on from a call not answered so far: from
		// the call itself, or, when the client was resumed after a crash
		// during the tool, from the line before it (the client drops an
		// assistant line whose calls have no result, and goes on from its
		// parent). Results of parallel calls may still come (after an
		// attachment, say): End decides, and answers the calls no result
		// ever answers where the client would have, after the call, with
		// r hanging from the answer
		parent := prev // it went on from the chain's tip: the answer goes on from there
		if r.ParentUUID != prev {
			parent = "" // from before the call: the answer hangs from the call
		}
		m.noteMid(r, parent)
	}
	if r.UUID != "" {
		m.remember(r.UUID, r.ParentUUID, r.UserPrompt)
	}
	switch r.Role {
	case session.RoleAssistant:
		if len(r.ToolCalls) == 0 {
			return nil
		}
		var e envelope
		if json.Unmarshal(jsonl.Strict(r.Line.Raw), &e) == nil {
			m.env = e
		}
		for _, c := range r.ToolCalls {
			if m.early[c.ID] {
				delete(m.early, c.ID)
				continue
			}
			if c.ID != "" {
				m.seq++
				l := r.Line
				l.Raw = nil
				m.pending[c.ID] = &pendingCall{id: c.ID, line: l, owner: r.UUID, seq: m.seq}
			}
		}
	case session.RoleUser, session.RoleTool:
		var e envelope
		if json.Unmarshal(jsonl.Strict(r.Line.Raw), &e) == nil && e.PromptID != "" {
			m.promptID = e.PromptID
		}
		for _, res := range r.ToolResults {
			m.answered[res.CallID] = true
			if _, ok := m.pending[res.CallID]; ok {
				delete(m.pending, res.CallID)
			} else if res.CallID != "" {
				m.early[res.CallID] = true // its call is written after it
			}
		}
		if r.UserPrompt {
			// a new prompt on another branch than an unanswered call's:
			// the client dropped that branch itself; nothing to answer
			clear(m.pending)
		}
	}
	return nil
}

// mid is a place where the conversation went on from calls that had no
// result yet.
type mid struct {
	calls    []*pendingCall
	line     jsonl.Line // the record that went on (Raw not kept)
	at       time.Time  // its timestamp
	env      envelope
	promptID string
	parent   string // what the answers hang from ("": the newest call's line)
}

func (m *mend) noteMid(r *session.Record, parent string) {
	var calls []*pendingCall
	for _, c := range m.pendingCalls() {
		if !m.inMid[c.id] {
			m.inMid[c.id] = true
			calls = append(calls, c)
		}
	}
	if len(calls) == 0 {
		return
	}
	l := r.Line
	l.Raw = nil
	m.mids = append(m.mids, mid{calls: calls, line: l, at: r.Timestamp, env: m.env, promptID: m.promptID, parent: parent})
}

// recentLinks is how many main-chain parent links are remembered to find
// the line a resumed client went on from (a few lines of one response).
const recentLinks = 256

// remember notes a main-chain record's parent.
func (m *mend) remember(uuid, parent string, prompt bool) {
	if m.parents == nil || len(m.parents) >= recentLinks {
		m.parents = map[string]link{}
	}
	m.parents[uuid] = link{parent, prompt}
}

type link struct {
	parent string
	prompt bool // the record is a user prompt
}

// beforeCalls reports whether u is an ancestor of the line with the newest
// pending call within its turn (up to its prompt): what the client goes on
// from when it drops that line.
func (m *mend) beforeCalls(u string) bool {
	calls := m.pendingCalls()
	for v, i := calls[len(calls)-1].owner, 0; v != "" && i < 16; i++ {
		l, ok := m.parents[v]
		if !ok || l.prompt {
			return false
		}
		if l.parent == u {
			return true
		}
		v = l.parent
	}
	return false
}

// answerBefore answers the pending calls with records written just before
// r, chained after the line of the newest call, and relinks r to the last
// of them.
func (m *mend) answerBefore(md mid, calls []*pendingCall) []repair.Fix {
	parent := md.parent
	if parent == "" {
		parent = calls[len(calls)-1].owner
	}
	at := md.at
	if at.IsZero() {
		at = m.now
	}
	m.env, m.promptID = md.env, md.promptID
	var lines [][]byte
	for i, c := range calls {
		id := newUUID()
		lines = append(lines, m.toolResult(parent, id, c, at.Add(time.Duration(i-len(calls))*time.Millisecond)))
		parent = id
	}
	last := parent
	reason := fmt.Sprintf("tool call %s was never answered (the client stopped during the tool, and the conversation went on): answered as Claude Code answers an interrupted tool use", calls[0].id)
	if len(calls) > 1 {
		reason = fmt.Sprintf("%d tool calls were never answered (the client stopped during the tools, and the conversation went on): answered as Claude Code answers an interrupted tool use", len(calls))
	}
	return []repair.Fix{
		repair.Insert(&md.line, &calls[0].line, repair.KindDangling, reason, lines...),
		repair.Edit(md.line.Num, md.line.Offset, repair.KindParent, fmt.Sprintf("relinked to the answer written before it (%s)", last),
			func(raw []byte) ([]byte, error) { return setParent(raw, last) }),
	}
}

func (m *mend) pendingCalls() []*pendingCall {
	calls := make([]*pendingCall, 0, len(m.pending))
	for _, c := range m.pending {
		calls = append(calls, c)
	}
	sortCalls(calls)
	return calls
}

// UTF8 implements repair.Mend: Node decodes a file's bytes as UTF-8 with
// each maximal invalid subpart replaced by U+FFFD, the rule Python's
// "replace" follows too.
func (m *mend) UTF8(raw []byte) []byte {
	b, _ := jsonl.PythonReplace(raw)
	if !json.Valid(b) {
		return nil
	}
	return b
}

// DuplicateKey implements repair.Mend: Claude Code writes each uuid once.
func (m *mend) DuplicateKey(r *session.Record) string { return r.UUID }

// End implements repair.Mend: the calls of the conversation's last
// assistant message that no result answers (a crash or a kill during the
// tool) are answered as Claude Code answers a tool use it interrupted: a
// user record with an is_error tool_result, chained after the leaf.
func (m *mend) End() []repair.Fix {
	fixes, resolve := m.links.End()
	env, promptID := m.env, m.promptID
	for _, md := range m.mids {
		var calls []*pendingCall
		for _, c := range md.calls {
			if !m.answered[c.id] {
				calls = append(calls, c)
				delete(m.pending, c.id) // answered here, not at the end
			}
		}
		if len(calls) > 0 {
			fixes = append(fixes, m.answerBefore(md, calls)...)
		}
	}
	m.env, m.promptID = env, promptID
	if len(m.pending) == 0 || m.leaf == "" {
		return fixes
	}
	calls := m.pendingCalls()
	parent := resolve(m.leaf) // the leaf itself may leave the file
	for i, c := range calls {
		id := newUUID()
		line := m.toolResult(parent, id, c, m.now.Add(time.Duration(i)*time.Millisecond))
		fixes = append(fixes, repair.Append(&c.line, repair.KindDangling,
			fmt.Sprintf("tool call %s was never answered (the client stopped during the tool): answered as Claude Code answers an interrupted tool use", c.id), line))
		parent = id
	}
	return fixes
}

func sortCalls(cs []*pendingCall) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].seq < cs[j-1].seq; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// toolResult writes the record in Claude Code's own key order: 2.1.197's
// interrupted tool use, or, in a file Claude Code 2.1.330 or later wrote
// last, the record 2.1.330 itself writes on resume for a call the session
// ended during.
func (m *mend) toolResult(parent, id string, c *pendingCall, at time.Time) []byte {
	var b bytes.Buffer
	str := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	b.WriteString(`{"parentUuid":`)
	str(parent)
	if m.side {
		b.WriteString(`,"isSidechain":true,`)
	} else {
		b.WriteString(`,"isSidechain":false,`)
	}
	if m.promptID != "" {
		b.WriteString(`"promptId":`)
		str(m.promptID)
		b.WriteString(`,`)
	}
	if m.side && m.env.AgentID != "" {
		// a subagent's transcript (2.1.x subagents/agent-*.jsonl)
		b.WriteString(`"agentId":`)
		str(m.env.AgentID)
		b.WriteString(`,`)
	}
	if versionAtLeast(m.version, 2, 1, 330) {
		// 2.1.330's own record for a call the session ended during (seen
		// in the e2e harness: TestRepairClaudeKilledThenResumed)
		b.WriteString(`"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":`)
		str(InterruptedSessionEnd)
		b.WriteString(`,"is_error":true,"tool_use_id":`)
		str(c.id)
		b.WriteString(`}]},"uuid":`)
		str(id)
		b.WriteString(`,"timestamp":`)
		str(at.UTC().Format("2006-01-02T15:04:05.000Z"))
		b.WriteString(`,"toolUseResult":`)
		str(InterruptedSessionEnd)
		b.WriteString(`,"toolDenialKind":"interrupted"`)
	} else {
		b.WriteString(`"type":"user","message":{"role":"user","content":[{"tool_use_id":`)
		str(c.id)
		b.WriteString(`,"type":"tool_result","content":`)
		str(InterruptedToolUse)
		b.WriteString(`,"is_error":true}]},"uuid":`)
		str(id)
		b.WriteString(`,"timestamp":`)
		str(at.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	if c.owner != "" {
		b.WriteString(`,"sourceToolAssistantUUID":`)
		str(c.owner)
	}
	for _, kv := range []struct{ k, v string }{
		{"userType", m.env.UserType}, {"entrypoint", m.env.Entrypoint}, {"cwd", m.env.CWD},
		{"sessionId", m.env.SessionID}, {"version", m.env.Version}, {"gitBranch", m.env.GitBranch},
	} {
		if kv.v != "" {
			b.WriteString(`,"` + kv.k + `":`)
			str(kv.v)
		}
	}
	b.WriteString(`}`)
	return b.Bytes()
}

// stripResults removes the tool_result blocks answering ids from a record's
// message.content; nil when no block is left. What is not changed keeps its
// bytes.
func stripResults(raw []byte, ids map[string]bool) ([]byte, error) {
	v, err := ojson.Parse(raw)
	if err != nil {
		return nil, err
	}
	msg := v.Get("message")
	content := msg.Get("content")
	if !content.Is(ojson.Array) {
		return raw, nil
	}
	var kept []*ojson.Value
	for _, b := range content.Elems() {
		if b.GetString("type") == "tool_result" && ids[b.GetString("tool_use_id")] {
			continue
		}
		kept = append(kept, b)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	msg.Set("content", ojson.Arr(kept...))
	return ojson.Compact.Encode(v), nil
}

// setParent sets a record's parentUuid (null for none), keeping its place
// and every other byte.
func setParent(raw []byte, parent string) ([]byte, error) {
	p := ojson.NullValue()
	if parent != "" {
		p = ojson.Str(parent)
	}
	return ojson.SetMember(raw, "parentUuid", p)
}
