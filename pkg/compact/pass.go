package compact

import (
	"context"

	"github.com/sessctl/sessctl/pkg/compact/layout"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// The one pass over the live context: the home's History streams the
// messages the client sends on resume, in that order. Every message is
// counted (tokens before) and digested; the recent ones wait in a window
// that always starts at the keep-th last message; a message pushed out of
// the window is compacted (it feeds the summary). When History ends, the
// window is the kept tail. Only the window's small entries are held; the
// kept lines are read again, by offset, at the end.

// entry is a live message waiting in the window.
type entry struct {
	msg   session.Message // without its texts (see light)
	part  int             // its place among the live messages of its line
	start bool            // starts a --keep unit
	dig   *digest
	spool int64 // where its rendering starts in the summariser's input, -1 without one
}

// light is m without the texts that can be large.
func light(m *session.Message) session.Message {
	l := *m
	l.Text, l.Thinking, l.ToolCalls, l.ToolResults = "", "", nil, nil
	return l
}

// split is what the pass found.
type split struct {
	messages    int  // --keep units in the live context
	compacted   int  // of them, compacted
	newContent  bool // the compacted part holds more than earlier summaries and injected context
	sawUser     bool // a request, or a summary of requests, in the live context
	activeStart int  // first line of the live context
	before      int  // tokens of the live context
	model       string
	tail        []entry
}

type passState struct {
	keep   int
	layout layout.Layout
	count  *tokens.Counter
	ex     *extractor
	hist   *history // the summariser's input, or nil

	window   []entry
	head     int // window[head:] are waiting
	starts   int // units in the window
	lastLine int
	lastPart int
	prev     *session.Message // the last non-injected message, if an assistant's
	prevRole session.Role
	sp       split
}

// livePass reads the live context and splits it.
func livePass(ctx context.Context, conv session.Conversation, path string, st *passState) (*split, error) {
	st.sp.activeStart = -1
	st.lastLine = -1
	err := conv.History(ctx, path, session.HistoryOptions{}, func(m *session.Message) error {
		if m.Synthetic {
			// in no line: a kept call without an output gets the client's
			// own answer from the layout (Aborted) when the tail is written
			return nil
		}
		part := 0
		if m.Line == st.lastLine {
			part = st.lastPart + 1
		}
		st.lastLine, st.lastPart = m.Line, part
		if st.sp.activeStart < 0 || m.Line < st.sp.activeStart {
			st.sp.activeStart = m.Line
		}
		st.sp.before += recordTokens(st.count, m.Text, m.ToolCalls, m.ToolResults)
		if m.Model != "" && m.Model != "<synthetic>" {
			st.sp.model = m.Model
		}
		if m.Prompt || m.Summary {
			st.sp.sawUser = true
		}
		start := false
		if !m.Injected {
			switch m.Role {
			case session.RoleUser:
				start = true // a request, or an earlier summary
			case session.RoleAssistant:
				start = st.prevRole != session.RoleAssistant || !st.layout.SameResponse(st.prev, m)
			}
			st.prevRole = m.Role
			if m.Role == session.RoleAssistant {
				l := light(m)
				st.prev = &l
			}
		}
		e := entry{msg: light(m), part: part, start: start, dig: digestOf(m, st.layout.EarlierSummary), spool: -1}
		if st.hist != nil {
			e.spool = st.hist.offset()
			if err := st.hist.add(m); err != nil {
				return err
			}
		}
		if start {
			if st.starts == st.keep {
				st.popUnit()
			}
			st.starts++
			st.sp.messages++
		}
		st.window = append(st.window, e)
		// let the backing array go when most of it is compacted
		if st.head > 1024 && st.head > len(st.window)/2 {
			st.window = append([]entry(nil), st.window[st.head:]...)
			st.head = 0
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if st.sp.messages > st.keep {
		st.sp.tail = st.window[st.head:]
	}
	return &st.sp, nil
}

// popUnit compacts the window's first unit: its first start and what
// follows up to the next start (and whatever came before the first start).
func (st *passState) popUnit() {
	seen := false
	for st.head < len(st.window) {
		e := &st.window[st.head]
		if e.start {
			if seen {
				break
			}
			seen = true
			st.starts--
			st.sp.compacted++
		}
		st.compact(e)
		st.window[st.head] = entry{}
		st.head++
	}
}

// compact feeds a message leaving the window to the summary and the layout.
func (st *passState) compact(e *entry) {
	st.ex.add(e.dig)
	st.layout.Compacted(&e.msg, e.part)
	if !e.msg.Injected && !e.msg.Summary {
		st.sp.newContent = true
	}
}
