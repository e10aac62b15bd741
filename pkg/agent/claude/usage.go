package claude

import (
	"bytes"
	"io"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Claude Code's recorded usage: message.usage on assistant lines; one
// response is written as several lines that repeat its usage
// (claude-code.md §3–§4), so each carries the keys the Ledger de-duplicates
// by (message.id + requestId). Lines are read with a byte prefilter
// ("usage") and a lexer that looks only at the fields below; everything
// else in a line is skipped without decoding.

// Classify implements usage.Scanner: every transcript of the session (the
// main file and the subagents' *.jsonl) records usage and is what ccusage
// reads; the main file's context is the session's. sessctl's rotations of
// them (<file>.N, which a revert leaves holding the turns it removed) record
// usage too, as copies: ccusage does not read them.
func (Home) Classify(s *session.Session, f session.File) usage.FileClass {
	return usage.Transcripts(f, usage.CCUsage)
}

type claudeUsageLine struct {
	costUSD             float64 // the line's own costUSD (older Claude Code versions wrote one)
	costSeen            bool
	timestamp           []byte
	tsSeen              bool
	sidechain           bool
	requestID, msgID    []byte
	reqNull, reqSeen    bool
	idSeen              bool
	model               []byte
	modelSeen           bool
	sessionEmpty        bool
	version             []byte
	versionSeen         bool
	hasMessage          bool
	hasUsage            bool
	in, out, cc, cr     int64
	inK, outK, ccK, crK usage.NumKind
	split               bool // cache_creation object present
	m5, h1              int64
	m5K, h1K            usage.NumKind
	speed               []byte
	speedSeen           bool
}

// ScanUsage implements usage.Scanner.
func (Home) ScanUsage(lr *usage.LineReader, fu *usage.FileUsage) error {
	models := map[string]usage.ModelID{} // raw model bytes -> id (no speed field)
	var cl claudeUsageLine
	for {
		// only lines that can carry usage are looked at; the others are
		// skipped in one search (the one-session report and check validate
		// every line)
		line, err := lr.NextMatch([]byte(`"usage"`))
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		scanLine(line, lr.Num(), &cl, fu, models)
	}
	if lr.Tail() != nil && usage.LooksCorrupt(lr.Tail(), true) {
		fu.Corrupt++
	}
	return nil
}

func scanLine(line []byte, num int, cl *claudeUsageLine, fu *usage.FileUsage, models map[string]usage.ModelID) {
	*cl = claudeUsageLine{}
	l := usage.NewLexer(line)
	l.Watch([]byte("usage"), ccusageNullKey)
	ok := l.Object(func(key []byte) {
		switch string(key) {
		case "timestamp":
			if l.Peek() == '"' {
				cl.timestamp = l.Str()
				cl.tsSeen = true
			}
		case "isSidechain":
			s, _ := l.Literal()
			cl.sidechain = s == "true"
		case "costUSD":
			if c := l.Peek(); c >= '0' && c <= '9' {
				cl.costUSD, cl.costSeen = l.Float(), true
			} else {
				l.Skip()
			}
		case "requestId":
			cl.reqSeen = true
			if l.Peek() == '"' {
				cl.requestID = l.Str()
			} else {
				cl.reqNull = true
			}
		case "sessionId":
			if l.Peek() == '"' {
				raw := l.Str()
				cl.sessionEmpty = len(raw) == 0
			}
		case "version":
			if l.Peek() == '"' {
				cl.version = l.Str()
				cl.versionSeen = true
			}
		case "message":
			cl.hasMessage = l.Peek() == '{'
			l.Object(func(k []byte) {
				switch string(k) {
				case "id":
					if l.Peek() == '"' {
						cl.msgID = l.Str()
						cl.idSeen = true
					}
				case "model":
					if l.Peek() == '"' {
						cl.model = l.Str()
						cl.modelSeen = true
					}
				case "usage":
					cl.hasUsage = l.Peek() == '{'
					cl.inK, cl.outK, cl.ccK, cl.crK, cl.m5K, cl.h1K = usage.NumMissing, usage.NumMissing, usage.NumMissing, usage.NumMissing, usage.NumMissing, usage.NumMissing
					l.Object(func(u []byte) {
						switch string(u) {
						case "input_tokens":
							cl.in, cl.inK = l.Number()
						case "output_tokens":
							cl.out, cl.outK = l.Number()
						case "cache_creation_input_tokens":
							cl.cc, cl.ccK = l.Number()
						case "cache_read_input_tokens":
							cl.cr, cl.crK = l.Number()
						case "cache_creation":
							cl.split = l.Peek() == '{'
							l.Object(func(s []byte) {
								switch string(s) {
								case "ephemeral_5m_input_tokens":
									cl.m5, cl.m5K = l.Number()
								case "ephemeral_1h_input_tokens":
									cl.h1, cl.h1K = l.Number()
								}
							})
						case "speed":
							if l.Peek() == '"' {
								cl.speed = l.Str()
								cl.speedSeen = true
							}
						}
					})
				}
			})
		}
	})
	if !l.End() || !ok {
		if len(bytes.TrimSpace(line)) > 0 {
			fu.Corrupt++
		}
		if bytes.Contains(line, []byte(`"message"`)) {
			fu.Reject(num, "corrupt line (not valid JSON)")
		}
		return
	}
	if !cl.hasUsage {
		return // "usage" somewhere else (toolUseResult, progress copies): not a request
	}
	fu.UsageLines++

	// sessctl's rule: input and output must be non-negative integers, the
	// cache fields may be absent or null (0), nothing absurdly large.
	reason := ""
	for _, f := range []struct {
		name     string
		v        int64
		k        usage.NumKind
		optional bool
	}{
		{"input_tokens", cl.in, cl.inK, false}, {"output_tokens", cl.out, cl.outK, false},
		{"cache_creation_input_tokens", cl.cc, cl.ccK, true}, {"cache_read_input_tokens", cl.cr, cl.crK, true},
		{"cache_creation.ephemeral_5m_input_tokens", cl.m5, cl.m5K, true},
		{"cache_creation.ephemeral_1h_input_tokens", cl.h1, cl.h1K, true},
	} {
		switch {
		case f.k == usage.NumOK && f.v > usage.MaxRequestTokens:
			reason = "usage." + f.name + " is absurdly large"
		case f.k == usage.NumOK, f.optional && (f.k == usage.NumMissing || f.k == usage.NumNull):
			continue
		default:
			reason = "usage." + f.name + " is " + f.k.String()
		}
		break
	}
	counted := reason == ""
	ms, tsErr := usage.ParseMillis(cl.timestamp)

	// ccusage 20.0.24's rule (tokens.md §6), to report where it differs.
	ccReason := ""
	switch {
	case !l.BraceSeen():
		ccReason = "spaced JSON: no exact \"usage\":{ bytes"
	case l.NullSeen():
		ccReason = "a key it requires non-null is null"
	case !cl.tsSeen || tsErr != nil:
		ccReason = "missing or unparseable timestamp"
	case cl.inK != usage.NumOK || cl.outK != usage.NumOK:
		ccReason = "input_tokens/output_tokens not an unsigned integer"
	case !cl.ccK.OKOrMissing() || !cl.crK.OKOrMissing() || (cl.split && (!cl.m5K.OKOrMissing() || !cl.h1K.OKOrMissing())):
		ccReason = "cache field not an unsigned integer"
	case cl.versionSeen && !semverPrefix(string(cl.version)):
		ccReason = "version is not digits.digits.digit"
	case cl.sessionEmpty, cl.reqSeen && !cl.reqNull && len(cl.requestID) == 0,
		cl.idSeen && len(cl.msgID) == 0, cl.modelSeen && len(cl.model) == 0:
		ccReason = "an empty sessionId, requestId, message.id or model"
	}
	cc := ccReason == ""
	if !counted {
		fu.Reject(num, reason)
		if cc {
			fu.CCUsageOnly++
		}
	} else if !cc && cl.in+cl.out+cl.cc+cl.cr+cl.m5+cl.h1 > 0 {
		// (a line with zero usage changes no total: not worth a note)
		fu.CountedNotByCCUsage(num, ccReason)
	}
	if !counted && !cc {
		return
	}

	req := usage.Request{Line: int32(num), Sidechain: cl.sidechain, Speed: cl.speedSeen, Counted: counted, CCUsage: cc,
		CostUSD: cl.costUSD, HasCost: cl.costSeen}
	req.Usage = session.Usage{Input: cl.in, Output: cl.out, CacheRead: cl.cr, CacheCreation: cl.cc}
	if cl.split {
		req.Usage.CacheCreation = cl.m5 + cl.h1
		req.Usage.CacheCreation1h = cl.h1
	}
	if tsErr == nil {
		req.Time = ms
	}
	if m, ok := models[string(cl.model)]; ok && cl.speed == nil {
		req.Model = m
	} else {
		model := string(cl.model)
		if bytes.IndexByte(cl.model, '\\') >= 0 {
			model = usage.UnescapeJSON(cl.model)
		}
		if model == "<synthetic>" {
			model = ""
		} else if model != "" && string(cl.speed) == "fast" {
			model += "-fast"
		}
		req.Model = fu.ModelID(model)
		if cl.speed == nil {
			models[string(cl.model)] = req.Model
		}
	}
	if len(cl.msgID) > 0 {
		req.Key = usage.HashKey(cl.msgID, cl.requestID, cl.reqSeen && !cl.reqNull)
		req.MsgKey = usage.HashKey(cl.msgID, nil, false)
	}
	fu.Add(req, line)
}

// ccusageNullKey says whether ccusage rejects a line in which this key is
// followed by the bytes `:null`, wherever in the line (its
// has_unsupported_null_field). The lexer notes it while reading the line.
func ccusageNullKey(k []byte) bool {
	switch string(k) {
	case "id", "cwd", "model", "speed", "costUSD", "version", "sessionId", "requestId",
		"isApiErrorMessage", "cache_read_input_tokens", "cache_creation_input_tokens":
		return true
	}
	return false
}

// semverPrefix: digits '.' digits '.' digit.
func semverPrefix(v string) bool {
	i := 0
	digits := func() bool {
		s := i
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		return i > s
	}
	if !digits() || i >= len(v) || v[i] != '.' {
		return false
	}
	i++
	if !digits() || i >= len(v) || v[i] != '.' {
		return false
	}
	i++
	return i < len(v) && v[i] >= '0' && v[i] <= '9'
}
