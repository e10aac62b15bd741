package tokens

import (
	"bytes"
	"io"
	"math"

	"github.com/sessctl/sessctl/pkg/session"
)

// Kimi CLI: billing usage lives only in wire.jsonl, one StatusUpdate per LLM
// step (kimi.md §6); subagents report in their own wire and, nested, in the
// main wire's SubagentEvent records, so updates are keyed by message_id and
// counted once. context.jsonl's _usage is a gauge of the context size and is
// never summed (tokens.md §4).

func scanKimiWire(lr *lineReader, fu *FileUsage) error {
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		fu.Lines++
		if !bytes.Contains(line, []byte("StatusUpdate")) {
			if looksCorrupt(line, lr.torn) {
				fu.Corrupt++
			}
			continue
		}
		kimiWireLine(line, lr.num, fu)
	}
	return nil
}

type kimiStatus struct {
	typ        string
	msgID      string
	ctx, max   int64
	hasUsage   bool
	u          [4]int64 // input_other, output, input_cache_read, input_cache_creation
	bad        string
	nested     *kimiStatus
	subagentEv bool
}

func kimiPayload(l *lexer, st *kimiStatus) {
	l.object(func(k []byte) {
		switch string(k) {
		case "context_tokens":
			if v, kind := l.number(); kind == numOK {
				st.ctx = v
			}
		case "max_context_tokens":
			if v, kind := l.number(); kind == numOK {
				st.max = v
			}
		case "message_id":
			if l.peek() == '"' {
				st.msgID = l.text()
			}
		case "token_usage":
			st.hasUsage = l.peek() == '{'
			l.object(func(u []byte) {
				i := -1
				switch string(u) {
				case "input_other":
					i = 0
				case "output":
					i = 1
				case "input_cache_read":
					i = 2
				case "input_cache_creation":
					i = 3
				default:
					return
				}
				v, kind := l.number()
				switch {
				case kind == numNull:
				case kind != numOK:
					st.bad = "token_usage." + string(u) + " is " + kind.String()
				case v > MaxRequestTokens:
					st.bad = "token_usage." + string(u) + " is absurdly large"
				default:
					st.u[i] = v
				}
			})
		case "event": // SubagentEvent: {"type": "StatusUpdate", "payload": {…}}
			n := &kimiStatus{}
			l.object(func(e []byte) {
				switch string(e) {
				case "type":
					if l.peek() == '"' {
						n.typ = l.text()
					}
				case "payload":
					kimiPayload(l, n)
				}
			})
			st.nested = n
		}
	})
}

func kimiWireLine(line []byte, num int, fu *FileUsage) {
	st := &kimiStatus{}
	var ts float64
	l := lexer{b: line}
	ok := l.object(func(k []byte) {
		switch string(k) {
		case "timestamp":
			ts = l.float()
		case "message":
			l.object(func(m []byte) {
				switch string(m) {
				case "type":
					if l.peek() == '"' {
						st.typ = l.text()
					}
				case "payload":
					kimiPayload(&l, st)
				}
			})
		}
	})
	l.ws()
	if !ok || l.bad || l.i != len(l.b) {
		fu.Corrupt++
		fu.reject(num, "corrupt StatusUpdate line (not valid JSON)")
		return
	}
	u := st
	switch {
	case st.typ == "StatusUpdate":
		if st.max > 0 {
			fu.Window = st.max
		}
		if st.ctx > 0 {
			fu.Context = st.ctx
		}
	case st.typ == "SubagentEvent" && st.nested != nil && st.nested.typ == "StatusUpdate":
		u = st.nested
		u.subagentEv = true
	default:
		return
	}
	if !u.hasUsage {
		return
	}
	fu.UsageLines++
	if u.bad != "" {
		fu.reject(num, u.bad)
		return
	}
	req := Request{Line: int32(num), counted: true, sidechain: u.subagentEv}
	if ts > 0 && ts < math.MaxInt64/1000 {
		req.Time = int64(ts * 1000)
	}
	req.Usage = session.Usage{Input: u.u[0], Output: u.u[1], CacheRead: u.u[2], CacheCreation: u.u[3]}
	if u.msgID != "" {
		req.key = hashKey([]byte("kimi\x00"+u.msgID), nil, false)
		req.msgKey = req.key
	}
	if req.Time > fu.LastActivity {
		fu.LastActivity = req.Time
	}
	fu.Requests = append(fu.Requests, req)
}

// float reads a JSON number as float64 (0 for anything else).
func (l *lexer) float() float64 {
	c := l.peek()
	if c != '-' && (c < '0' || c > '9') {
		l.skip()
		return 0
	}
	start := l.i
	for l.i < len(l.b) {
		switch c := l.b[l.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			l.i++
			continue
		}
		break
	}
	var f float64
	var neg bool
	tok := l.b[start:l.i]
	if len(tok) > 0 && tok[0] == '-' {
		neg, tok = true, tok[1:]
	}
	// enough for epoch seconds with a fraction; exponents are not expected
	intPart, frac := tok, []byte(nil)
	if i := bytes.IndexByte(tok, '.'); i >= 0 {
		intPart, frac = tok[:i], tok[i+1:]
	}
	for _, d := range intPart {
		if d < '0' || d > '9' {
			return 0
		}
		f = f*10 + float64(d-'0')
	}
	scale := 0.1
	for _, d := range frac {
		if d < '0' || d > '9' {
			break
		}
		f += float64(d-'0') * scale
		scale /= 10
	}
	if neg {
		f = -f
	}
	return f
}

// scanKimiContext reads only the context gauge of a context.jsonl: the last
// _usage.token_count. Nothing in it is billing usage.
func scanKimiContext(lr *lineReader, fu *FileUsage) error {
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		fu.Lines++
		if !bytes.Contains(line, []byte("_usage")) {
			continue
		}
		l := lexer{b: line}
		var role string
		var n int64 = -1
		l.object(func(k []byte) {
			switch string(k) {
			case "role":
				if l.peek() == '"' {
					role = l.text()
				}
			case "token_count":
				if v, kind := l.number(); kind == numOK {
					n = v
				}
			}
		})
		if role == "_usage" && n >= 0 && !l.bad {
			fu.Context = n
		}
	}
	return nil
}

// scanClawd sums message.usage on clawdcode assistant lines (clawdcode.md §7).
func scanClawd(lr *lineReader, fu *FileUsage) error {
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		fu.Lines++
		if !bytes.Contains(line, []byte(`"usage"`)) {
			if looksCorrupt(line, lr.torn) {
				fu.Corrupt++
			}
			continue
		}
		var typ, ts, model string
		var in, out int64
		inK, outK := numMissing, numMissing
		hasUsage := false
		l := lexer{b: line}
		ok := l.object(func(k []byte) {
			switch string(k) {
			case "type":
				if l.peek() == '"' {
					typ = l.text()
				}
			case "timestamp":
				if l.peek() == '"' {
					ts = l.text()
				}
			case "message":
				l.object(func(m []byte) {
					switch string(m) {
					case "model":
						if l.peek() == '"' {
							model = l.text()
						}
					case "usage":
						hasUsage = l.peek() == '{'
						l.object(func(u []byte) {
							switch string(u) {
							case "input_tokens":
								in, inK = l.number()
							case "output_tokens":
								out, outK = l.number()
							}
						})
					}
				})
			}
		})
		l.ws()
		if !ok || l.bad || l.i != len(l.b) {
			fu.Corrupt++
			fu.reject(lr.num, "corrupt line (not valid JSON)")
			continue
		}
		if !hasUsage || typ != "assistant" {
			continue
		}
		fu.UsageLines++
		bad := ""
		switch {
		case inK != numOK && inK != numMissing:
			bad = "usage.input_tokens is " + inK.String()
		case outK != numOK && outK != numMissing:
			bad = "usage.output_tokens is " + outK.String()
		case in > MaxRequestTokens || out > MaxRequestTokens:
			bad = "usage is absurdly large"
		}
		if bad != "" {
			fu.reject(lr.num, bad)
			continue
		}
		req := Request{Line: int32(lr.num), counted: true, Usage: session.Usage{Input: in, Output: out}}
		req.Model = fu.models.id(model)
		if t, err := parseRFC3339(ts); err == nil {
			req.Time = t
			if t > fu.LastActivity {
				fu.LastActivity = t
			}
		}
		fu.Requests = append(fu.Requests, req)
	}
	return nil
}
