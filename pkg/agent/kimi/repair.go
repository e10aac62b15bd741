package kimi

import (
	"bytes"
	"fmt"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

// InterruptedToolResult is the text of the tool message repair writes for a
// call kimi-cli never answered. kimi-cli writes an assistant message and its
// tool messages together after the tools ran (KimiSoul._grow_context, under
// asyncio.shield), so it has no record of its own for an interrupted tool:
// an unanswered call only comes from a crash between those appends, and the
// next request is refused (400: "tool_call_ids did not have response
// messages", kimi-code #269/#660). The answer has the shape of kimi-cli's
// tool error (tool_result_to_message: a "<system>ERROR: …</system>" text
// part, written as a bare string since it is the only part); the words are
// sessctl's, after the "Interrupted" its shell shows for such a call.
const InterruptedToolResult = "<system>ERROR: Interrupted: the session stopped before this tool call finished, and no result was saved.</system>"

// NewMend implements repair.Mender.
func (Home) NewMend(time.Time) repair.Mend { return &mend{} }

type mend struct {
	next    int // the id kimi-cli gives the next _checkpoint
	renum   *[2]int
	call    jsonl.Line // the assistant line whose calls are pending (Raw not kept)
	pending []string   // its calls not answered yet, in call order
}

// Record implements repair.Mend: _checkpoint ids are renumbered in the
// sequence kimi-cli writes them (0, 1, 2, … in file order: its revert_to
// and D-Mail find a checkpoint by id), with the "<system>CHECKPOINT N</system>"
// message written after one; a tool call left unanswered before the next
// message is answered right there, where the API wants its result.
func (m *mend) Record(r *session.Record) []repair.Fix {
	var fixes []repair.Fix
	renum := m.renum
	m.renum = nil
	switch {
	case r.Kind == session.KindUsage:
		return nil // written between an assistant message and its results
	case r.Role == session.RoleTool:
		for _, res := range r.ToolResults {
			for i, id := range m.pending {
				if id == res.CallID {
					m.pending = append(m.pending[:i], m.pending[i+1:]...)
					break
				}
			}
		}
		return nil
	}
	if len(m.pending) > 0 {
		fixes = append(fixes, repair.Insert(&r.Line, &m.call, repair.KindDangling, m.reason(), m.answers()...))
		m.pending = nil
	}
	switch {
	case r.Kind == session.KindCheckpoint:
		want := m.next
		m.next = want + 1
		if r.CheckpointID != want {
			line := ojson.Python.Encode(ojson.Obj(ojson.KV("role", ojson.Str("_checkpoint")), ojson.KV("id", ojson.Int(int64(want)))))
			fixes = append(fixes, repair.Replace(&r.Line, repair.KindSequence,
				fmt.Sprintf("checkpoint id %d out of sequence: renumbered %d, the id kimi-cli gives the checkpoint that follows %d", r.CheckpointID, want, want-1), line))
			m.renum = &[2]int{r.CheckpointID, want}
		}
	case renum != nil && r.Role == session.RoleUser:
		old := []byte(fmt.Sprintf("<system>CHECKPOINT %d</system>", renum[0]))
		if bytes.Contains(r.Line.Raw, old) && bytes.Count(r.Line.Raw, []byte("CHECKPOINT")) == 1 {
			b := bytes.Replace(r.Line.Raw, old, []byte(fmt.Sprintf("<system>CHECKPOINT %d</system>", renum[1])), 1)
			fixes = append(fixes, repair.Replace(&r.Line, repair.KindSequence,
				fmt.Sprintf("the message kimi-cli writes after checkpoint %d names it: renumbered %d with it", renum[0], renum[1]), b))
		}
	case r.Role == session.RoleAssistant && len(r.ToolCalls) > 0:
		m.call = r.Line
		m.call.Raw = nil
		for _, c := range r.ToolCalls {
			if c.ID != "" {
				m.pending = append(m.pending, c.ID)
			}
		}
	}
	return fixes
}

func (m *mend) reason() string {
	if len(m.pending) == 1 {
		return fmt.Sprintf("tool call %s was never answered (the client stopped before it saved the result): answered with a tool error", m.pending[0])
	}
	return fmt.Sprintf("%d tool calls were never answered (the client stopped before it saved their results): answered with tool errors", len(m.pending))
}

// answers are the tool messages for the pending calls, in call order, as
// pydantic's model_dump_json writes kimi-cli's Message.
func (m *mend) answers() [][]byte {
	var out [][]byte
	for _, id := range m.pending {
		out = append(out, ojson.Fresh.Encode(ojson.Obj(
			ojson.KV("role", ojson.Str("tool")),
			ojson.KV("content", ojson.Str(InterruptedToolResult)),
			ojson.KV("tool_call_id", ojson.Str(id)))))
	}
	return out
}

// UTF8 implements repair.Mend: kimi-cli reads context.jsonl as text with
// errors="replace", so each maximal invalid subpart becomes U+FFFD; the
// line is written as it reads it. A line that is still not an object Kimi
// accepts leaves the file.
func (*mend) UTF8(raw []byte) []byte {
	b, _ := jsonl.PythonReplace(raw)
	if pyLoadsObject(b) == nil {
		return nil
	}
	return b
}

// DuplicateKey implements repair.Mend: Kimi's records carry no identity,
// and the same message may legitimately be written twice.
func (*mend) DuplicateKey(*session.Record) string { return "" }

// End implements repair.Mend: calls still unanswered when the file ends
// are answered after its last line.
func (m *mend) End() []repair.Fix {
	if len(m.pending) == 0 {
		return nil
	}
	return []repair.Fix{repair.Append(&m.call, repair.KindDangling, m.reason(), m.answers()...)}
}
