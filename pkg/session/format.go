package session

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// Format decodes the lines of one agent's session files. Every Home is a
// Format; the name stays for the callers that only decode.
type Format = Home

// FormatFor returns the home of an agent, or nil.
func FormatFor(a Agent) Format { return HomeOf(a) }

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
	f.Decode(obj, &r)
	if !reference {
		detach(&r, len(obj))
	}
	return r
}

// LazyDecoder is a Format whose decoder can validate a line in the pass
// that reads it (usage.NewStrictLexer), instead of after the validator
// went over it. readLines gives such a format its lines unvalidated.
type LazyDecoder interface {
	// DecodeLazy decodes a line that was not validated (its Status OK)
	// into r, prepared as Decode prepares it for a valid line. It reports
	// true only for a line it found valid and free of raw control
	// characters, which is what the unvalidated line already says;
	// false leaves the line to the validator and Decode, r to be made
	// anew.
	DecodeLazy(l *jsonl.Line, r *Record) bool
}

// decodeLazy is Decode of a line that was not validated, for a format
// that may be a LazyDecoder.
func decodeLazy(f Format, l *jsonl.Line) Record {
	if lf, ok := f.(LazyDecoder); ok && l.Status == jsonl.OK {
		r := Record{Agent: f.Agent(), Line: *l, ContextTokens: -1, Kind: KindMessage}
		if lf.DecodeLazy(l, &r) {
			if !reference {
				detach(&r, len(l.Raw))
			}
			return r
		}
	}
	l.Revalidate()
	return Decode(f, l)
}

// ReadFile streams the records of a file through fn, in file order. fn's
// Record is only valid during the call (its Line.Raw is reused). The
// lines are validated and decoded on every core (readLines).
func ReadFile(path string, f Format, fn func(*Record) error) error {
	return ReadFileContext(context.Background(), path, f, fn)
}

// ReadRecords is ReadFile over any reader.
func ReadRecords(rd io.Reader, f Format, fn func(*Record) error) error {
	return readLines(context.Background(), jsonl.NewReader(rd), f, fn)
}

// checkEvery is how many lines a reader goes between looks at its context.
const checkEvery = 256

// ReadFileContext is ReadFile that stops with ctx.Err() when ctx is done.
// jsonl.ErrStop from fn ends the read early with a nil error.
func ReadFileContext(ctx context.Context, path string, f Format, fn func(*Record) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return readLines(ctx, jsonl.NewReader(fh), f, fn)
}

// LineAt is where a line is: its number, offset and length without its
// terminator (jsonl.Line's Num, Offset and Len).
type LineAt struct {
	Num    int
	Offset int64
	Len    int64
}

// LineReader is a home whose client reads a line's bytes in its own way
// before decoding them (Kimi CLI: invalid UTF-8 as U+FFFD, as Python
// does). ReadLinesAt gives it each line, validated, before decoding it.
type LineReader interface {
	ReadLine(l *jsonl.Line)
}

// ReadLinesAt is ReadFileContext for the lines at, in file order, each
// read alone (pread), not the bytes between them: for a caller that knows
// from an earlier pass which lines it needs. The lines are validated and
// decoded on every core. A line that is no longer there as it was (the
// file shrank, or no terminator follows a line that had one) comes as
// what the bytes read make of it, as a second read of the whole file
// would. A file that cannot be read at an offset (a compressed one) is
// read whole, and only the lines at are decoded.
func ReadLinesAt(ctx context.Context, path string, f Format, at []LineAt, fn func(*Record) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	rp, _ := f.(LineReader)
	decode := func(l *jsonl.Line, r *Record) {
		l.Revalidate()
		if rp != nil {
			rp.ReadLine(l)
		}
		*r = Decode(f, l)
	}
	rf, ok := fh.(io.ReaderAt)
	if !ok {
		k := 0
		return scanLinesLazy(ctx, jsonl.NewReader(fh), true, func(l *jsonl.Line, r *Record) {
			*r = Record{Undecoded: true}
		}, func(l *jsonl.Line, _ *Record) error {
			for k < len(at) && at[k].Num < l.Num {
				k++
			}
			if k == len(at) || at[k].Num != l.Num {
				return nil
			}
			var r Record
			decode(l, &r)
			return fn(&r)
		})
	}
	src := &linesAt{f: rf, at: at, size: -1}
	if st, ok := fh.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil {
			src.size = fi.Size()
		}
	}
	if runtime.GOMAXPROCS(0) < 2 {
		return scanSerial(ctx, src, decode, func(_ *jsonl.Line, r *Record) error { return fn(r) })
	}
	return scanSource(ctx, src, true, decode, func(_ *jsonl.Line, r *Record) error { return fn(r) })
}

// linesAt reads the lines at known places, one pread each (with the two
// bytes after it, for its terminator).
type linesAt struct {
	f    io.ReaderAt
	size int64 // the file's size when opened (-1: not known)
	at   []LineAt
	i    int
	buf  []byte
	line jsonl.Line
}

func (s *linesAt) Next() (*jsonl.Line, error) {
	if s.i == len(s.at) {
		return nil, io.EOF
	}
	a := s.at[s.i]
	s.i++
	need := int(a.Len) + 2
	if s.size >= 0 && int64(need) > s.size-a.Offset {
		// a line said to run past the end of the file (it is shorter
		// now): what is there is read, no more is allocated
		need = int(max(s.size-a.Offset, 0))
	}
	if cap(s.buf) < need {
		s.buf = make([]byte, need)
	}
	n, err := s.f.ReadAt(s.buf[:need], a.Offset)
	if err != nil && err != io.EOF {
		return nil, err
	}
	b := s.buf[:n]
	l := &s.line
	*l = jsonl.Line{Num: a.Num, Offset: a.Offset, Status: jsonl.OK}
	switch {
	case n < int(a.Len):
		l.Raw = b // cut short: no terminator
	case n > int(a.Len) && b[a.Len] == '\n':
		l.Raw, l.EOL = b[:a.Len], jsonl.LF
	case n > int(a.Len)+1 && b[a.Len] == '\r' && b[a.Len+1] == '\n':
		l.Raw, l.EOL = b[:a.Len], jsonl.CRLF
	default:
		l.Raw = b[:a.Len]
	}
	l.Len = int64(len(l.Raw))
	return l, nil // Status OK: Revalidate classifies it
}

// ReadFileFrom is ReadFileContext for the lines that start at or after byte
// offset from: the part before it is only counted through (lines are
// numbered as in the whole file), not decoded.
func ReadFileFrom(ctx context.Context, path string, f Format, from int64, fn func(*Record) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	rd, err := jsonl.SkipTo(fh, from)
	if err != nil {
		return err
	}
	return readLines(ctx, rd, f, fn)
}

// ReadFileAt is ReadFileFrom for a caller that knows the number of the line
// that starts at byte offset from (line, from 1): the file is read from
// there on, and the part before it is not read at all. A file that cannot
// seek (a compressed one) is counted through as ReadFileFrom does.
func ReadFileAt(ctx context.Context, path string, f Format, from int64, line int, fn func(*Record) error) error {
	if from <= 0 || line < 1 {
		return ReadFileFrom(ctx, path, f, from, fn)
	}
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	s, ok := fh.(io.Seeker)
	if !ok {
		rd, err := jsonl.SkipTo(fh, from)
		if err != nil {
			return err
		}
		return readLines(ctx, rd, f, fn)
	}
	if _, err := s.Seek(from, io.SeekStart); err != nil {
		return err
	}
	rd := jsonl.NewReader(fh)
	rd.StartAt(from, line-1)
	return readLines(ctx, rd, f, fn)
}

// --- detection ---

var (
	uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
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
// Each home votes on each of the first lines: a Sure vote decides at once;
// otherwise the agent with the most Likely votes wins (ties go to the home
// listed first by Homes), and a Sure vote of the path's layout wins over
// Likely votes of the content.
func Detect(path string, rd io.Reader) (Agent, error) {
	hs := Homes()
	votes := make([]int, len(hs))
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
		raw := l.Raw
		if l.RawControl {
			raw = jsonl.Strict(raw)
		}
		var top map[string]json.RawMessage
		if Unmarshal(raw, &top) != nil {
			continue
		}
		enough := false
		for i, h := range hs {
			switch h.Sniff(top) {
			case Sure:
				return h.Agent(), nil
			case Likely:
				votes[i]++
				enough = enough || votes[i] >= 3
			}
		}
		if enough {
			break
		}
	}
	best, bestN := -1, 0
	for i := range hs {
		if votes[i] > bestN {
			best, bestN = i, votes[i]
		}
	}
	byPath := pathAgent(path, Sure)
	switch {
	case best < 0:
		return pathHint(path), nil
	case byPath != Unknown && votes[indexOf(hs, byPath)] == 0:
		// content that several agents write, in another agent's store
		return byPath, nil
	}
	return hs[best].Agent(), nil
}

func indexOf(hs []Home, a Agent) int {
	for i, h := range hs {
		if h.Agent() == a {
			return i
		}
	}
	return -1
}

// pathHint guesses from the path alone (used for empty or unreadable files).
func pathHint(path string) Agent { return pathAgent(path, Likely) }

// pathAgent is the first home whose layout votes at least min for path.
func pathAgent(path string, min Vote) Agent {
	for _, h := range Homes() {
		if h.PathVote(path) >= min {
			return h.Agent()
		}
	}
	return Unknown
}

// --- small decoding helpers shared by the homes ---

// ParseTime parses an RFC 3339 timestamp; the zero time when it is not one.
func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t
	}
	return time.Time{}
}

// FlexInt decodes an integer that may be written as a number, a numeric
// string or null; anything else (and negatives) leaves OK false.
type FlexInt struct {
	V  int64
	OK bool
}

// UnmarshalJSON implements json.Unmarshaler; it never fails.
func (f *FlexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if Unmarshal(b, &s) != nil {
			return nil
		}
		// The string's content was never validated as JSON: encoding/json
		// holds it to the number grammar, where goccy takes "000".
		var n json.Number
		if json.Unmarshal([]byte(s), &n) != nil {
			return nil
		}
		f.set(n)
		return nil
	}
	var n json.Number
	if Unmarshal(b, &n) != nil {
		return nil
	}
	f.set(n)
	return nil
}

func (f *FlexInt) set(n json.Number) {
	if i, err := n.Int64(); err == nil && i >= 0 {
		f.V, f.OK = i, true
		return
	}
	if fl, err := n.Float64(); err == nil && fl >= 0 && fl < 1e15 && fl == float64(int64(fl)) {
		f.V, f.OK = int64(fl), true
	}
}

// TextOf renders a JSON value that holds message content as text: a string is
// itself, an array of parts yields its text parts joined by newlines.
func TextOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		Unmarshal(raw, &s)
		return s
	}
	if raw[0] == '[' {
		var parts []struct {
			Type string          `json:"type"`
			Text string          `json:"text"`
			Cont json.RawMessage `json:"content"`
		}
		if Unmarshal(raw, &parts) != nil {
			return ""
		}
		var b strings.Builder
		for _, p := range parts {
			t := p.Text
			if t == "" && len(p.Cont) > 0 {
				t = TextOf(p.Cont)
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

// RawText returns a raw JSON value as text for tool inputs: strings unquoted,
// anything else as its JSON.
func RawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if Unmarshal(raw, &s) == nil {
			return s
		}
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// HasAnyPrefix reports whether s (after leading white space) starts with one
// of the prefixes.
func HasAnyPrefix(s string, prefixes ...string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// IsUUID reports whether s is a UUID in its 8-4-4-4-12 form.
func IsUUID(s string) bool {
	// uuidRe by hand: discovery asks it of every file name and ls of every
	// id (a tenth of a second of regular expressions over 100,000
	// sessions); FuzzIsUUID holds it to uuidRe
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ShortID shortens a session id for tables.
func ShortID(id string) string {
	if len(id) > 8 && IsUUID(id) {
		return id[:8]
	}
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
