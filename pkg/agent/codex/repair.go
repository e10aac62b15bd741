package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

// AbortedOutput is the output Codex gives a call it never ran to the end
// (codex.md §7: the request carries it for a call without an output).
const AbortedOutput = "aborted"

// NewMend implements repair.Mender.
func (Home) NewMend(now time.Time) repair.Mend {
	return &mend{now: now, ordinal: -1}
}

type codexCall struct {
	id     string
	custom bool // custom_tool_call (apply_patch …): answered with custom_tool_call_output
	line   jsonl.Line
}

type mend struct {
	now     time.Time
	ordinal int64
	// open are the calls not answered so far and not followed by any other
	// response item: only such calls are still open when the file ends.
	open []codexCall
}

// Record implements repair.Mend.
func (m *mend) Record(r *session.Record) []repair.Fix {
	if o, ok := Ordinal(r.Line.Raw); ok {
		m.ordinal = o
	}
	if !strings.HasPrefix(r.Type, "response_item/") {
		return nil
	}
	switch {
	case len(r.ToolResults) > 0:
		kept := m.open[:0]
		for _, c := range m.open {
			if !answersCall(r, c.id) {
				kept = append(kept, c)
			}
		}
		m.open = kept
		return nil
	case len(r.ToolCalls) == 0:
		// a message or reasoning after an unanswered call: Codex answers
		// that call itself, in place, in every request ("aborted"), so it
		// is not damage the file must carry
		m.open = m.open[:0]
		return nil
	}
	for _, c := range r.ToolCalls {
		if c.ID == "" {
			continue
		}
		l := r.Line
		l.Raw = nil
		m.open = append(m.open, codexCall{id: c.ID, custom: strings.HasSuffix(r.Type, "/custom_tool_call"), line: l})
	}
	return nil
}

func answersCall(r *session.Record, id string) bool {
	for _, res := range r.ToolResults {
		if res.CallID == id {
			return true
		}
	}
	return false
}

// UTF8 implements repair.Mend: Codex reads its rollout as UTF-8 text and
// cannot use a line that is not; it leaves the file as a corrupt line.
func (m *mend) UTF8([]byte) []byte { return nil }

// DuplicateKey implements repair.Mend: Codex records carry no identity of
// their own, and two equal token_count events are normal.
func (m *mend) DuplicateKey(*session.Record) string { return "" }

// End implements repair.Mend: calls still open when the file ends (Codex
// was killed during the tool) get the output Codex itself gives them,
// "aborted", written after the last line with the next ordinal.
func (m *mend) End() []repair.Fix {
	var fixes []repair.Fix
	for i, c := range m.open {
		at := m.now.Add(time.Duration(i) * time.Millisecond)
		ord := int64(-1)
		if m.ordinal >= 0 {
			m.ordinal++
			ord = m.ordinal
		}
		fixes = append(fixes, repair.Append(&c.line, repair.KindDangling,
			fmt.Sprintf("call %s was never answered (Codex stopped during the tool): answered %q, as Codex answers a call it aborted", c.id, AbortedOutput),
			callOutputLine(at, ord, c)))
	}
	return fixes
}

// callOutputLine writes a function_call_output (or custom_tool_call_output)
// as Codex 0.169 does, with an fco_ id.
func callOutputLine(at time.Time, ordinal int64, c codexCall) []byte {
	var b bytes.Buffer
	b.WriteString(`{"timestamp":"`)
	b.WriteString(at.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteString(`",`)
	if ordinal >= 0 {
		b.WriteString(`"ordinal":`)
		b.WriteString(strconv.FormatInt(ordinal, 10))
		b.WriteString(`,`)
	}
	typ := "function_call_output"
	if c.custom {
		typ = "custom_tool_call_output"
	}
	b.WriteString(`"type":"response_item","payload":{"type":"` + typ + `","id":"fco_` + newUUIDv7(at) + `","call_id":`)
	q, _ := json.Marshal(c.id)
	b.Write(q)
	b.WriteString(`,"output":"` + AbortedOutput + `"}}`)
	return b.Bytes()
}
