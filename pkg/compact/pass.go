package compact

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// plan is what the first pass found.
type plan struct {
	size        int64
	endsNL      bool
	activeStart int   // first line of the live context (after the last compaction boundary)
	split       int   // first line of the kept tail
	splitOffset int64 // its byte offset
	messages    int   // user/assistant messages in the live context
	model       string
	recorded    int64 // last recorded context size, -1 if none
}

// msgCounter decides which records begin a user/assistant message, the
// unit --keep counts (Kimi counts its user and assistant messages; one
// Claude response spread over several lines, or one Codex response made of
// reasoning, text and calls, is one message).
type msgCounter struct {
	agent       session.Agent
	inAssistant bool
	lastMsgID   string
}

// conversational reports whether a record is a message of the live
// conversation at all.
func conversational(r *session.Record) bool {
	if r.Sidechain {
		return false
	}
	switch r.Kind {
	case session.KindMessage:
		return r.Role == session.RoleUser || r.Role == session.RoleAssistant || r.Role == session.RoleTool ||
			r.Role == session.RoleSystem && r.Agent == session.Kimi
	case session.KindCompaction:
		// an earlier summary is a user message of the live context
		return r.Role == session.RoleUser
	}
	return false
}

func (c *msgCounter) starts(r *session.Record) bool {
	if !conversational(r) {
		return false
	}
	switch r.Role {
	case session.RoleUser:
		c.inAssistant = false
		if c.agent == session.Codex && r.Synthetic {
			return false // injected context, not a conversation message
		}
		return true
	case session.RoleAssistant:
		defer func() { c.inAssistant = true }()
		switch c.agent {
		case session.Kimi:
			return true
		case session.Claude:
			if r.MessageID != "" && r.MessageID == c.lastMsgID {
				return false
			}
			c.lastMsgID = r.MessageID
			return true
		default:
			return !c.inAssistant
		}
	case session.RoleTool:
		c.inAssistant = false
	}
	return false
}

// isBoundary reports whether a record starts a new live context (a
// compaction the client itself will resume from).
func isBoundary(agent session.Agent, r *session.Record) bool {
	switch agent {
	case session.Claude:
		return r.Kind == session.KindCompaction && r.Role == session.RoleSystem && !r.Sidechain
	case session.Clawdcode:
		return r.Type == "system/compact_boundary"
	case session.Codex:
		return r.Type == "compacted"
	}
	return false
}

// recordedContext returns the context size a record records, or -1.
func recordedContext(agent session.Agent, r *session.Record) int64 {
	n, _ := session.RecordedContext(r)
	return n
}

// findSplit is the first pass: where does the live context start, how many
// messages does it hold, and where does the kept tail begin.
func findSplit(ctx context.Context, path string, f session.Format, keep int, w writer) (*plan, error) {
	fh, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	p := &plan{activeStart: 1, recorded: -1, endsNL: true}
	agent := f.Agent()
	mc := &msgCounter{agent: agent}
	type start struct {
		line int
		off  int64
	}
	// the last message starts (enough to look back over a preserved
	// segment), and the last conversation lines' uuids
	starts := make([]start, keep+preserveWindow)
	type seen struct {
		uuid string
		line int
	}
	recent := make([]seen, preserveWindow)
	all, nRecent := 0, 0
	n := 0 // message starts in the live context
	rd := jsonl.NewReader(bufio.NewReaderSize(fh, 1<<20))
	for {
		l, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		p.endsNL = l.EOL != jsonl.NoEOL
		if l.Num%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if agent == session.Kimi {
			kimiRepair(l)
		}
		r := session.Decode(f, l)
		w.observe(&r)
		if isBoundary(agent, &r) {
			p.activeStart, n = l.Num, 0
			mc = &msgCounter{agent: agent}
			// Claude Code keeps the segment its compaction preserved (by
			// reference, before the boundary) in the live context
			if head := preservedHead(l.Raw); head != "" {
				for i := 1; i <= min(nRecent, preserveWindow); i++ {
					if s := recent[(nRecent-i)%preserveWindow]; s.uuid == head {
						p.activeStart = s.line
						break
					}
				}
				for i := 1; i <= min(all, len(starts)); i++ {
					if starts[(all-i)%len(starts)].line < p.activeStart {
						break
					}
					n++
				}
			}
		}
		if v := recordedContext(agent, &r); v >= 0 {
			p.recorded = v
		}
		if r.Model != "" && r.Model != "<synthetic>" {
			p.model = r.Model
		}
		if conversational(&r) && r.UUID != "" {
			recent[nRecent%preserveWindow] = seen{r.UUID, l.Num}
			nRecent++
		}
		if mc.starts(&r) {
			starts[all%len(starts)] = start{l.Num, l.Offset}
			all++
			n++
		}
	}
	p.size = rd.Offset()
	p.messages = n
	if n > keep {
		s := starts[(all-keep)%len(starts)] // the keep-th last start
		p.split, p.splitOffset = s.line, s.off
	}
	return p, nil
}

// preserveWindow is how far back (in conversation lines, and in messages)
// a Claude Code preserved segment is looked for.
const preserveWindow = 256

// preservedHead returns compactMetadata.preservedSegment.headUuid of a
// Claude Code compact_boundary line, or "".
func preservedHead(raw []byte) string {
	if !bytes.Contains(raw, []byte(`"preservedSegment"`)) {
		return ""
	}
	v, err := parseJSON(raw)
	if err != nil {
		return ""
	}
	return v.get("compactMetadata").get("preservedSegment").getStr("headUuid")
}

// pass2 reads the file again: the compacted part feeds the summary, the
// tail is collected.
type pass2 struct {
	plan    *plan
	opt     Options
	w       writer
	count   *tokens.Counter
	ex      *extractor
	res     *Result
	hist    *history
	tail    []*titem
	before  int
	sawUser bool
}

func (p *pass2) run(path string, f session.Format) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	agent := f.Agent()
	mc := &msgCounter{agent: agent}
	tr := &truncator{count: p.count, max: p.opt.MaxToolOutput}
	rd := jsonl.NewReader(bufio.NewReaderSize(fh, 1<<20))
	for {
		l, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		if l.Num%1024 == 0 && p.opt.Ctx.Err() != nil {
			return p.opt.Ctx.Err()
		}
		if l.Num < p.plan.activeStart {
			continue
		}
		if agent == session.Kimi {
			kimiRepair(l)
		}
		r := session.Decode(f, l)
		if l.Num == p.plan.activeStart && isBoundary(agent, &r) && agent == session.Codex {
			// Codex's compacted record is itself history: its message
			// becomes the first (user) message of the live context
			r.Kind, r.Role = session.KindCompaction, session.RoleUser
		}
		startsMsg := mc.starts(&r)
		if r.UserPrompt || r.Kind == session.KindCompaction && r.Role == session.RoleUser {
			p.sawUser = true // a request, or an earlier summary of requests
		}
		if conversational(&r) {
			p.before += recordTokens(p.count, r.Text, r.ToolCalls, r.ToolResults)
		}
		if l.Num < p.plan.split {
			if r.Kind == session.KindCorrupt {
				p.res.CorruptCompacted++
				continue
			}
			p.w.seeCompacted(&r)
			if agent == session.Codex && r.Type == "compacted" {
				// the user messages Codex kept at that compaction
				for _, it := range codexReplacement(r.Line.Raw) {
					if it.role == "user" && !it.context && !it.summary {
						u := session.Record{Agent: agent, Kind: session.KindMessage, Role: session.RoleUser,
							Text: it.text, Prompt: it.text, UserPrompt: true}
						p.ex.add(&u)
						if p.hist != nil {
							if err := p.hist.add(&u); err != nil {
								return err
							}
						}
					}
				}
			}
			if conversational(&r) {
				p.ex.add(&r)
				if p.hist != nil {
					if err := p.hist.add(&r); err != nil {
						return err
					}
				}
			}
			continue
		}
		if r.Kind == session.KindCorrupt {
			p.res.CorruptTail++
			continue
		}
		if !conversational(&r) {
			continue
		}
		it := p.w.tailItem(&r)
		if it == nil {
			continue
		}
		it.role, it.text, it.msgStart, it.line = r.Role, r.Text, startsMsg, l.Num
		it.calls = append([]session.ToolCall(nil), r.ToolCalls...)
		it.results = append([]session.ToolResult(nil), r.ToolResults...)
		if tr.max > 0 && len(it.results) > 0 {
			if n := p.w.truncate(it, tr.shorten); n > 0 {
				p.res.Tail.TruncatedToolOutputs += n
				it.raw = nil
				// the counted text follows the shortened outputs
				for i := range it.results {
					if s, ok := tr.shorten(it.results[i].Output); ok {
						if it.text == it.results[i].Output {
							it.text = s
						}
						it.results[i].Output = s
					}
				}
			}
		}
		p.tail = append(p.tail, it)
	}
	return nil
}

// finishTail drops tool results whose call was compacted away and gives
// every kept call without a result an aborted one.
func (p *pass2) finishTail() []*titem {
	calls := map[string]bool{}
	for _, it := range p.tail {
		for _, c := range it.calls {
			if c.ID != "" {
				calls[c.ID] = true
			}
		}
	}
	var kept []*titem
	answered := map[string]bool{}
	for _, it := range p.tail {
		if len(it.results) > 0 && len(it.calls) == 0 {
			ok := false
			for _, r := range it.results {
				if calls[r.CallID] {
					ok = true
				}
			}
			if !ok {
				p.res.Tail.DroppedToolResults++
				continue
			}
		}
		for _, r := range it.results {
			answered[r.CallID] = true
		}
		kept = append(kept, it)
	}
	var out []*titem
	var pending []session.ToolCall
	var from *titem
	flush := func() {
		for _, c := range pending {
			out = append(out, p.w.aborted(c, from))
			p.res.Tail.AbortedToolCalls++
		}
		pending = nil
	}
	for _, it := range kept {
		if it.msgStart {
			flush()
		}
		out = append(out, it)
		for _, c := range it.calls {
			if c.ID != "" && !answered[c.ID] {
				pending = append(pending, c)
				from = it
			}
		}
	}
	flush()
	return out
}

// titem is one record of the kept tail.
type titem struct {
	val      *value // the parsed line
	raw      []byte // the original line, nil once changed
	role     session.Role
	text     string
	calls    []session.ToolCall
	results  []session.ToolResult
	msgStart bool
	line     int  // 0 for records sessctl made
	aborted  bool // a result sessctl made for a call without one
	context  bool // Codex injected context (developer, environment)
}

func (it *titem) tokens(c *tokens.Counter) int {
	return recordTokens(c, it.text, it.calls, it.results)
}

// bytes is the line as it will be written: the original bytes when
// unchanged.
func (it *titem) bytes() []byte {
	if it.raw != nil {
		return it.raw
	}
	return compactStyle.encode(nil, it.val)
}

// kimiRepair reads a line the way Kimi does: invalid UTF-8 becomes U+FFFD
// (Python decodes the file with errors="replace"), after which the line may
// well be a valid record.
func kimiRepair(l *jsonl.Line) {
	if l.Status != jsonl.InvalidUTF8 {
		return
	}
	l.Raw, _ = jsonl.PythonReplace(l.Raw)
	l.Status = jsonl.Classify(l.Raw, l.EOL != jsonl.NoEOL)
	l.RawControl = true // Strict is a no-op when nothing needs escaping
}
