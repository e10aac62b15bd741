package kimi

import (
	"bytes"
	"io"
	"math"
	"path/filepath"
	"regexp"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Kimi CLI: billing usage lives only in wire.jsonl, one StatusUpdate per LLM
// step (kimi.md §6); subagents report in their own wire and, nested, in the
// main wire's SubagentEvent records, so updates are keyed by message_id and
// counted once. context.jsonl's _usage is a gauge of the context size and is
// never summed (tokens.md §4).

var wireRe = regexp.MustCompile(`^wire\.jsonl(\.\d+)?$`)

// Classify implements usage.Scanner: the wire files (the session's and its
// subagents') record usage; a wire.jsonl.N beside one is a rotated copy of
// it. The main wire's context gauge and window are the session's. ccusage
// reads Kimi wires too, but sessctl does not reproduce its Kimi rules.
func (Home) Classify(s *session.Session, f session.File) usage.FileClass {
	m := wireRe.FindStringSubmatch(filepath.Base(f.Path))
	if f.Dir || m == nil {
		return 0
	}
	c := usage.Carries
	if m[1] != "" {
		c |= usage.Copy
	} else if filepath.Dir(f.Path) == s.Dir {
		c |= usage.Gauge
	}
	return c
}

// ScanUsage implements usage.Scanner.
func (Home) ScanUsage(lr *usage.LineReader, fu *usage.FileUsage) error {
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !bytes.Contains(line, []byte("StatusUpdate")) {
			if usage.LooksCorrupt(line, lr.Torn()) {
				fu.Corrupt++
			}
			continue
		}
		wireLine(line, lr.Num(), fu)
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

func kimiPayload(l *usage.Lexer, st *kimiStatus) {
	l.Object(func(k []byte) {
		switch string(k) {
		case "context_tokens":
			if v, kind := l.Number(); kind == usage.NumOK {
				st.ctx = v
			}
		case "max_context_tokens":
			if v, kind := l.Number(); kind == usage.NumOK {
				st.max = v
			}
		case "message_id":
			if l.Peek() == '"' {
				st.msgID = l.Text()
			}
		case "token_usage":
			st.hasUsage = l.Peek() == '{'
			l.Object(func(u []byte) {
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
				v, kind := l.Number()
				switch {
				case kind == usage.NumNull:
				case kind != usage.NumOK:
					st.bad = "token_usage." + string(u) + " is " + kind.String()
				case v > usage.MaxRequestTokens:
					st.bad = "token_usage." + string(u) + " is absurdly large"
				default:
					st.u[i] = v
				}
			})
		case "event": // SubagentEvent: {"type": "StatusUpdate", "payload": {…}}
			n := &kimiStatus{}
			l.Object(func(e []byte) {
				switch string(e) {
				case "type":
					if l.Peek() == '"' {
						n.typ = l.Text()
					}
				case "payload":
					kimiPayload(l, n)
				}
			})
			st.nested = n
		}
	})
}

func wireLine(line []byte, num int, fu *usage.FileUsage) {
	st := &kimiStatus{}
	var ts float64
	l := usage.NewLexer(line)
	ok := l.Object(func(k []byte) {
		switch string(k) {
		case "timestamp":
			ts = l.Float()
		case "message":
			l.Object(func(m []byte) {
				switch string(m) {
				case "type":
					if l.Peek() == '"' {
						st.typ = l.Text()
					}
				case "payload":
					kimiPayload(&l, st)
				}
			})
		}
	})
	if !l.End() || !ok {
		fu.Corrupt++
		fu.Reject(num, "corrupt StatusUpdate line (not valid JSON)")
		return
	}
	u := st
	switch {
	case st.typ == "StatusUpdate":
		if st.max > 0 {
			fu.Window = st.max
		}
		if st.ctx > 0 {
			fu.Context, fu.ContextSource = st.ctx, "wire.jsonl StatusUpdate.context_tokens"
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
		fu.Reject(num, u.bad)
		return
	}
	req := usage.Request{Line: int32(num), Counted: true, Sidechain: u.subagentEv}
	if ts > 0 && ts < math.MaxInt64/1000 {
		req.Time = int64(ts * 1000)
	}
	req.Usage = session.Usage{Input: u.u[0], Output: u.u[1], CacheRead: u.u[2], CacheCreation: u.u[3]}
	if u.msgID != "" {
		req.Key = usage.HashKey([]byte("kimi\x00"+u.msgID), nil, false)
		req.MsgKey = req.Key
	}
	fu.Add(req, line)
}

// WhereUsage implements usage.Explainer.
func (Home) WhereUsage() string { return "Kimi CLI records billing usage only in wire.jsonl" }
