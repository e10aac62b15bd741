package kimi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"

	"github.com/sessctl/sessctl/pkg/checkpoint"
	"github.com/sessctl/sessctl/pkg/jsonl"
)

// RevertTo does exactly what kimi-cli 1.49's Context.revert_to(n) writes
// into the new context.jsonl (kimi.md §4.4), streaming src into dst: every
// accepted record before the first line whose role is "_checkpoint" and
// whose id equals n (Python equality: 1, 1.0 and true all equal 1), each
// line as Python's text reader decodes it (UTF-8 with U+FFFD replacement,
// universal newlines) followed by "\n". Blank lines, lines that are not JSON
// objects and records Kimi rejects are not copied.
//
// dst may be io.Discard to plan a revert. The error is checkpoint.ErrNoCheckpoint
// (wrapped) when no such line exists or n >= the file's next checkpoint id;
// kimi-cli would refuse the latter and turn the former into a pure rotation,
// which sessctl refuses instead. dst has then received the kept prefix and
// must be discarded.
func RevertTo(src io.Reader, dst io.Writer, n int64) (checkpoint.CopyRevertStats, error) {
	st := checkpoint.CopyRevertStats{Tokens: -1}
	sp := newPyLines(src)
	bw := bufio.NewWriterSize(dst, 64<<10)
	for {
		raw, eol, off, err := sp.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		text, changed := pyDecode(raw[:len(raw)-eol])
		blank := pyBlank(text)
		var obj map[string]json.RawMessage
		// after the cut only checkpoints matter (for the next id); a line
		// that cannot name one is not parsed
		if !blank && (!st.Found || bytes.Contains(text, []byte("_checkpoint")) || bytes.Contains(text, []byte(`\u`))) {
			obj = pyLoadsObject(text)
		}
		// the whole file decides the next checkpoint id (restore)
		if obj != nil {
			if role, ok := jsonString(obj["role"]); ok && role == "_checkpoint" {
				if id, ok := pyInt(obj["id"]); ok {
					st.NextID = id + 1
				}
			}
		}
		if st.Found {
			if !blank {
				st.Removed++
				st.RemovedBytes += int64(len(raw) + eol)
			}
			continue
		}
		if blank {
			st.Blank++
			continue
		}
		if obj == nil {
			st.Dropped++
			continue
		}
		if role, ok := jsonString(obj["role"]); ok && role == "_checkpoint" && pyEqualsInt(obj["id"], n) {
			st.Found = true
			st.CutLine = sp.num
			st.CutOffset = off
			st.Removed++
			st.RemovedBytes += int64(len(raw) + eol)
			continue
		}
		if !kimiAccepts(obj) {
			st.Dropped++
			continue
		}
		if role, _ := jsonString(obj["role"]); role == "_usage" {
			st.Tokens, _ = pyInt(obj["token_count"])
		}
		// Python writes the decoded line with its newline; only a last line
		// without one is written without (it cannot precede the cut).
		out := text
		if eol > 0 {
			out = append(out[:len(out):len(out)], '\n')
			if raw[len(raw)-1] != '\n' || eol == 2 { // \r or \r\n
				changed = true
			}
		}
		if changed {
			st.Normalised++
		}
		if _, err := bw.Write(out); err != nil {
			return st, err
		}
		st.Kept++
		st.KeptBytes += int64(len(out))
	}
	if err := bw.Flush(); err != nil {
		return st, err
	}
	switch {
	case !st.Found:
		return st, fmt.Errorf("%w %d: the file has no {\"role\": \"_checkpoint\", \"id\": %d} line", checkpoint.ErrNoCheckpoint, n, n)
	case n >= st.NextID:
		return st, fmt.Errorf("%w %d: kimi-cli would refuse it (its next checkpoint id is %d)", checkpoint.ErrNoCheckpoint, n, st.NextID)
	}
	return st, nil
}

// pyLines splits a byte stream the way Python's text mode with universal
// newlines does: at "\n", "\r\n" and a lone "\r".
type pyLines struct {
	br     *bufio.Reader
	off    int64
	num    int
	seg    []byte // the current run of bytes up to and including a "\n" (or EOF)
	segPos int
}

func newPyLines(r io.Reader) *pyLines { return &pyLines{br: bufio.NewReaderSize(r, 64<<10)} }

// next returns a line with its terminator (raw[:len-eol] is the content),
// the terminator's length (0, 1 or 2), and the line's offset. raw is valid
// until the next call.
func (p *pyLines) next() (raw []byte, eol int, off int64, err error) {
	if p.segPos >= len(p.seg) {
		p.seg, p.segPos = p.seg[:0], 0
		for {
			frag, err := p.br.ReadSlice('\n')
			p.seg = append(p.seg, frag...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				return nil, 0, p.off, err
			}
			break
		}
		if len(p.seg) == 0 {
			return nil, 0, p.off, io.EOF
		}
	}
	rest := p.seg[p.segPos:]
	line := rest
	if i := bytes.IndexByte(rest, '\r'); i >= 0 && i+1 < len(rest) {
		if rest[i+1] == '\n' {
			line = rest[:i+2]
		} else {
			line = rest[:i+1]
		}
	}
	n := len(line)
	switch {
	case n >= 2 && line[n-2] == '\r' && line[n-1] == '\n':
		eol = 2
	case n >= 1 && (line[n-1] == '\n' || line[n-1] == '\r'):
		eol = 1
	}
	off = p.off
	p.segPos += n
	p.off += int64(n)
	p.num++
	return line, eol, off, nil
}

// pyDecode returns a line's content (without terminator) decoded the way
// Python's UTF-8 codec with errors="replace" does. changed reports a
// replacement.
func pyDecode(content []byte) (text []byte, changed bool) { return jsonl.PythonReplace(content) }

// pyBlank is Python's `not line.strip()`.
func pyBlank(text []byte) bool {
	for _, r := range string(text) {
		if !pyIsSpace(r) {
			return false
		}
	}
	return true
}

func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
}

// pyLoadsObject parses text the way json.loads(text, strict=False) does and
// returns its members when it is an object (duplicate keys: the last wins),
// else nil.
func pyLoadsObject(text []byte) map[string]json.RawMessage {
	t := bytes.TrimLeft(text, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil
	}
	strictText := jsonl.Strict(text)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(strictText, &obj); err == nil {
		return obj
	}
	// Python also accepts NaN, Infinity and -Infinity; they compare unequal
	// to every integer and fail every check Kimi makes, like 1e999 does.
	if alt, ok := replaceNonFinite(strictText); ok {
		if json.Unmarshal(alt, &obj) == nil {
			return obj
		}
	}
	return nil
}

func replaceNonFinite(b []byte) ([]byte, bool) {
	var out []byte
	inStr, esc, found := false, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, "1e999"...)
			i += 2
			found = true
			continue
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, "1e999"...)
			i += 7
			found = true
			continue
		}
		out = append(out, c)
	}
	return out, found
}

func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// pyInt accepts what isinstance(x, int) accepts: JSON integers and booleans.
func pyInt(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	if !isIntLiteral(raw) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return math.MaxInt64 - 1, true // a huge Python int; only its existence matters
	}
	return v, true
}

func isIntLiteral(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	s := raw
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// pyEqualsInt is Python's `x == n` for a JSON value x.
func pyEqualsInt(raw json.RawMessage, n int64) bool {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "true":
		return n == 1
	case "false":
		return n == 0
	}
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return false
	}
	if isIntLiteral(raw) {
		v, ok := new(big.Int).SetString(string(raw), 10)
		return ok && v.IsInt64() && v.Int64() == n
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		return false
	}
	return f == float64(n) && int64(f) == n
}

// kimiAccepts reports whether Kimi's restore accepts a record (kimi.md §4.1).
func kimiAccepts(obj map[string]json.RawMessage) bool {
	role, ok := jsonString(obj["role"])
	if !ok {
		return false
	}
	switch role {
	case "_system_prompt":
		if _, ok := jsonString(obj["content"]); ok {
			return true
		}
	case "_usage":
		_, ok := pyInt(obj["token_count"])
		if ok {
			return true
		}
	case "_checkpoint":
		_, ok := pyInt(obj["id"])
		if ok {
			return true
		}
	}
	return validMessage(obj)
}

// validMessage mirrors pydantic's validation of kosong's Message model
// (role, name, content, tool_calls, tool_call_id, partial; extra keys
// ignored).
func validMessage(obj map[string]json.RawMessage) bool {
	role, _ := jsonString(obj["role"])
	switch role {
	case "system", "user", "assistant", "tool":
	default:
		return false
	}
	if !optString(obj, "name") || !optString(obj, "tool_call_id") {
		return false
	}
	if raw, ok := obj["partial"]; ok && !isNull(raw) && !laxBool(raw) {
		return false
	}
	content, ok := obj["content"]
	if !ok {
		return false // required
	}
	if !validContent(content) {
		return false
	}
	if raw, ok := obj["tool_calls"]; ok && !isNull(raw) {
		var calls []json.RawMessage
		if !arrayOf(raw, &calls) {
			return false
		}
		for _, c := range calls {
			if !validToolCall(c) {
				return false
			}
		}
	}
	return true
}

func optString(obj map[string]json.RawMessage, key string) bool {
	raw, ok := obj[key]
	if !ok || isNull(raw) {
		return true
	}
	_, ok = jsonString(raw)
	return ok
}

func objectOf(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

func arrayOf(raw json.RawMessage, out *[]json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return false
	}
	return json.Unmarshal(raw, out) == nil
}

// laxBool is pydantic's lax bool: true/false, 0/1, and a few strings.
func laxBool(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	switch string(raw) {
	case "true", "false":
		return true
	}
	if s, ok := jsonString(raw); ok {
		switch strings.ToLower(s) {
		case "0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes":
			return true
		}
		return false
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return f == 0 || f == 1
	}
	return false
}

func validContent(raw json.RawMessage) bool {
	if isNull(raw) {
		return true
	}
	if _, ok := jsonString(raw); ok {
		return true
	}
	var parts []json.RawMessage
	if !arrayOf(raw, &parts) {
		return false
	}
	for _, p := range parts {
		m, ok := objectOf(p)
		if !ok {
			return false
		}
		typ, ok := jsonString(m["type"])
		if !ok {
			return false
		}
		switch typ {
		case "text":
			if _, ok := jsonString(m["text"]); !ok {
				return false
			}
		case "think":
			if _, ok := jsonString(m["think"]); !ok || !optString(m, "encrypted") {
				return false
			}
		case "image_url", "audio_url", "video_url":
			u, ok := objectOf(m[typ])
			if !ok {
				return false
			}
			if _, ok := jsonString(u["url"]); !ok || !optString(u, "id") {
				return false
			}
		default:
			return false // not in kosong's part registry
		}
	}
	return true
}

func validToolCall(raw json.RawMessage) bool {
	m, ok := objectOf(raw)
	if !ok {
		return false
	}
	if t, ok := m["type"]; ok {
		if s, ok := jsonString(t); !ok || s != "function" {
			return false
		}
	}
	if _, ok := jsonString(m["id"]); !ok {
		return false
	}
	fn, ok := objectOf(m["function"])
	if !ok {
		return false
	}
	if _, ok := jsonString(fn["name"]); !ok {
		return false
	}
	args, ok := fn["arguments"]
	if !ok { // required, although it may be null
		return false
	}
	if !isNull(args) {
		if _, ok := jsonString(args); !ok {
			return false
		}
	}
	if ex, ok := m["extras"]; ok && !isNull(ex) {
		if _, ok := objectOf(ex); !ok {
			return false
		}
	}
	return true
}
