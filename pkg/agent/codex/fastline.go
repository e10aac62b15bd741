package codex

import (
	"bytes"
	"encoding/binary"

	"github.com/sessctl/sessctl/pkg/usage"
)

// tokenCountFast reads a token_count event written in the layout Codex
// writes it, byte by byte against that layout:
//
//	{"timestamp":"…",["ordinal":N,]"type":"event_msg","payload":{"type":"token_count","info":{
//	"total_token_usage":{…},"last_token_usage":{…},["last_usage_includes_reasoning":B,]
//	"model_context_window":N}[,"rate_limits":…]}}
//
// the keys of info in any order, the usage objects holding only the six
// known fields with plain integers, and nothing else: no white space
// inside, no escape in the timestamp, no other key. Such lines are
// nearly all of a rollout's usage lines and a third of its lines; reading
// them with the Lexer (codexEvent) was most of a scan's own work.
//
// It returns false for every line it is not sure of (the caller then
// decodes it with codexEvent). When it returns true, ev is what codexEvent
// makes of the line, codexEvent accepts the line, and the line holds
// ccusage's `"type":"event_msg"` and `"type":"token_count"` bytes.
// TestTokenCountFastMatchesEvent and FuzzTokenCountFast hold it to
// codexEvent.
func tokenCountFast(line []byte, ev *codexEv) bool {
	const head = `{"timestamp":"`
	b := line
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return false
	}
	i := len(head)
	k := bytes.IndexByte(b[i:], '"')
	if k < 0 {
		return false
	}
	ts := b[i : i+k]
	if bytes.IndexByte(ts, '\\') >= 0 {
		return false
	}
	return tokenCountAfter(b, ts, ev)
}

// tokenCountAfter is tokenCountFast after the timestamp ts of line b (a
// part of b: its bytes after the opening quote, up to the first quote,
// without a backslash), for a caller that found it already (lineRest).
func tokenCountAfter(b, ts []byte, ev *codexEv) bool {
	const (
		ord   = `,"ordinal":`
		kinds = `,"type":"event_msg","payload":{"type":"token_count","info":{`
	)
	i := len(`{"timestamp":"`) + len(ts) + 1
	// most lines are response items: the byte after `,"type":"` (or the
	// ordinal's 'o') turns them away before any longer comparison
	if len(b) < i+len(kinds) || b[i+9] != 'e' && b[i+2] != 'o' {
		return false
	}
	if hasAt(b, i, ord) {
		j := i + len(ord)
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == i+len(ord) {
			return false
		}
		i = j
	}
	if !hasAt(b, i, kinds) {
		return false
	}
	i += len(kinds)
	// (field by field: zeroing the whole event, its three slots with it,
	// was a tenth of this function's time)
	ev.ts, ev.typ, ev.ptype, ev.model, ev.info = ts, "event_msg", "token_count", "", true
	ev.total, ev.last, ev.resp, ev.respID, ev.window = nil, nil, nil, "", 0
	// info's keys, each once or more (the last wins, as in codexEvent)
	for {
		switch {
		case hasAt(b, i, `"total_token_usage":{`):
			i += len(`"total_token_usage":{`)
			if i = usageFast(b, i, &ev.slots[0]); i < 0 {
				return false
			}
			ev.total = &ev.slots[0]
		case hasAt(b, i, `"last_token_usage":{`):
			i += len(`"last_token_usage":{`)
			if i = usageFast(b, i, &ev.slots[1]); i < 0 {
				return false
			}
			ev.last = &ev.slots[1]
		case hasAt(b, i, `"model_context_window":`):
			v, j := digitsFast(b, i+len(`"model_context_window":`))
			if j < 0 {
				return false
			}
			ev.window, i = v, j
		case hasAt(b, i, `"last_usage_includes_reasoning":true`):
			i += len(`"last_usage_includes_reasoning":true`)
		case hasAt(b, i, `"last_usage_includes_reasoning":false`):
			i += len(`"last_usage_includes_reasoning":false`)
		default:
			return false
		}
		if i >= len(b) {
			return false
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '}' {
			return false
		}
		i++
		break
	}
	// the rest of payload: its end, or rate_limits (skipped as codexEvent
	// skips it) and its end
	switch {
	case hasAt(b, i, `,"rate_limits":null`):
		// what most events hold: skipped as the Lexer skips it
		i += len(`,"rate_limits":null`)
	case hasAt(b, i, `,"rate_limits":`):
		i += len(`,"rate_limits":`)
		l := usage.NewLexer(b[i:])
		l.Skip()
		if l.Bad() {
			return false
		}
		i += l.Pos()
	}
	if !hasAt(b, i, `}}`) {
		return false
	}
	// trailing white space only (a CR kept by the line reader)
	for _, c := range b[i+2:] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// usageFast reads the fields of a usage object from b[i:], just after its
// '{', into u, as scanUsageFields does for objects of known fields with
// plain integers of a usable size; it returns the index after the '}', or
// -1 for anything else (an unknown field, null, a string, a fraction, an
// absurd value, white space, an empty object).
func usageFast(b []byte, i int, u *codexRaw) int {
	*u = codexRaw{}
	for {
		// the key by its first letters, then the whole of it
		if i+8 > len(b) || b[i] != '"' {
			return -1
		}
		var dst *int64
		var key string
		switch b[i+1] {
		case 'i':
			dst, key = &u.in, `"input_tokens":`
		case 'c':
			dst, key = &u.cached, `"cached_input_tokens":`
			if b[i+6] == '_' {
				dst, key = &u.write, `"cache_write_input_tokens":`
			}
		case 'o':
			dst, key = &u.out, `"output_tokens":`
		case 'r':
			dst, key = &u.reasoning, `"reasoning_output_tokens":`
		case 't':
			dst, key = &u.total, `"total_tokens":`
		default:
			return -1
		}
		if !hasAt(b, i, key) {
			return -1
		}
		i += len(key)
		v, j := digitsFast(b, i)
		if j < 0 || v > usage.MaxRequestTokens*1000 {
			return -1
		}
		*dst, i = v, j
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case ',':
			i++
		case '}':
			return i + 1
		default:
			return -1
		}
	}
}

// digitsFast reads a plain integer of at most 15 digits at b[i:] that ends
// at a ',' or '}' (where the Lexer's Number stops too, reading the same
// value); it returns the index after it, or -1.
func digitsFast(b []byte, i int) (int64, int) {
	var v int64
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		v = v*10 + int64(b[j]-'0')
		j++
	}
	if j == i || j-i > 15 || j >= len(b) || b[j] != ',' && b[j] != '}' {
		return 0, -1
	}
	return v, j
}

// hasAt reports whether b holds s at i.
func hasAt(b []byte, i int, s string) bool {
	return i >= 0 && len(b)-i >= len(s) && string(b[i:i+len(s)]) == s
}

// lineRest splits a line that starts as Codex writes every line,
// {"timestamp":"<ts>"…, into the timestamp and the rest from its closing
// quote on, when the timestamp is made of the bytes of an RFC 3339 time
// only (digits and -:.TZ+) and the line is not a response_item; rest is nil
// for every other line.
//
// Two such lines with the same rest decode the same but for the
// timestamp: the timestamp holds no quote, backslash, underscore or
// lower-case letter, so tokenCountFast finds the same layout after it,
// usageKinds the same words, codexEvent the same JSON, and ccusage's
// prefilters (each starting with a quote and "type") the same bytes, all
// in the rest. scanUsage relies on it to decode a line that repeats its
// predecessor's rest once (TestScanUsageFastSameAsFull and
// FuzzScanUsageFast hold it to the full decoder).
func lineRest(b []byte) (ts, rest []byte) {
	const head = `{"timestamp":"`
	if len(b) <= len(head) || string(b[:len(head)]) != head || isResponseItem(b) {
		return nil, nil
	}
	if len(b) > len(head)+24 && b[len(head)+24] == '"' && codexTime(b[len(head):]) {
		return b[len(head) : len(head)+24], b[len(head)+24:]
	}
	i := len(head)
	for i < len(b) && tsByte[b[i]] {
		i++
	}
	if i == len(head) || i >= len(b) || b[i] != '"' {
		return nil, nil
	}
	return b[len(head):i], b[i:]
}

// codexTime reports whether b starts with a time as Codex writes it,
// 2026-11-22T02:59:33.239Z, eight bytes at a time: its separators where
// they belong, digits elsewhere (bytes tsByte accepts, without a look at
// each).
func codexTime(b []byte) bool {
	if len(b) < 24 {
		return false
	}
	le := binary.LittleEndian
	// each word with its separators checked, then replaced by '0', must
	// be all digits
	const s0, m0 = 0x2d00002d00000000, 0xff0000ff00000000 // YYYY-MM-
	const s1, m1 = 0x3a0000540000, 0xff0000ff0000         // DDTHH:MM
	const s2, m2 = 0x5a0000002e00003a, 0xff000000ff0000ff // :SS.mmmZ
	w0, w1, w2 := le.Uint64(b), le.Uint64(b[8:]), le.Uint64(b[16:])
	if w0&m0 != s0 || w1&m1 != s1 || w2&m2 != s2 {
		return false
	}
	const zeros = 0x3030303030303030
	return allDigits(w0&^m0|zeros&m0) && allDigits(w1&^m1|zeros&m1) && allDigits(w2&^m2|zeros&m2)
}

// allDigits reports whether the eight bytes of w are ASCII digits: each
// has a high nibble of 3 that stays 3 once 6 is added (a low nibble of at
// most 9; a byte of 0xfa or more would carry, but its own high nibble is
// not 3 already).
func allDigits(w uint64) bool {
	const f0, x30, x06 = 0xf0f0f0f0f0f0f0f0, 0x3030303030303030, 0x0606060606060606
	return w&f0 == x30 && (w+x06)&f0 == x30
}

// tsByte are the bytes of an RFC 3339 time.
var tsByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789-:.TZ+") {
		t[c] = true
	}
	return t
}()

// isResponseItem reports whether a line starts as Codex writes a
// response_item, {"timestamp":"<24 bytes>","type":"r…: most lines of a
// rollout and most of its bytes, never a token_count event (tokenCountFast
// turns it away at the same byte) nor a turn_context.
func isResponseItem(b []byte) bool {
	return len(b) > 48 && b[38] == '"' && b[48] == 'r' && string(b[39:48]) == `,"type":"`
}

// lineMemo holds the rest (lineRest) of the last line of one kind, to know
// a line that repeats it. A rest longer than maxMemo is not kept, so that
// it holds at most that much beside the reader's buffer.
type lineMemo struct {
	rest []byte
	ok   bool
}

const maxMemo = 64 << 10

func (m *lineMemo) same(rest []byte) bool {
	return m.ok && len(rest) == len(m.rest) && string(rest) == string(m.rest)
}

func (m *lineMemo) keep(rest []byte) {
	m.ok = len(rest) <= maxMemo
	if m.ok {
		m.rest = append(m.rest[:0], rest...)
	}
}

// copyOf makes ev the event src with timestamp ts, its usage in ev's own
// slots (the fields tokenCountFast sets).
func (ev *codexEv) copyOf(src *codexEv, ts []byte) {
	ev.ts, ev.typ, ev.ptype, ev.model, ev.info = ts, src.typ, src.ptype, src.model, src.info
	ev.total, ev.last, ev.resp, ev.respID, ev.window = nil, nil, nil, src.respID, src.window
	if src.total != nil {
		ev.slots[0] = *src.total
		ev.total = &ev.slots[0]
	}
	if src.last != nil {
		ev.slots[1] = *src.last
		ev.last = &ev.slots[1]
	}
	if src.resp != nil {
		ev.slots[2] = *src.resp
		ev.resp = &ev.slots[2]
	}
}

// modelIDs is FileUsage.ModelID for the model of the last call, without a
// look-up in the file's table at every request.
type modelIDs struct {
	fu   *usage.FileUsage
	name string
	id   usage.ModelID
	set  bool
}

func (m *modelIDs) of(name string) usage.ModelID {
	if !m.set || name != m.name {
		m.name, m.id, m.set = name, m.fu.ModelID(name), true
	}
	return m.id
}
