package codex

import (
	"bytes"

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
	const (
		head  = `{"timestamp":"`
		ord   = `,"ordinal":`
		kinds = `,"type":"event_msg","payload":{"type":"token_count","info":{`
	)
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
	i += k + 1
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
	*ev = codexEv{ts: ts, typ: "event_msg", ptype: "token_count", info: true}
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
	if hasAt(b, i, `,"rate_limits":`) {
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
