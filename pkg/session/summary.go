package session

import (
	"bytes"
	"io"
	"strings"
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
func Summarize(s *Session) (Summary, error) {
	var sum Summary
	f := FormatFor(s.Agent)
	if f == nil {
		return sum, nil
	}
	var custom, ai, summaryTitle, first, threadName string
	if ts, ok := As[TitleSource](s.Agent); ok {
		switch t, src := ts.SideTitle(s); src {
		case "custom_title":
			custom = t
		case "thread_name":
			threadName = t
		}
	}
	titles, _ := As[TitleRecords](s.Agent)
	err := scanFile(s.Main, func(l *jsonl.Line) {
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
		need := first == "" || (l.Num <= headLines && (sum.CWD == "" || sum.Started.IsZero()))
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
			custom = r.Title
		case r.Type == "ai-title" && r.Title != "":
			ai = r.Title
		case r.Type == "summary" && r.Title != "":
			summaryTitle = r.Title
		case first == "" && r.UserPrompt && !r.Sidechain:
			first = r.Prompt
		}
	})
	if err != nil {
		return sum, err
	}
	if first == "" {
		// after a compaction (Kimi's own, or a rewrite that rotated the
		// original) the first real input is in the oldest rotation
		if rots := s.FilesWithRole(FileRotation); len(rots) > 0 {
			first = firstPrompt(rots[0].Path, f)
		}
	}
	for _, sf := range s.FilesWithRole(FileSubagent) {
		scanFile(sf.Path, func(l *jsonl.Line) {
			if l.Status.Corrupt() {
				sum.Corrupt++
			}
		})
	}
	for _, c := range []struct{ title, src string }{
		{custom, "custom_title"}, {ai, "ai_title"}, {threadName, "thread_name"},
		{first, "first_prompt"}, {summaryTitle, "summary"},
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

// headLines is how far Summarize looks for a working directory and a start
// time.
const headLines = 50

// scanFile calls fn for every line of a file, with a read buffer no larger
// than the file (ls opens thousands of small files).
func scanFile(path string, fn func(*jsonl.Line)) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	size := 64 << 10
	if fi, err := fh.Stat(); err == nil && fi.Size() < int64(size) {
		size = int(fi.Size()) + 16
	}
	r := jsonl.NewReaderSize(fh, size)
	for {
		l, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fn(l)
	}
}

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
	return strings.Join(strings.Fields(s), " ")
}

// PreviewLen is how many runes a preview of a prompt keeps (checkpoints,
// Turn.Prompt).
const PreviewLen = 200

// Preview is OneLine(s) cut to at most n runes, the cut marked with "…".
// It reads s only as far as the preview needs and builds nothing bigger
// than the preview: a prompt can be a 20 MB paste, and collapsing and
// converting all of it to runes cost stats about 7× its size (issue 11).
func Preview(s string, n int) string {
	var b strings.Builder
	runes, space := 0, false // runes written; a space is due before the next field
	for i, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if runes == n || space && runes+1 == n {
			// more than n runes: the first n-1, then the mark
			kept := []rune(b.String())
			return string(kept[:n-1]) + "…"
		}
		if space {
			b.WriteByte(' ')
			runes++
			space = false
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		runes++
	}
	return b.String()
}

// HeadCWD returns the working directory recorded in the first lines of the
// session's main transcript, or "" (Kimi's context files record none). It
// reads at most headLines lines of at most 1 MiB each, so that grouping a
// whole store by project costs one small read per session.
func HeadCWD(s *Session) string {
	f := FormatFor(s.Agent)
	if f == nil {
		return ""
	}
	fh, err := jsonl.Open(s.Main)
	if err != nil {
		return ""
	}
	defer fh.Close()
	r := jsonl.NewReader(fh)
	r.MaxLineSize = 1 << 20
	for i := 0; i < headLines; i++ {
		l, err := r.Next()
		if err != nil {
			return ""
		}
		if l.Status != jsonl.OK || !bytes.Contains(l.Raw, []byte(`cwd`)) {
			continue
		}
		if rec := Decode(f, l); rec.CWD != "" {
			return rec.CWD
		}
	}
	return ""
}
