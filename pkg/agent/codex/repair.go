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
	return &mend{now: now, ordinal: -1, answered: map[string]bool{}}
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
	// mids are the places where the thread went on from open calls
	mids     []codexMid
	answered map[string]bool // every call id an output answers
}

type codexMid struct {
	calls   []codexCall
	line    jsonl.Line // the item that went on (Raw not kept)
	at      time.Time
	ordinal int64 // of the line before it
}

// Record implements repair.Mend.
func (m *mend) Record(r *session.Record) []repair.Fix {
	prev := m.ordinal
	if o, ok := Ordinal(r.Line.Raw); ok {
		m.ordinal = o
	}
	if !strings.HasPrefix(r.Type, "response_item/") {
		return nil
	}
	switch {
	case len(r.ToolResults) > 0:
		for _, res := range r.ToolResults {
			m.answered[res.CallID] = true
		}
		kept := m.open[:0]
		for _, c := range m.open {
			if !answersCall(r, c.id) {
				kept = append(kept, c)
			}
		}
		m.open = kept
		return nil
	case len(r.ToolCalls) == 0 && len(m.open) > 0:
		// a message or reasoning after an unanswered call (Codex was killed
		// during the tool, then resumed): Codex answers the call in every
		// request it sends ("aborted", right after the call) but never in
		// the file. The answer is written where it would have been, just
		// before r, with the ordinal of the line before it (Codex reuses
		// and skips ordinals without complaint; it only needs the last
		// line to have one) and r's timestamp
		// (End decides: an output may still come later in the file)
		at := r.Timestamp
		if at.IsZero() {
			at = m.now
		}
		l := r.Line
		l.Raw = nil
		m.mids = append(m.mids, codexMid{calls: append([]codexCall(nil), m.open...), line: l, at: at, ordinal: prev})
		m.open = m.open[:0]
		return nil
	case len(r.ToolCalls) == 0:
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
	for _, md := range m.mids {
		var calls []codexCall
		var lines [][]byte
		for _, c := range md.calls {
			if !m.answered[c.id] {
				calls = append(calls, c)
				lines = append(lines, callOutputLine(md.at, md.ordinal, c))
			}
		}
		if len(calls) > 0 {
			fixes = append(fixes, repair.Insert(&md.line, &calls[0].line, repair.KindDangling,
				m.reason(calls, "Codex stopped during the tool, and the thread went on"), lines...))
		}
	}
	for i, c := range m.open {
		at := m.now.Add(time.Duration(i) * time.Millisecond)
		ord := int64(-1)
		if m.ordinal >= 0 {
			m.ordinal++
			ord = m.ordinal
		}
		fixes = append(fixes, repair.Append(&c.line, repair.KindDangling, m.reason([]codexCall{c}, "Codex stopped during the tool"),
			callOutputLine(at, ord, c)))
	}
	return fixes
}

func (m *mend) reason(calls []codexCall, why string) string {
	if len(calls) == 1 {
		return fmt.Sprintf("call %s was never answered (%s): answered %q, as Codex answers a call it aborted", calls[0].id, why, AbortedOutput)
	}
	return fmt.Sprintf("%d calls were never answered (%s): answered %q, as Codex answers a call it aborted", len(calls), why, AbortedOutput)
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
