package usage

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Scanner is an agent's fast usage reader: the rules of its format for
// which files of a session record usage, and how to read one of them. An
// agent's home implements it (session.As[usage.Scanner]); an agent whose
// home does not records no usage.
//
// A scanner must stay fast, because `stats --all` reads every byte of a
// store: it looks only at the lines that can carry usage (LineReader's
// NextMatch, or a bytes.Contains prefilter) and reads only the fields it
// needs with a Lexer, never decoding a whole line.
type Scanner interface {
	// Classify says what file f of session s is to usage accounting.
	Classify(s *session.Session, f session.File) FileClass
	// ScanUsage reads the recorded usage of one file (of a class with
	// Carries) from lr into fu: requests with their Counted and CCUsage
	// views, rejected lines, corrupt lines, and what the file records of
	// the context (Context, Window, CWD).
	ScanUsage(lr *LineReader, fu *FileUsage) error
}

// FileClass is what a file of a session is to usage accounting; its flags
// combine.
type FileClass uint8

// File classes.
const (
	// Carries: the file records usage (a transcript, a Kimi wire).
	Carries FileClass = 1 << iota
	// Copy: the file is a rotated copy of another file of the session
	// (sessctl's <file>.N, a Kimi wire rotation): its lines may repeat
	// that file's, and a line it repeats is the same request.
	Copy
	// CCUsage: ccusage 20.0.24 reads the file, so its usage is in the
	// ccusage view. ccusage lists "*.jsonl" only, and sessctl reproduces
	// its rules for Claude Code and Codex only.
	CCUsage
	// Gauge: what the file records of the context (size, window, working
	// directory) is the session's: the main transcript, or Kimi's main wire.
	Gauge
)

// Reader reads the recorded usage of files, reusing its buffers from one
// file to the next. A Reader is not safe for concurrent use; give each
// goroutine its own. Its zero value is ready to use.
type Reader struct {
	// MaxLine is the longest line read (longer lines are skipped, counted
	// as corrupt, and listed as possibly holding usage); 0 means
	// jsonl.DefaultMaxLineSize, the bound every sessctl reader uses.
	MaxLine int
	// Big, when set, is shared by the Readers of one run, so that they
	// hold one long line at a time between them.
	Big *BigLines
	// Stream, when set, is given the file's requests a part at a time
	// (StreamPart of them) as the scan makes them, and each part is then
	// dropped: the FileUsage ReadFile returns holds only the last part.
	// Memory then does not grow with the file's number of requests.
	Stream func(*FileUsage)

	buf  []byte
	reqs []Request // a list to fill next, given back by Reuse
	// lines is the last file's FileUsage.lines, emptied, for the next: a
	// map made anew for each file grew through every size to its requests'
	// number (a tenth of a Codex scan went to growing them)
	lines map[uint64]uint32
}

// keptLines is the largest set of lines a Reader keeps for its next file:
// emptying a map takes as long as its size, and one file of many requests
// must not make every later file pay for it.
const keptLines = 1 << 14

// Reuse gives the reader a request list that is no longer needed (a
// FileUsage's Requests once a Ledger has copied them), so that the next
// file fills it instead of allocating one.
func (rd *Reader) Reuse(reqs []Request) {
	if cap(reqs) > cap(rd.reqs) {
		rd.reqs = reqs[:0]
	}
}

// ReadFile reads the recorded usage of one file of class class with sc.
// Memory does not grow with the file, only with its longest line (up to
// MaxLine) and its number of usage records. It stops with ctx.Err() when
// ctx is done.
func (rd *Reader) ReadFile(ctx context.Context, path string, sc Scanner, class FileClass) (*FileUsage, error) {
	fh, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	hint := 0
	if fi, err := fh.Stat(); err == nil && fi.Mode().IsRegular() {
		// about one usage line per 4 KiB of a transcript
		hint = int(min(fi.Size()/4096, 1<<20))
	}
	return rd.read(ctx, fh, path, sc, class, hint)
}

// Read is ReadFile over any reader; path only names the result.
func (rd *Reader) Read(ctx context.Context, r io.Reader, path string, sc Scanner, class FileClass) (*FileUsage, error) {
	return rd.read(ctx, r, path, sc, class, 0)
}

// bufSize is the first size of a Reader's line buffer.
const bufSize = 256 << 10

// read reads one file; hint is the number of requests to make room for.
func (rd *Reader) read(ctx context.Context, r io.Reader, path string, sc Scanner, class FileClass, hint int) (*FileUsage, error) {
	if rd.buf == nil {
		rd.buf = make([]byte, bufSize)
	}
	limit := rd.MaxLine
	if limit <= 0 {
		limit = jsonl.DefaultMaxLineSize
	}
	lr := NewLineReader(ctx, r, rd.buf, limit)
	lr.big = rd.Big
	defer lr.Release()
	fu := &FileUsage{Path: path, Class: class, Context: -1, stream: rd.Stream}
	switch {
	case rd.Stream != nil:
		fu.Requests = make([]Request, 0, StreamPart)
	case rd.reqs != nil:
		fu.Requests, rd.reqs = rd.reqs[:0], nil
	case hint > 0:
		fu.Requests = make([]Request, 0, hint)
	}
	fu.lines, rd.lines = rd.lines, nil
	err := sc.ScanUsage(lr, fu)
	// the lines' counts serve only the scan's Add calls
	if m := fu.lines; m != nil && len(m) <= keptLines {
		clear(m)
		rd.lines = m
	}
	fu.lines = nil
	// a buffer grown for one long line is not kept for the next file
	if len(lr.buf) <= 4*bufSize {
		rd.buf = lr.buf
	}
	fu.Lines = lr.Num()
	fu.Corrupt += lr.TooLong()
	for _, n := range lr.TooLongLines() {
		fu.Reject(n, "line longer than the line limit: skipped unread (it may hold usage)")
	}
	if n := lr.TooLong() - len(lr.TooLongLines()); n > 0 {
		fu.RejectedCount += n
	}
	if d := lr.Damage(); d != nil {
		// the line the damage cut (a torn last line), or the one after the last
		at := lr.Num() + 1
		if lr.Torn() {
			at = lr.Num()
		}
		fu.Corrupt++
		fu.Reject(at, fmt.Sprintf("compressed stream damaged at byte %d of the content (%v): the rest of the file cannot be read", d.Offset, d.Err))
	}
	return fu, err
}

// ViewsExplainer is implemented by scanners that count per-response usage
// records where the file has them (FileUsage.PerResponse) while ccusage's
// view reads cumulative counters: it says in words why the two views of a
// session differ.
type ViewsExplainer interface {
	// ExplainViews says why records per-response records adding up to
	// perResponse tokens differ from the cumulative view's cumulative.
	ExplainViews(records int, perResponse, cumulative int64) string
}

// Explainer is implemented by scanners whose usage lives in files that a
// session may lack (Kimi's wire.jsonl), to say so when a session has none.
type Explainer interface {
	// WhereUsage says where the agent records usage.
	WhereUsage() string
}

// Transcripts classifies the files of an agent whose usage is in its
// transcripts (Claude Code, Codex, clawdcode): the main file's context is
// the session's, subagents' transcripts record usage too, and sessctl's
// rotations of either (<file>.N) are copies. also is added to the class of
// the main and subagent *.jsonl files: CCUsage for an agent whose ccusage
// view sessctl reproduces (ccusage lists *.jsonl, so never a rotation).
func Transcripts(f session.File, also FileClass) FileClass {
	switch {
	case f.Dir:
		return 0
	case f.Role == session.FileRotation:
		return Carries | Copy
	case !strings.HasSuffix(jsonl.PlainName(f.Path), ".jsonl"):
		return 0
	case f.Role == session.FileMain:
		return Carries | Gauge | also
	case f.Role == session.FileSubagent:
		return Carries | also
	}
	return 0
}
