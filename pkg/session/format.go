package session

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// Format decodes the lines of one agent's session files.
type Format interface {
	Agent() Agent
	// decode fills r from one OK line (r.Line is set, r.Kind is KindMessage
	// on entry). obj is the line, made decodable by encoding/json.
	decode(obj []byte, r *Record)
	// KnownType reports whether a record type (Record.Type) is one this
	// format documents; others are reported as unknown by check.
	KnownType(t string) bool
}

// FormatFor returns the adapter of an agent, or nil.
func FormatFor(a Agent) Format {
	switch a {
	case Kimi:
		return kimiFormat{}
	case Claude:
		return claudeFormat{}
	case Codex:
		return codexFormat{}
	case Clawdcode:
		return clawdFormat{}
	}
	return nil
}

// Decode turns one line into a Record. The Record's Line.Raw aliases l.Raw;
// callers that keep the Record beyond the next read must Clone the line.
func Decode(f Format, l *jsonl.Line) Record {
	r := Record{Agent: f.Agent(), Line: *l, ContextTokens: -1}
	switch {
	case l.Status == jsonl.Blank:
		r.Kind = KindBlank
		return r
	case l.Status != jsonl.OK:
		r.Kind = KindCorrupt
		return r
	}
	obj := l.Raw
	if l.RawControl {
		obj = jsonl.Strict(l.Raw)
	}
	r.Kind = KindMessage
	f.decode(obj, &r)
	return r
}

// ReadFile streams the records of a file through fn. fn's Record is only
// valid during the call (its Line.Raw is reused).
func ReadFile(path string, f Format, fn func(*Record) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return ReadRecords(fh, f, fn)
}

// ReadRecords is ReadFile over any reader.
func ReadRecords(rd io.Reader, f Format, fn func(*Record) error) error {
	return jsonl.Scan(rd, func(l *jsonl.Line) error {
		r := Decode(f, l)
		return fn(&r)
	})
}

// --- detection ---

var (
	uuidRe   = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	nanoidRe = regexp.MustCompile(`^[A-Za-z0-9_-]{21}$`)
)

// sniffHead is how many usable lines detection looks at, and sniffMaxLine
// the longest line it keeps (longer lines are skipped while sniffing).
const (
	sniffHead    = 20
	sniffMaxLine = 4 << 20
)

// DetectFile detects the format of a file from its first lines, with its path
// as a hint. It reads at most sniffHead usable lines and keeps no line longer
// than sniffMaxLine in memory.
func DetectFile(path string) (Agent, error) {
	f, err := jsonl.Open(path)
	if err != nil {
		return Unknown, err
	}
	defer f.Close()
	return Detect(path, f)
}

// Detect decides the agent of a stream from its content; path is a hint.
func Detect(path string, rd io.Reader) (Agent, error) {
	votes := map[Agent]int{}
	seen := 0
	r := jsonl.NewReader(rd)
	r.MaxLineSize = sniffMaxLine // a huge first line is skipped, not buffered
	for seen < sniffHead {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Unknown, err
		}
		if l.Status != jsonl.OK {
			continue
		}
		seen++
		a := sniffLine(l.Raw, l.RawControl)
		if a == Unknown {
			continue
		}
		votes[a]++
		// Codex and Kimi lines are unambiguous
		if a == Codex || a == Kimi {
			return a, nil
		}
		if votes[a] >= 3 {
			break
		}
	}
	best, bestN := Unknown, 0
	for _, a := range []Agent{Clawdcode, Claude} {
		if votes[a] > bestN {
			best, bestN = a, votes[a]
		}
	}
	if best == Unknown {
		return pathHint(path), nil
	}
	if best == Claude && votes[Clawdcode] == 0 && strings.Contains(filepath.ToSlash(path), "/.clawdcode/") {
		return Clawdcode, nil
	}
	return best, nil
}

// pathHint guesses from the path alone (used for empty or unreadable files).
func pathHint(path string) Agent {
	p := filepath.ToSlash(path)
	base := filepath.Base(p)
	switch {
	case strings.HasPrefix(base, "rollout-") && strings.HasSuffix(base, ".jsonl"):
		return Codex
	case kimiContextRe.MatchString(base) && strings.Contains(p, "/sessions/"):
		return Kimi
	case strings.Contains(p, "/.clawdcode/projects/"):
		return Clawdcode
	case strings.Contains(p, "/projects/") && (strings.Contains(p, "/.claude/") || strings.Contains(p, "/claude/")):
		return Claude
	}
	return Unknown
}

var kimiContextRe = regexp.MustCompile(`^context(_\d+)?\.jsonl$`)

// sniffLine classifies one JSON object line; Unknown when it says nothing.
func sniffLine(raw []byte, rawControl bool) Agent {
	if rawControl {
		raw = jsonl.Strict(raw)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return Unknown
	}
	_, hasType := top["type"]
	_, hasPayload := top["payload"]
	_, hasRole := top["role"]
	if hasType && hasPayload {
		if _, ok := top["timestamp"]; ok {
			return Codex
		}
	}
	if _, ok := top["record_type"]; ok {
		return Codex // legacy rollout state line
	}
	if _, ok := top["instructions"]; ok && !hasType {
		return Codex // legacy rollout header
	}
	if hasRole && !hasType {
		return Kimi
	}
	if _, ok := top["message"]; ok && !hasType {
		// Kimi wire lines have a numeric timestamp and message.type
		var ts float64
		if json.Unmarshal(top["timestamp"], &ts) == nil {
			return Unknown
		}
	}
	var typ string
	json.Unmarshal(top["type"], &typ)
	switch typ {
	case "tool_use", "tool_result":
		return Clawdcode
	case "summary", "queue-operation", "file-history-snapshot", "progress", "attachment", "last-prompt",
		"mode", "permission-mode", "custom-title", "ai-title", "agent-name", "agent-color", "pr-link":
		return Claude
	}
	if _, ok := top["isSidechain"]; ok {
		return Claude
	}
	if _, ok := top["userType"]; ok {
		return Claude
	}
	var uuid string
	if json.Unmarshal(top["uuid"], &uuid) == nil && uuid != "" {
		if uuidRe.MatchString(uuid) {
			return Claude
		}
		if nanoidRe.MatchString(uuid) {
			return Clawdcode
		}
	}
	if _, ok := top["sessionId"]; ok {
		if _, ok := top["message"]; ok {
			return Claude // ccusage-style usage lines without type
		}
	}
	return Unknown
}

// --- small decoding helpers shared by the adapters ---

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t
	}
	return time.Time{}
}

// flexInt decodes an integer that may be written as a number, a numeric
// string or null; anything else (and negatives) becomes ok=false.
type flexInt struct {
	v  int64
	ok bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) != nil {
			return nil
		}
		b = []byte(s)
	}
	var n json.Number
	if json.Unmarshal(b, &n) != nil {
		return nil
	}
	if i, err := n.Int64(); err == nil && i >= 0 {
		f.v, f.ok = i, true
		return nil
	}
	if fl, err := n.Float64(); err == nil && fl >= 0 && fl < 1e15 && fl == float64(int64(fl)) {
		f.v, f.ok = int64(fl), true
	}
	return nil
}

// textOf renders a JSON value that holds message content as text: a string is
// itself, an array of parts yields its text parts joined by newlines.
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		return s
	}
	if raw[0] == '[' {
		var parts []struct {
			Type string          `json:"type"`
			Text string          `json:"text"`
			Cont json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var b strings.Builder
		for _, p := range parts {
			t := p.Text
			if t == "" && len(p.Cont) > 0 {
				t = textOf(p.Cont)
			}
			if t == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t)
		}
		return b.String()
	}
	return string(raw)
}

// rawText returns a raw JSON value as text for tool inputs: strings unquoted,
// anything else as its JSON.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// hasAnyPrefix reports whether s (after leading white space) starts with one
// of the prefixes.
func hasAnyPrefix(s string, prefixes ...string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// ShortID shortens a session id for tables.
func ShortID(id string) string {
	if len(id) > 8 && uuidRe.MatchString(id) {
		return id[:8]
	}
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
