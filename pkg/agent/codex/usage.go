package codex

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/termtext"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Codex: event_msg token_count events carry the thread's running total
// (total_token_usage) and the last request (last_token_usage); events repeat
// (0.104 writes each twice) and some carry no info (codex.md §5).
//
// Codex 0.169 also writes a token_usage_record for each model response, with
// that response's usage, just before the token_count event that adds it to
// the running total (codex.md §5). When a request is killed before its
// token_count event, or a rewrite removed the last events, the running
// total misses responses the records still have.
//
// sessctl's rule: count every token_usage_record's usage (one response
// each). Each time the running total changes, the change is a response
// already counted by a record before it when one is pending; otherwise
// (files before 0.169, or a response without its record) count the change
// field by field; when a field goes down (a resume seeded from an older
// total) count last_token_usage, or the new total whole when there is none.
// ccusage's rule, computed beside it for comparison, is the cumulative one:
// when the total changes count last_token_usage, else the difference.

// Classify implements usage.Scanner: the rollout records usage, ccusage
// reads it, and its context and working directory are the session's.
// sessctl's rotations of it (<rollout>.N) record usage too, as copies: a
// rotation of a cut revert is the whole original, of which the live
// rollout keeps a prefix, line for line; ccusage does not read them.
func (Home) Classify(s *session.Session, f session.File) usage.FileClass {
	return usage.Transcripts(f, usage.CCUsage)
}

type codexRaw struct {
	in, cached, write, out, reasoning, total int64
	bad                                      string // why a field was unusable
}

func (a codexRaw) sub(b codexRaw) (codexRaw, bool) {
	d := codexRaw{a.in - b.in, a.cached - b.cached, a.write - b.write, a.out - b.out, a.reasoning - b.reasoning, a.total - b.total, ""}
	down := d.in < 0 || d.cached < 0 || d.write < 0 || d.out < 0 || d.reasoning < 0 || d.total < 0
	return d, !down
}

func (a codexRaw) zero() bool {
	return a.in == 0 && a.cached == 0 && a.write == 0 && a.out == 0 && a.reasoning == 0
}

// usage converts OpenAI usage to the Anthropic split: Input excludes cached
// input and cache writes; Reasoning is part of Output, never added to it.
func (a codexRaw) usage() session.Usage {
	in := a.in - a.cached - a.write
	if in < 0 {
		in = 0
	}
	return session.Usage{Input: in, CacheRead: a.cached, CacheCreation: a.write, Output: a.out, Reasoning: a.reasoning}
}

type codexState struct {
	prev    *codexRaw
	prevVal codexRaw
}

// ScanUsage implements usage.Scanner. The model is the latest
// turn_context's, DefaultModel before any (ccusage's fallback too).
func (Home) ScanUsage(lr *usage.LineReader, fu *usage.FileUsage) error {
	return scanUsage(lr, fu, true)
}

// scanUsage is ScanUsage; without useFast, every line goes through usageKinds
// and codexEvent (the tests hold the fast path to that).
func scanUsage(lr *usage.LineReader, fu *usage.FileUsage, useFast bool) error {
	own, ccu := codexState{}, codexState{}
	model, ccModel := DefaultModel, DefaultModel
	pending := 0              // token_usage_records not yet matched by a change of the running total
	seen := map[string]bool{} // response ids of the records counted
	ev := &codexEv{}
	// the last token_count event the fast path read, and the last
	// turn_context decoded, by their bytes after the timestamp: Codex
	// writes most turn_contexts of a rollout with the same payload, and
	// 0.104 each token_count twice, so a line is often its predecessor's
	// bytes with a new timestamp, which decode the same (see lineRest)
	var tcMemo, turnMemo lineMemo
	var tcEv codexEv
	var turnModel string
	var turnCC bool
	ids := modelIDs{fu: fu}
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if fu.CWD == "" && lr.Num() <= 3 && bytes.Contains(line, []byte("session_meta")) {
			fu.CWD = codexCWD(line)
		}
		// most usage lines are token_count events in Codex's own layout,
		// read at once; every other line is classified and decoded
		fast := false
		var rest []byte
		if useFast {
			var ts []byte
			ts, rest = lineRest(line)
			switch {
			case rest == nil:
			case tcMemo.same(rest):
				ev.copyOf(&tcEv, ts)
				fast = true
			case turnMemo.same(rest):
				if turnModel != "" {
					model = turnModel
					if turnCC {
						ccModel = turnModel
					}
				}
				continue
			}
			switch {
			case fast:
			case rest != nil:
				// lineRest read the timestamp
				if fast = tokenCountAfter(line, ts, ev); fast {
					tcMemo.keep(rest)
					tcEv.copyOf(ev, nil)
				}
			case !isResponseItem(line):
				fast = tokenCountFast(line, ev)
			}
		}
		if !fast {
			isTC, isRec, isTurn := usageKinds(line)
			if !isTC && !isTurn && !isRec {
				if usage.LooksCorrupt(line, lr.Torn()) {
					fu.Corrupt++
				}
				continue
			}
			if !codexEvent(line, ev) {
				fu.Corrupt++
				if isTC {
					fu.Reject(lr.Num(), "corrupt token_count line (not valid JSON)")
				} else if isRec {
					fu.Reject(lr.Num(), "corrupt token_usage_record line (not valid JSON)")
				}
				continue
			}
		}
		if ev.typ == "turn_context" {
			cc := false
			if ev.model != "" {
				model = ev.model
				if cc = bytes.Contains(line, ccTurnContext); cc {
					ccModel = ev.model
				}
			}
			if rest != nil {
				turnMemo.keep(rest)
				turnModel, turnCC = ev.model, cc
			}
			continue
		}
		if ev.typ == "token_usage_record" {
			// (a compacted record's latest_token_usage_record is a copy, and
			// its line's type is compacted: never counted)
			if ev.resp == nil {
				continue
			}
			fu.UsageLines++
			if ev.resp.bad != "" {
				fu.Reject(lr.Num(), "token_usage_record "+ev.resp.bad)
				continue
			}
			if ev.respID != "" {
				// a record written twice (a retried append) is one
				// response: counted once, matched by one change of the
				// running total
				if seen[ev.respID] {
					continue
				}
				seen[ev.respID] = true
			}
			pending++
			if ev.resp.zero() {
				continue
			}
			t, _ := usage.ParseMillis(ev.ts)
			u := ev.resp.usage()
			fu.Add(usage.Request{Line: int32(lr.Num()), Time: t, Model: ids.of(model), Usage: u, Counted: true}, line)
			fu.PerResponse++
			fu.PerResponseView += u.Total()
			continue
		}
		if ev.typ != "event_msg" || ev.ptype != "token_count" || !ev.info {
			continue
		}
		fu.UsageLines++
		if ev.window > 0 {
			fu.Window = ev.window
		}
		if ev.last != nil && ev.last.bad == "" {
			fu.Context, fu.ContextSource = ev.last.total, "last_token_usage.total_tokens"
		}
		if (ev.total != nil && ev.total.bad != "") || (ev.last != nil && ev.last.bad != "") {
			why := ""
			if ev.total != nil && ev.total.bad != "" {
				why = ev.total.bad
			} else {
				why = ev.last.bad
			}
			fu.Reject(lr.Num(), "token_count "+why)
			continue
		}
		// ccusage's prefilter (the fast path's layout holds both)
		ccVisible := fast || bytes.Contains(line, ccEventMsg) && bytes.Contains(line, ccTokenCount)
		d, counted := own.sessctl(ev)
		if counted && d.zero() {
			counted = false
		}
		if counted {
			n := d.usage().Total()
			fu.CumulativeView += n
			if pending > 0 {
				// the response this change adds was counted from its record
				pending--
				counted = false
			} else {
				fu.PerResponseView += n
			}
		}
		var cd codexRaw
		cc := false
		if ccVisible && len(ev.ts) > 0 {
			cd, cc = ccu.ccusage(ev)
		}
		if counted && d.zero() {
			counted = false
		}
		if cc && cd.zero() {
			cc = false
		}
		if !counted && !cc {
			continue
		}
		if counted && !cc {
			switch {
			case !ccVisible:
				fu.CountedNotByCCUsage(lr.Num(), "spaced JSON: no exact \"type\":\"token_count\" bytes")
			case len(ev.ts) == 0:
				fu.CountedNotByCCUsage(lr.Num(), "no timestamp")
			}
		}
		// (a repeated event, a third of them, stops before: its time is
		// read only now)
		t, _ := usage.ParseMillis(ev.ts)
		num := int32(lr.Num())
		if counted {
			req := usage.Request{Line: num, Time: t, Model: ids.of(model), Usage: d.usage(), Counted: true}
			if cc && cd == d && ccModel == model {
				req.CCUsage = true
				fu.Add(req, line)
			} else {
				fu.Add(req, line)
				if cc {
					fu.Add(usage.Request{Line: num, Time: t, Model: ids.of(ccModel), Usage: cd.usage(), CCUsage: true}, line)
				}
			}
		} else {
			fu.Add(usage.Request{Line: num, Time: t, Model: ids.of(ccModel), Usage: cd.usage(), CCUsage: true}, line)
		}
	}
	return nil
}

// usageKinds says whether a line holds "token_count", else
// "token_usage_record", else "turn_context" (at most one is true), as
// bytes.Contains would for each in turn. All three words hold "n_"
// ("toke|n_|…", "tur|n_|context"): it steps from '_' to '_' of the line
// with IndexByte (10 a line in the generated corpus, against the 11 'k's
// and 8 'x's it stepped through before: 2.8 times faster over the corpus,
// BenchmarkUsageKinds) and looks at the words only where an 'n' comes
// before one. Searching for each word looked at every 't' of the text
// (three such searches were three quarters of stats --all on Codex
// rollouts).
func usageKinds(line []byte) (tc, rec, turn bool) {
	const tcW, recW, turnW = "token_count", "token_usage_record", "turn_context"
	for rest, at := line, 0; ; {
		i := bytes.IndexByte(rest, '_')
		if i < 0 {
			break
		}
		k := at + i - 1 // the 'n' before it
		if k < 0 || line[k] != 'n' {
			rest, at = rest[i+1:], at+i+1
			continue
		}
		if k >= 4 {
			if bytes.HasPrefix(line[k-4:], []byte(tcW)) {
				return true, false, false
			}
			if !rec && bytes.HasPrefix(line[k-4:], []byte(recW)) {
				rec = true
			}
		}
		if k >= 3 && !turn && bytes.HasPrefix(line[k-3:], []byte(turnW)) {
			turn = true
		}
		rest, at = rest[i+1:], at+i+1
	}
	if rec {
		return false, true, false
	}
	return false, false, turn
}

// ExplainViews implements usage.ViewsExplainer.
func (Home) ExplainViews(records int, perResponse, cumulative int64) string {
	if cumulative < perResponse {
		return fmt.Sprintf("counted per response (%d token_usage_records) the rollout holds %s tokens, by its cumulative token_count events (ccusage's method) %s: "+
			"the events of some responses are missing (a request ended before its token_count, or the last events were removed and a resume restarted the totals)",
			records, termtext.Group(perResponse), termtext.Group(cumulative))
	}
	return fmt.Sprintf("counted per response (%d token_usage_records) the rollout holds %s tokens, by its cumulative token_count events (ccusage's method) %s: "+
		"the counters hold more than the responses' records (a counter event without its record); sessctl counts the records where they are",
		records, termtext.Group(perResponse), termtext.Group(cumulative))
}

// sessctl's delta rule.
func (s *codexState) sessctl(ev *codexEv) (codexRaw, bool) {
	if ev.total == nil {
		if ev.last != nil {
			return *ev.last, true
		}
		return codexRaw{}, false
	}
	cur, prev, had := *ev.total, s.prevVal, s.prev != nil
	s.prevVal, s.prev = cur, &s.prevVal
	if !had {
		return cur, true
	}
	if cur == prev {
		return codexRaw{}, false
	}
	if d, up := cur.sub(prev); up {
		return d, true
	}
	// a field went down: the totals were reset (resume from an older
	// record); this event's own request is what it adds
	if ev.last != nil {
		return *ev.last, true
	}
	return cur, true
}

// ccusage 20's rule.
func (s *codexState) ccusage(ev *codexEv) (codexRaw, bool) {
	advanced := ev.total == nil || s.prev == nil || *ev.total != *s.prev
	var out codexRaw
	ok := false
	switch {
	case ev.last != nil && advanced:
		out, ok = *ev.last, true
	case ev.total != nil:
		if s.prev == nil {
			out = *ev.total
		} else {
			out, _ = ev.total.sub(*s.prev)
			out = codexRaw{max(0, out.in), max(0, out.cached), max(0, out.write), max(0, out.out), max(0, out.reasoning), max(0, out.total), ""}
		}
		ok = true
	}
	if ev.total != nil {
		s.prevVal = *ev.total
		s.prev = &s.prevVal
	}
	return out, ok
}

// the exact bytes ccusage's prefilters look for
var (
	ccEventMsg    = []byte(`"type":"event_msg"`)
	ccTokenCount  = []byte(`"type":"token_count"`)
	ccTurnContext = []byte(`"type":"turn_context"`)
)

type codexEv struct {
	ts          []byte // the timestamp, unescaped: a part of the line or a copy
	typ, ptype  string
	model       string
	info        bool
	total, last *codexRaw // nil, or in slots
	resp        *codexRaw // token_usage_record.payload.usage
	respID      string    // token_usage_record.payload.response_id
	window      int64
	// where total, last and resp are decoded: one codexEv serves every
	// line of a scan, without three allocations a line
	slots [3]codexRaw
}

func codexEvent(line []byte, ev *codexEv) bool {
	*ev = codexEv{}
	l := usage.NewLexer(line)
	ok := l.Object(func(k []byte) {
		switch string(k) {
		case "timestamp":
			if l.Peek() == '"' {
				ev.ts = l.Str()
				if bytes.IndexByte(ev.ts, '\\') >= 0 {
					ev.ts = []byte(usage.UnescapeJSON(ev.ts))
				}
			}
		case "type":
			if l.Peek() == '"' {
				ev.typ = text(&l)
			}
		case "payload":
			l.Object(func(p []byte) {
				switch string(p) {
				case "type":
					if l.Peek() == '"' {
						ev.ptype = text(&l)
					}
				case "model":
					if l.Peek() == '"' {
						ev.model = l.Text()
					}
				case "usage":
					ev.resp = scanUsageFields(&l, &ev.slots[2])
				case "response_id":
					if l.Peek() == '"' {
						ev.respID = l.Text()
					}
				case "info":
					ev.info = l.Peek() == '{'
					l.Object(func(i []byte) {
						switch string(i) {
						case "total_token_usage":
							ev.total = scanUsageFields(&l, &ev.slots[0])
						case "last_token_usage":
							ev.last = scanUsageFields(&l, &ev.slots[1])
						case "model_context_window":
							if v, k := l.Number(); k == usage.NumOK {
								ev.window = v
							}
						}
					})
				}
			})
		}
	})
	return l.End() && ok
}

// text is l.Text() without a new string for the type names a rollout
// repeats on every line.
func text(l *usage.Lexer) string {
	raw := l.Str()
	if bytes.IndexByte(raw, '\\') >= 0 {
		return usage.UnescapeJSON(raw)
	}
	switch string(raw) {
	case "event_msg":
		return "event_msg"
	case "response_item":
		return "response_item"
	case "turn_context":
		return "turn_context"
	case "token_count":
		return "token_count"
	case "token_usage_record":
		return "token_usage_record"
	}
	return string(raw)
}

// scanUsageFields decodes a usage object into u; nil when the value is not
// an object.
func scanUsageFields(l *usage.Lexer, u *codexRaw) *codexRaw {
	if l.Peek() != '{' {
		l.Skip()
		return nil
	}
	*u = codexRaw{}
	l.Object(func(k []byte) {
		var dst *int64
		switch string(k) {
		case "input_tokens":
			dst = &u.in
		case "cached_input_tokens":
			dst = &u.cached
		case "cache_write_input_tokens":
			dst = &u.write
		case "output_tokens":
			dst = &u.out
		case "reasoning_output_tokens":
			dst = &u.reasoning
		case "total_tokens":
			dst = &u.total
		default:
			return
		}
		v, kind := l.Number()
		switch {
		case kind == usage.NumNull:
		case kind != usage.NumOK:
			u.bad = string(k) + " is " + kind.String()
		case v > usage.MaxRequestTokens*1000: // running totals may legitimately exceed one request's bound
			u.bad = string(k) + " is absurdly large"
		default:
			*dst = v
		}
	})
	return u
}

// codexCWD returns session_meta.payload.cwd.
func codexCWD(line []byte) string {
	cwd := ""
	l := usage.NewLexer(line)
	l.Object(func(k []byte) {
		if string(k) == "payload" {
			l.Object(func(p []byte) {
				if string(p) == "cwd" && l.Peek() == '"' {
					cwd = l.Text()
				}
			})
		}
	})
	return cwd
}

// TwinKey implements usage.Twins: a thread's rollout may be both in
// sessions/ and in archived_sessions/; the one in sessions/ is counted
// (ccusage counts such a pair once too, sessions/ winning).
func (Home) TwinKey(s *session.Session) (string, int) {
	if s.ID == "" {
		return "", 0
	}
	if strings.Contains(filepath.ToSlash(s.Main), "/archived_sessions/") {
		return s.ID, 1
	}
	return s.ID, 0
}
