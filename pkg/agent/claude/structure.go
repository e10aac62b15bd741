package claude

import (
	"bytes"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// The structure of a transcript, read without its content.
//
// The index of a file (the chain, the turns, where a revert cuts) needs
// little of each line: its type, uuid and parent, side, time, message id,
// the ids of its tool calls and results, and whether its text and thinking
// are empty. The words, the tool inputs and outputs, which are nearly all
// of the bytes of a big session, do not matter, except on the lines that
// may be a prompt or one of the client's synthetic lines. scanFacts reads
// just those fields with usage's lexer (strings skipped with a byte
// search), and leaves every line it is not sure of to the full decoder:
// one whose shape the full decoder could read otherwise (a key that
// differs from a field's name only in case or by an escape, a key given
// twice, a value of a type the field does not take), one whose words
// matter (a user line that is not only tool results, a synthetic reply),
// one with escapes in a value it keeps. TestFactsMatchDecode and
// FuzzFacts hold it to factsOf(Decode(line)), line by line.

// facts is what the index reads of one line.
type facts struct {
	skip bool // blank or corrupt: no part of the conversation
	// typ is the Record's Type ("system/<subtype>" for system lines)
	typ, version, uuid, parent string
	msgID                      string // message.id of an assistant line
	ts                         time.Time
	sidechain                  bool
	// userPrompt: a prompt the user typed (Record.UserPrompt), with its
	// key (sessctl's compaction tail repeats it) and preview
	userPrompt         bool
	promptKey, preview string
	// continuePair: a line of the synthetic pair before a prompt
	continuePair bool
	// callsOnly: an assistant line of tool calls without text or thinking
	callsOnly bool
	// thinkingOnly: an assistant line of thinking only
	thinkingOnly bool
	// result: a user line with tool results; summary: a compaction summary
	result, summary bool
	calls, results  []string // tool call ids; the call ids results answer
	// meta is the line's claudeMeta, decoded for last-prompt records,
	// compaction boundaries and prompts (nil when it does not decode)
	meta *claudeMeta
	// hit: History's Want took the line (set by buildIndex, not by the
	// scanners)
	hit bool
}

// factsOf fills f from a record the full decoder made.
func factsOf(r *session.Record, f *facts) { factsWith(r, f, lineMeta) }

// factsWith is factsOf with the claudeMeta of a line read by meta.
func factsWith(r *session.Record, f *facts, meta func(*jsonl.Line) *claudeMeta) {
	*f = facts{}
	if r.Kind == session.KindCorrupt || r.Kind == session.KindBlank {
		f.skip = true
		return
	}
	f.typ, f.version, f.uuid, f.parent, f.ts, f.sidechain = r.Type, r.Version, r.UUID, r.ParentUUID, r.Timestamp, r.Sidechain
	if r.Type == "assistant" {
		f.msgID = r.MessageID
	}
	f.continuePair = continuePair(r)
	f.callsOnly = r.Role == session.RoleAssistant && len(r.ToolCalls) > 0 && r.Text == "" && r.Thinking == ""
	f.thinkingOnly = r.Type == "assistant" && r.Text == "" && len(r.ToolCalls) == 0 && r.Thinking != ""
	f.result = r.Type == "user" && len(r.ToolResults) > 0
	f.summary = r.Kind == session.KindCompaction && r.Role == session.RoleUser
	for _, c := range r.ToolCalls {
		f.calls = append(f.calls, c.ID)
	}
	for _, t := range r.ToolResults {
		f.results = append(f.results, t.CallID)
	}
	f.userPrompt = r.UserPrompt
	if f.needsMeta() {
		f.meta = meta(&r.Line)
	}
	f.setPrompt(r.Prompt)
}

// needsMeta reports whether the facts of a line need its claudeMeta: a
// prompt's (its promptId), a last-prompt's and a compact boundary's.
func (f *facts) needsMeta() bool {
	return f.userPrompt && f.uuid != "" || f.typ == "last-prompt" || f.typ == "system/compact_boundary"
}

// setPrompt gives a prompt line with a uuid, its meta read, its key and
// its preview. The copy of a prompt that sessctl's compaction writes into
// the kept tail keeps the prompt's promptId (2.1.x writes one on every
// prompt) or, in files without one, its words and time: the key.
func (f *facts) setPrompt(prompt string) {
	if !f.userPrompt || f.uuid == "" {
		return
	}
	if f.meta != nil && f.meta.PromptID != "" {
		f.promptKey = "promptId\x00" + f.meta.PromptID
	} else {
		f.promptKey = session.PromptKey(&session.Record{Timestamp: f.ts, Prompt: prompt})
	}
	f.preview = session.Preview(prompt, session.PreviewLen)
}

// lineMeta decodes a line's claudeMeta, nil when it does not decode.
func lineMeta(l *jsonl.Line) *claudeMeta {
	var m claudeMeta
	if unmarshalLine(l, &m) != nil {
		return nil
	}
	return &m
}

// decodeFactsLazy is the decode step of buildIndex's pass, on a line that
// was not validated (session.ScanFileLazy): the structure scanner where it
// is sure, else the full decoder. The scanner's lexer is strict, so that
// it validates the line in the pass that reads its facts, where a line
// went through the validator, then through the scanner. A line it did not
// read to its end is validated as before.
func decodeFactsLazy(l *jsonl.Line, f *facts) {
	if l.Status == jsonl.OK {
		s := scanner{l: usage.NewStrictLexer(l.Raw), ok: true}
		ok := s.facts(f)
		// a nesting deeper than the scanner lets pass is left to the
		// validator, which counts it from the line's start
		if s.object && s.l.End() && s.l.Deepest() <= maxSkipDepth {
			l.Status, l.RawControl = s.l.Status()
		} else {
			l.Revalidate()
			ok = false
		}
		if ok && l.Status == jsonl.OK && !l.RawControl {
			s.finish(l, f)
			return
		}
	}
	decodedFacts(l, f)
}

// finish gives the facts the scanner read of l what needs the line's
// claudeMeta, as factsWith gives them.
func (s *scanner) finish(l *jsonl.Line, f *facts) {
	if f.needsMeta() {
		f.meta = metaOf(l)
	}
	f.setPrompt(s.prompt)
}

// decodedFacts is the facts of a line the structure scanner leaves to the
// full decoder.
func decodedFacts(l *jsonl.Line, f *facts) {
	r := session.Decode(Home{}, l)
	factsWith(&r, f, metaOf)
}

// metaOf reads a line's claudeMeta: with the scanner where the line has
// a promptId at most, else decoded.
func metaOf(l *jsonl.Line) *claudeMeta {
	if m, ok := scanMeta(l); ok {
		return m
	}
	return lineMeta(l)
}

// metaNames are claudeMeta's fields.
var metaNames = []string{"promptId", "leafUuid", "explicit", "compactMetadata"}

// scanMeta reads the claudeMeta of a line that has a promptId at most (a
// prompt), without decoding the rest; false leaves the line to lineMeta.
func scanMeta(l *jsonl.Line) (*claudeMeta, bool) {
	if l.Status != jsonl.OK || l.RawControl {
		return nil, false
	}
	s := scanner{l: usage.NewLexer(l.Raw), ok: true}
	var (
		id   string
		seen bool
	)
	ok := s.l.Object(func(key []byte) {
		switch {
		case !s.ok:
			s.l.Skip()
		case string(key) == "promptId" && !seen:
			seen = true
			if s.l.Peek() == 'n' {
				s.l.Skip() // null: left empty
				return
			}
			id = s.str()
		case !usage.PlainKey(key, metaNames):
			// the other fields, a second promptId, a key that is one
			// of them in another case or with an escape
			s.fail()
			s.l.Skip()
		default:
			s.l.Skip()
		}
	})
	if !ok || !s.ok || s.l.Bad() || s.l.Deepest() > maxSkipDepth {
		return nil, false
	}
	return &claudeMeta{PromptID: id}, true
}

// maxSkipDepth is the deepest nesting scanFacts lets pass in what it
// skips: the decoders have limits of their own on depth (encoding/json's
// is 10000), and a line that deep is left to them.
const maxSkipDepth = 512

// scanner is scanFacts' state for one line.
type scanner struct {
	l  usage.Lexer
	ok bool
	// object: facts read the line's object to its end (whatever it made
	// of it)
	object bool
	// prompt: the prompt facts read (promptText)
	prompt string
}

func (s *scanner) fail() { s.ok = false }

// str reads a string value that is kept: without escapes (else the line
// goes to the full decoder).
func (s *scanner) str() string {
	if s.l.Peek() != '"' {
		s.fail()
		s.l.Skip()
		return ""
	}
	raw := s.l.Str()
	if bytes.IndexByte(raw, '\\') >= 0 {
		s.fail()
	}
	return string(raw)
}

// isStr checks that a value that is not kept is a string, and reports
// whether it is empty.
func (s *scanner) isStr() (empty bool) {
	if s.l.Peek() != '"' {
		s.fail()
		s.l.Skip()
		return false
	}
	return len(s.l.Str()) == 0
}

// boolean reads true or false.
func (s *scanner) boolean() bool {
	switch s.l.Peek() {
	case 't', 'f':
		v, _ := s.l.Literal()
		return v == "true"
	}
	s.fail()
	s.l.Skip()
	return false
}

// objectOrNull checks that a value is an object or null, and skips it.
func (s *scanner) objectOrNull() {
	if c := s.l.Peek(); c != '{' && c != 'n' {
		s.fail()
	}
	s.l.Skip()
}

// key checks a key against its level's names (all the fields the full
// decoder has there) and that it was not seen before (seen is the bit of
// each name, by index in names).
func (s *scanner) key(key []byte, names []string, seen *uint64) int {
	i, ok := usage.FieldKey(key, names, seen)
	if !ok {
		s.fail()
	}
	return i
}

// The fields of the structs the full decoder reads into (claudeLine,
// claudeMessage, claudeBlock), at each level, in the order of the cases
// below.
var (
	lineNames = []string{"type", "subtype", "uuid", "parentUuid", "isSidechain", "isApiErrorMessage",
		"isCompactSummary", "isMeta", "version", "timestamp", "message",
		"logicalParentUuid", "agentId", "sessionId", "cwd", "requestId", "summary", "customTitle", "aiTitle", "title",
		"content", "params", "compactMetadata"}
	messageNames = []string{"id", "model", "content", "usage", "role"}
	blockNames   = []string{"type", "text", "thinking", "id", "tool_use_id", "name", "input", "content", "is_error"}
)

// facts reads the facts of one line without decoding its content, with
// the scanner's lexer (strict in decodeFactsLazy, which validates the line
// with it); false leaves the line to the full decoder.
func (s *scanner) facts(f *facts) bool {
	*f = facts{}
	var (
		typ, subtype      string
		haveType          bool
		apiError, compact bool
		isMeta            bool
		m                 *msgFacts // the message, read where it is
		seen              uint64
	)
	ok := s.l.Object(func(key []byte) {
		if !s.ok {
			s.l.Skip()
			return
		}
		switch s.key(key, lineNames, &seen) {
		case 0:
			typ, haveType = s.str(), true
		case 1:
			subtype = s.str()
		case 2:
			f.uuid = s.str()
		case 3:
			if s.l.Peek() == 'n' {
				s.l.Skip() // null
				return
			}
			f.parent = s.str()
		case 4:
			f.sidechain = s.boolean()
		case 5:
			apiError = s.boolean()
		case 6:
			compact = s.boolean()
		case 7:
			isMeta = s.boolean()
		case 8:
			f.version = s.str()
		case 9:
			f.ts = session.ParseTime(s.str())
		case 10:
			// read at once (whatever the type, which may come later): a
			// message that is not as (*scanner).message wants it sends the line
			// to the full decoder, even where the type will not need it
			m = s.message()
		case 11, 12, 13, 14, 15, 16, 17, 18, 19:
			s.isStr()
		case 20, 21: // raw values: anything goes
			s.l.Skip()
		case 22:
			s.objectOrNull()
		default:
			s.l.Skip()
		}
	})
	s.object = ok
	if !ok || !s.ok || s.l.Bad() || !haveType || s.l.Deepest() > maxSkipDepth {
		return false
	}
	f.typ = typ
	switch typ {
	case "":
		return false // usage-only lines and the like
	case "system":
		f.typ = "system/" + subtype
		return true
	case "user", "assistant":
	default:
		return true
	}
	if m == nil {
		return false
	}
	if typ == "assistant" {
		if apiError || m.model == "<synthetic>" {
			return false // the synthetic "No response requested." and its kin: their words matter
		}
		text := m.texts > 1 || m.texts == 1 && m.textFull
		thinking := m.thinks > 1 || m.thinks == 1 && m.thinkFull
		f.msgID, f.calls = m.id, m.calls
		f.callsOnly = len(m.calls) > 0 && !text && !thinking
		f.thinkingOnly = !text && len(m.calls) == 0 && thinking
		return true
	}
	// a user line: one with tool results (its role is tool: not a
	// prompt, not the synthetic "Continue from where you left off."), or
	// a prompt that is one plain string
	if compact {
		return false
	}
	if len(m.results) == 0 {
		return !isMeta && !f.sidechain && m.plain && s.promptText(f, m.text)
	}
	f.result, f.results = true, m.results
	return true
}

// msgFacts is what message reads of a user or assistant message.
type msgFacts struct {
	id, model           string
	texts, thinks       int  // text and thinking blocks
	textFull, thinkFull bool // the (one) text or thinking is not empty
	calls, results      []string
	// plain: the content is one string, text its raw bytes (escapes as
	// they are)
	plain bool
	text  []byte
}

// promptText reads the prompt of a user line whose content is the string
// raw, as the full decoder makes it (claudeContent, claudePrompt), into
// s.prompt; finish makes its facts. false: not a prompt the scanner is
// sure of (an escape other than the short ones, a text the client
// injected, an empty one), left to the full decoder.
func (s *scanner) promptText(f *facts, raw []byte) bool {
	text, ok := unescapeShort(raw)
	if !ok {
		return false
	}
	if session.HasAnyPrefix(text, claudeInjectedPrefixes...) {
		return false
	}
	s.prompt = strings.TrimSpace(text)
	if s.prompt == "" {
		return false
	}
	f.userPrompt = true
	return true
}

// unescapeShort decodes the body of a valid JSON string whose escapes
// are all of two bytes (\n, \", ...); false for one with a \u escape,
// left to the full decoder (its surrogates have rules of their own).
// Prompts hold a newline every line: usage.UnescapeJSON (encoding/json)
// was two thirds of what reading them cost.
func unescapeShort(raw []byte) (string, bool) {
	i := bytes.IndexByte(raw, '\\')
	if i < 0 {
		return string(raw), true
	}
	b := make([]byte, 0, len(raw))
	for i >= 0 {
		b = append(b, raw[:i]...)
		if i+1 >= len(raw) {
			return "", false
		}
		c, ok := ojson.ShortEscape(raw[i+1])
		if !ok {
			return "", false // \u, or not JSON
		}
		b = append(b, c)
		raw = raw[i+2:]
		i = bytes.IndexByte(raw, '\\')
	}
	return string(append(b, raw...)), true
}

// message reads a message object.
func (s *scanner) message() *msgFacts {
	m := &msgFacts{}
	var seen uint64
	ok := s.l.Object(func(key []byte) {
		if !s.ok {
			s.l.Skip()
			return
		}
		switch s.key(key, messageNames, &seen) {
		case 0:
			m.id = s.str()
		case 1:
			m.model = s.str()
		case 2:
			switch s.l.Peek() {
			case '"':
				m.plain, m.text = true, s.l.Str()
				if len(m.text) > 0 {
					m.texts, m.textFull = 1, true
				}
			case '[':
				s.blocks(m)
			default:
				s.fail()
				s.l.Skip()
			}
		case 3:
			s.usage()
		case 4:
			s.isStr()
		default:
			s.l.Skip()
		}
	})
	if !ok {
		s.fail()
	}
	return m
}

// blocks reads a content array: its elements must be objects (the full
// decoder fails on anything else but null, and null is left to it too).
func (s *scanner) blocks(m *msgFacts) {
	ok := s.l.Array(func() {
		if !s.ok || s.l.Peek() != '{' {
			s.fail()
			s.l.Skip()
			return
		}
		var (
			typ, id, useID      string
			textFull, thinkFull bool
			seen                uint64
		)
		s.l.Object(func(key []byte) {
			if !s.ok {
				s.l.Skip()
				return
			}
			switch s.key(key, blockNames, &seen) {
			case 0:
				typ = s.str()
			case 1:
				textFull = !s.isStr()
			case 2:
				thinkFull = !s.isStr()
			case 3:
				id = s.str()
			case 4:
				useID = s.str()
			case 5:
				s.isStr()
			case 8:
				s.boolean()
			default: // input, content: raw values
				s.l.Skip()
			}
		})
		switch typ {
		case "text":
			m.texts++
			m.textFull = textFull
		case "thinking":
			m.thinks++
			m.thinkFull = thinkFull
		case "tool_use", "server_tool_use":
			m.calls = append(m.calls, id)
		case "tool_result":
			m.results = append(m.results, useID)
		}
	})
	if !ok {
		s.fail()
	}
}

// usage checks a message.usage: an object whose cache_creation is an
// object or null (its counts never fail to decode), or null.
func (s *scanner) usage() {
	switch s.l.Peek() {
	case 'n':
		s.l.Skip()
		return
	case '{':
	default:
		s.fail()
		s.l.Skip()
		return
	}
	s.l.Object(func(key []byte) {
		if !usage.PlainKey(key, nil) {
			s.fail()
		}
		// its counts never fail to decode; cache_creation (in any case)
		// must be an object or null
		if bytes.EqualFold(key, []byte("cache_creation")) {
			s.objectOrNull()
			return
		}
		s.l.Skip()
	})
}
