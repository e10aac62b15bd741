package session

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// Summary is what ls shows of a session beyond its files.
type Summary struct {
	Title string
	// TitleSource says where the title came from: custom_title, ai_title,
	// thread_name, summary, first_prompt or "" when there is none.
	TitleSource string
	CWD         string
	Records     int // non-blank lines of the main transcript
	Corrupt     int // corrupt lines in the main and subagent transcripts
	Started     time.Time
}

// Summarize reads what ls needs: one streaming pass over the main transcript
// (lines are validated, but only the few that can carry a title or the working
// directory are decoded) and the subagent transcripts for corrupt lines.
func Summarize(s *Session) (Summary, error) { return SummarizeWith(s, nil) }

// FileSummaries reads the part of a Summary that each file holds.
// SummarizeWith reads the files itself when given nil; an on-disk cache
// (pkg/index) gives one that skips the files it has read before.
type FileSummaries interface {
	// FileSummary is ReadFileSummary's summary at the end of the file.
	// f is the file as discovery found it (a cache may know it by its
	// Identity without a stat of its own).
	FileSummary(a Agent, f File, mode SummaryMode) (FileSummary, error)
	// FirstPrompt is the first user prompt of the file ("" for none).
	FirstPrompt(a Agent, f File) string
}

// SummaryMode says what a FileSummary is read for.
type SummaryMode uint8

// Summary modes.
const (
	// MainSummary: everything of a main transcript.
	MainSummary SummaryMode = iota
	// CorruptOnly: only Lines and Corrupt (a subagent transcript).
	CorruptOnly
)

// FileSummary is what Summarize learns from one transcript. It is read in
// one pass, line after line, so that the summary of a file that only grew
// is its summary at its old end continued over the new lines.
type FileSummary struct {
	Lines   int // lines read: the next line is number Lines+1
	Records int // non-blank lines
	Corrupt int
	CWD     string
	Started time.Time
	// the latest title records, and the first user prompt (not of a
	// sidechain)
	CustomTitle, AITitle, SummaryTitle, FirstPrompt string
}

// SummarizeWith is Summarize with the files' summaries from src (nil: read
// them).
func SummarizeWith(s *Session, src FileSummaries) (Summary, error) {
	var sum Summary
	if FormatFor(s.Agent) == nil {
		return sum, nil
	}
	if src == nil {
		src = Direct
	}
	var custom, threadName string
	if ts, ok := As[TitleSource](s.Agent); ok {
		switch t, src := ts.SideTitle(s); src {
		case "custom_title":
			custom = t
		case "thread_name":
			threadName = t
		}
	}
	fs, err := src.FileSummary(s.Agent, s.MainFile(), MainSummary)
	sum.Records, sum.Corrupt, sum.CWD, sum.Started = fs.Records, fs.Corrupt, fs.CWD, fs.Started
	if err != nil {
		return sum, err
	}
	if fs.CustomTitle != "" {
		custom = fs.CustomTitle
	}
	first := fs.FirstPrompt
	if first == "" {
		// after a compaction (Kimi's own, or a rewrite that rotated the
		// original) the first real input is in the oldest rotation
		if rots := s.FilesWithRole(FileRotation); len(rots) > 0 {
			first = src.FirstPrompt(s.Agent, rots[0])
		}
	}
	for _, sf := range s.FilesWithRole(FileSubagent) {
		sub, _ := src.FileSummary(s.Agent, sf, CorruptOnly)
		sum.Corrupt += sub.Corrupt
	}
	for _, c := range []struct{ title, src string }{
		{custom, "custom_title"}, {fs.AITitle, "ai_title"}, {threadName, "thread_name"},
		{first, "first_prompt"}, {fs.SummaryTitle, "summary"},
	} {
		if t := OneLine(c.title); t != "" {
			sum.Title, sum.TitleSource = t, c.src
			break
		}
	}
	if s.Project == "" {
		s.Project = sum.CWD
	}
	return sum, nil
}

// Direct is the FileSummaries that reads every file.
var Direct FileSummaries = direct{}

type direct struct{}

func (direct) FileSummary(a Agent, f File, mode SummaryMode) (FileSummary, error) {
	end, _, _, err := ReadFileSummary(a, f.Path, mode, FileSummary{}, 0)
	return end, err
}

func (direct) FirstPrompt(a Agent, file File) string {
	if f := FormatFor(a); f != nil {
		return firstPrompt(file.Path, f)
	}
	return ""
}

// ReadFileSummary continues sum, the summary of the file at path up to
// byte offset from (0: none read), over the rest of the file. It returns the
// summary at the end of the file, and the summary at the end of the file's
// last complete line with that line's end offset: the state to continue
// from once the file has grown (a last line without a newline may still be
// being written). A compressed file is read whole, and its resumeAt is 0.
func ReadFileSummary(a Agent, path string, mode SummaryMode, sum FileSummary, from int64) (end, resume FileSummary, resumeAt int64, err error) {
	f := FormatFor(a)
	if f == nil {
		return sum, sum, 0, nil
	}
	titles, _ := As[TitleRecords](a)
	fh, err := jsonl.Open(path)
	if err != nil {
		return sum, sum, 0, err
	}
	defer fh.Close()
	compressed := jsonl.IsCompressedName(path)
	if compressed || from < 0 {
		sum, from = FileSummary{}, 0
	}
	if from > 0 {
		sk, ok := fh.(io.Seeker)
		if !ok {
			sum, from = FileSummary{}, 0
		} else if _, err := sk.Seek(from, io.SeekStart); err != nil {
			return sum, sum, 0, err
		}
	}
	r := jsonl.NewPooledReader(fh)
	defer r.Release()
	r.StartAt(from, sum.Lines)
	resume, resumeAt = sum, from
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, resume, resumeAt, err
		}
		sum.Lines = l.Num
		if mode == CorruptOnly {
			if l.Status.Corrupt() {
				sum.Corrupt++
			}
		} else {
			sum.line(f, titles, l)
		}
		if l.EOL != jsonl.NoEOL {
			resume, resumeAt = sum, l.End()
		}
	}
	if compressed {
		resumeAt = 0
	}
	return sum, resume, resumeAt, nil
}

// line adds one line of a main transcript.
func (sum *FileSummary) line(f Format, titles TitleRecords, l *jsonl.Line) {
	if l.Status == jsonl.Blank {
		return
	}
	sum.Records++
	if l.Status.Corrupt() {
		sum.Corrupt++
		return
	}
	// decode only what can still tell something: lines until the first
	// prompt, the head for the working directory and start time, and
	// Claude's title records
	need := sum.FirstPrompt == "" || (l.Num <= headLines && (sum.CWD == "" || sum.Started.IsZero()))
	if !need && titles != nil {
		need = titles.MayHoldTitle(l.Raw)
	}
	if !need {
		return
	}
	r := Decode(f, l)
	if sum.CWD == "" && r.CWD != "" {
		sum.CWD = r.CWD
	}
	if sum.Started.IsZero() && !r.Timestamp.IsZero() {
		sum.Started = r.Timestamp
	}
	switch {
	case r.Type == "custom-title" && r.Title != "":
		sum.CustomTitle = r.Title
	case r.Type == "ai-title" && r.Title != "":
		sum.AITitle = r.Title
	case r.Type == "summary" && r.Title != "":
		sum.SummaryTitle = r.Title
	case sum.FirstPrompt == "" && r.UserPrompt && !r.Sidechain:
		sum.FirstPrompt = r.Prompt
	}
}

// headLines is how far Summarize looks for a working directory and a start
// time.
const headLines = 50

func firstPrompt(path string, f Format) string {
	var out string
	fh, err := jsonl.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	ReadRecords(fh, f, func(r *Record) error {
		if r.UserPrompt {
			out = r.Prompt
			return jsonl.ErrStop
		}
		return nil
	})
	return out
}

// OneLine collapses white space so that a text fits one table cell.
func OneLine(s string) string {
	if oneLine(s) {
		return s // nothing to collapse: no copy (ls collapses 100,000 titles)
	}
	return collapse(s)
}

// collapse is strings.Join(strings.Fields(s), " ") in one pass and one
// string: ls made a list of words, then joined them, for each title that
// had a newline in it (364 MB of garbage in a first run over 100,000
// sessions).
func collapse(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false // white space since the last word
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				pending = true
				i++
				continue
			}
			if pending && b.Len() > 0 {
				b.WriteByte(' ')
			}
			pending = false
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			pending = true
		} else {
			if pending && b.Len() > 0 {
				b.WriteByte(' ')
			}
			pending = false
			b.WriteString(s[i : i+n]) // an invalid byte as it was, as Fields keeps it
		}
		i += n
	}
	return b.String()
}

// oneLine reports whether s is already what OneLine makes of it: no white
// space at either end, none but single ASCII spaces inside.
func oneLine(s string) bool {
	space := true // at the start, a space is not allowed
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			// non-ASCII white space (U+0085, U+00A0, U+1680, U+2000…U+205F,
			// U+3000) starts with one of these bytes; the rest (CJK, most
			// accented letters) need no decoding
			if c == 0xc2 || c == 0xe1 || c == 0xe2 || c == 0xe3 {
				r, _ := utf8.DecodeRuneInString(s[i:])
				if unicode.IsSpace(r) {
					return false
				}
			}
			space = false
		case c == ' ':
			if space {
				return false
			}
			space = true
		case c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			return false
		default:
			space = false
		}
	}
	return !space || s == ""
}

// PreviewLen is how many runes a preview of a prompt keeps (checkpoints,
// Turn.Prompt).
const PreviewLen = 200

// Preview is OneLine(s) cut to at most n runes, the cut marked with "…".
// It reads s only as far as the preview needs and builds nothing bigger
// than the preview: a prompt can be a 20 MB paste, and collapsing and
// converting all of it to runes cost stats about 7× its size (issue 11).
func Preview(s string, n int) string {
	// bytes, not runes, are copied: a preview is on every prompt of every
	// file the first search of a store reads (it was 6 % of its CPU time
	// with a strings.Builder, a decode and a write per rune)
	b := make([]byte, 0, min(len(s), 4*n))
	runes, space := 0, false // runes written; a space is due before the next field
	cut := 0                 // len(b) once n-1 runes were written
	for i := 0; i < len(s); {
		c, size := s[i], 1
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				space = len(b) > 0
				i++
				continue
			}
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				space = len(b) > 0
				i += size
				continue
			}
		}
		if runes == n || space && runes+1 == n {
			// more than n runes: the first n-1, then the mark (as
			// runes, as it always was: a byte that is not UTF-8
			// becomes U+FFFD there)
			if !utf8.Valid(b[:cut]) {
				return string([]rune(string(b[:cut]))) + "…"
			}
			return string(b[:cut]) + "…"
		}
		if space {
			b = append(b, ' ')
			if runes++; runes == n-1 {
				cut = len(b)
			}
			space = false
		}
		b = append(b, s[i:i+size]...)
		if runes++; runes == n-1 {
			cut = len(b)
		}
		i += size
	}
	return string(b)
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// HeadCWD returns the working directory recorded in the first lines of the
// session's main transcript, or "" (Kimi's context files record none). It
// reads at most headLines lines of at most 1 MiB each, so that grouping a
// whole store by project costs one small read per session.
func HeadCWD(s *Session) string {
	return HeadField(s, []byte(`cwd`), func(r *Record) string { return r.CWD })
}

// ReadHeads calls read on every session of ss, a few at a time side by
// side (reading a head is mostly waiting for the disk: a store of 100,000
// sessions is 100,000 files to open), and returns what each gave. It stops
// starting new reads when ctx is done.
func ReadHeads(ctx context.Context, ss []*Session, read func(*Session) string) []string {
	out := make([]string, len(ss))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0)+2, len(ss)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(ss) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				out[i] = read(ss[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// HeadField returns the first non-empty field of the records in the first
// lines of the session's main transcript, or "": HeadCWD's read, for any
// field of a Record. Only the lines that hold hint are decoded.
func HeadField(s *Session, hint []byte, field func(*Record) string) string {
	f := FormatFor(s.Agent)
	if f == nil {
		return ""
	}
	fh, err := jsonl.Open(s.Main)
	if err != nil {
		return ""
	}
	defer fh.Close()
	// a small buffer: a store's every session head may be read, and a
	// longer line is still read whole
	r := jsonl.NewReaderSize(fh, 8<<10)
	r.MaxLineSize = 1 << 20
	for i := 0; i < headLines; i++ {
		l, err := r.Next()
		if err != nil {
			return ""
		}
		if l.Status != jsonl.OK || !bytes.Contains(l.Raw, hint) {
			continue
		}
		rec := Decode(f, l)
		if v := field(&rec); v != "" {
			return v
		}
	}
	return ""
}
