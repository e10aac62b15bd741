package tokens

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"

	"github.com/sessctl/sessctl/pkg/session"
)

// Claude Code: message.usage on assistant lines; one response is written as
// several lines that repeat its usage (claude-code.md §3–§4). Lines are
// read with a byte prefilter ("usage") and a lexer that looks only at the
// fields below; everything else in a line is skipped without decoding.

type claudeUsageLine struct {
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
	inK, outK, ccK, crK numKind
	split               bool // cache_creation object present
	m5, h1              int64
	m5K, h1K            numKind
	speed               []byte
	speedSeen           bool
}

func scanClaude(lr *lineReader, fu *FileUsage) error {
	models := map[string]ModelID{} // raw model bytes -> id (no speed field)
	var cl claudeUsageLine
	for {
		// only lines that can carry usage are looked at; the others are
		// skipped in one search (the one-session report and check validate
		// every line)
		line, err := lr.nextMatch([]byte(`"usage"`))
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		claudeLine(line, lr.num, &cl, fu, models)
	}
	fu.Lines = lr.num
	if lr.tail != nil && looksCorrupt(lr.tail, true) {
		fu.Corrupt++
	}
	return nil
}

// validLine is a cheap check used only where a line's shape matters.
func validLine(line []byte) bool {
	l := lexer{b: line}
	l.skip()
	l.ws()
	return !l.bad && l.i == len(l.b)
}

func claudeLine(line []byte, num int, cl *claudeUsageLine, fu *FileUsage, models map[string]ModelID) {
	*cl = claudeUsageLine{}
	l := lexer{b: line, watch: true}
	ok := l.object(func(key []byte) {
		switch string(key) {
		case "timestamp":
			if l.peek() == '"' {
				cl.timestamp = l.str()
				cl.tsSeen = true
			}
		case "isSidechain":
			s, _ := l.literal()
			cl.sidechain = s == "true"
		case "requestId":
			cl.reqSeen = true
			if l.peek() == '"' {
				cl.requestID = l.str()
			} else {
				cl.reqNull = true
			}
		case "sessionId":
			if l.peek() == '"' {
				raw := l.str()
				cl.sessionEmpty = len(raw) == 0
			}
		case "version":
			if l.peek() == '"' {
				cl.version = l.str()
				cl.versionSeen = true
			}
		case "message":
			cl.hasMessage = l.peek() == '{'
			l.object(func(k []byte) {
				switch string(k) {
				case "id":
					if l.peek() == '"' {
						cl.msgID = l.str()
						cl.idSeen = true
					}
				case "model":
					if l.peek() == '"' {
						cl.model = l.str()
						cl.modelSeen = true
					}
				case "usage":
					cl.hasUsage = l.peek() == '{'
					cl.inK, cl.outK, cl.ccK, cl.crK, cl.m5K, cl.h1K = numMissing, numMissing, numMissing, numMissing, numMissing, numMissing
					l.object(func(u []byte) {
						switch string(u) {
						case "input_tokens":
							cl.in, cl.inK = l.number()
						case "output_tokens":
							cl.out, cl.outK = l.number()
						case "cache_creation_input_tokens":
							cl.cc, cl.ccK = l.number()
						case "cache_read_input_tokens":
							cl.cr, cl.crK = l.number()
						case "cache_creation":
							cl.split = l.peek() == '{'
							l.object(func(s []byte) {
								switch string(s) {
								case "ephemeral_5m_input_tokens":
									cl.m5, cl.m5K = l.number()
								case "ephemeral_1h_input_tokens":
									cl.h1, cl.h1K = l.number()
								}
							})
						case "speed":
							if l.peek() == '"' {
								cl.speed = l.str()
								cl.speedSeen = true
							}
						}
					})
				}
			})
		}
	})
	l.ws()
	if !ok || l.bad || l.i != len(l.b) {
		if len(bytes.TrimSpace(line)) > 0 {
			fu.Corrupt++
		}
		if bytes.Contains(line, []byte(`"message"`)) {
			fu.reject(num, "corrupt line (not valid JSON)")
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
		k        numKind
		optional bool
	}{
		{"input_tokens", cl.in, cl.inK, false}, {"output_tokens", cl.out, cl.outK, false},
		{"cache_creation_input_tokens", cl.cc, cl.ccK, true}, {"cache_read_input_tokens", cl.cr, cl.crK, true},
		{"cache_creation.ephemeral_5m_input_tokens", cl.m5, cl.m5K, true},
		{"cache_creation.ephemeral_1h_input_tokens", cl.h1, cl.h1K, true},
	} {
		switch {
		case f.k == numOK && f.v > MaxRequestTokens:
			reason = "usage." + f.name + " is absurdly large"
		case f.k == numOK, f.optional && (f.k == numMissing || f.k == numNull):
			continue
		default:
			reason = "usage." + f.name + " is " + f.k.String()
		}
		break
	}
	counted := reason == ""
	ms, tsErr := parseMillis(cl.timestamp)

	// ccusage 20.0.24's rule (tokens.md §6), to report where it differs.
	ccReason := ""
	switch {
	case !l.usageBrace:
		ccReason = "spaced JSON: no exact \"usage\":{ bytes"
	case l.nullKey:
		ccReason = "a key it requires non-null is null"
	case !cl.tsSeen || tsErr != nil:
		ccReason = "missing or unparseable timestamp"
	case cl.inK != numOK || cl.outK != numOK:
		ccReason = "input_tokens/output_tokens not an unsigned integer"
	case !okOrMissing(cl.ccK) || !okOrMissing(cl.crK) || (cl.split && (!okOrMissing(cl.m5K) || !okOrMissing(cl.h1K))):
		ccReason = "cache field not an unsigned integer"
	case cl.versionSeen && !semverPrefix(string(cl.version)):
		ccReason = "version is not digits.digits.digit"
	case cl.sessionEmpty, cl.reqSeen && !cl.reqNull && len(cl.requestID) == 0,
		cl.idSeen && len(cl.msgID) == 0, cl.modelSeen && len(cl.model) == 0:
		ccReason = "an empty sessionId, requestId, message.id or model"
	}
	cc := ccReason == ""
	if !counted {
		fu.reject(num, reason)
		if cc {
			fu.CCUsageOnly++
		}
	} else if !cc && cl.in+cl.out+cl.cc+cl.cr+cl.m5+cl.h1 > 0 {
		// (a line with zero usage changes no total: not worth a note)
		fu.sessctlOnly(num, ccReason)
	}
	if !counted && !cc {
		return
	}

	req := Request{Line: int32(num), sidechain: cl.sidechain, speed: cl.speedSeen, counted: counted, ccusage: cc}
	req.Usage = session.Usage{Input: cl.in, Output: cl.out, CacheRead: cl.cr, CacheCreation: cl.cc}
	if cl.split {
		req.Usage.CacheCreation = cl.m5 + cl.h1
	}
	if tsErr == nil {
		req.Time = ms
	}
	if m, ok := models[string(cl.model)]; ok && cl.speed == nil {
		req.Model = m
	} else {
		model := string(cl.model)
		if bytes.IndexByte(cl.model, '\\') >= 0 {
			model = unescapeJSON(cl.model)
		}
		if model == "<synthetic>" {
			model = ""
		} else if model != "" && string(cl.speed) == "fast" {
			model += "-fast"
		}
		req.Model = fu.models.id(model)
		if cl.speed == nil {
			models[string(cl.model)] = req.Model
		}
	}
	if len(cl.msgID) > 0 {
		req.key = hashKey(cl.msgID, cl.requestID, cl.reqSeen && !cl.reqNull)
		req.msgKey = hashKey(cl.msgID, nil, false)
	}
	if counted && req.Time > fu.LastActivity {
		fu.LastActivity = req.Time
	}
	fu.Requests = append(fu.Requests, req)
}

func okOrMissing(k numKind) bool { return k == numOK || k == numMissing }

func hashKey(id, req []byte, hasReq bool) uint64 {
	// eight bytes at a time, each word mixed in by a 64x64->128 multiply
	// (as wyhash does); a collision would merge two requests, and at 64
	// bits that needs billions of them
	k := mixBytes(0x9e3779b97f4a7c15, id)
	if hasReq {
		k = mixBytes(k^0xff51afd7ed558ccd, req)
	}
	if k == 0 {
		k = 1
	}
	return k
}

func mixBytes(h uint64, b []byte) uint64 {
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	h ^= uint64(len(b)) * m1
	for len(b) >= 8 {
		hi, lo := bits.Mul64(h^binary.LittleEndian.Uint64(b), m2)
		h = hi ^ lo
		b = b[8:]
	}
	var t uint64
	for i, c := range b {
		t |= uint64(c) << (8 * i)
	}
	hi, lo := bits.Mul64(h^t^m1, m2)
	return hi ^ lo
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
