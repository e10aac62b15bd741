// Package search finds text in what sessions say: the live history a
// client would send on resume (pkg/show's items), or with All also what it
// no longer sends (rolled back, compacted away, off the chain, only in a
// rotation), marked.
//
// A file is read in two steps. A cheap scan of its raw bytes looks for the
// pattern first (for a literal pattern whose bytes a client writes as they
// are in JSON: no quote, backslash or control character); only a file with
// a possible hit is decoded, and the hits are then the items whose text
// matches. Regular expressions, and case-insensitive patterns that are not
// ASCII, skip the scan. Sessions are searched in parallel, one per core,
// and reported in the order they were given.
package search

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/show"
)

// Options say what to look for.
type Options struct {
	Pattern    string
	Regexp     bool // Pattern is a regular expression (Go RE2 syntax)
	IgnoreCase bool
	// All also searches what the client no longer sends, and rotations.
	All bool
	// Context is how many characters of the item are shown on each side
	// of the match (SnippetContext when 0).
	Context int
}

// SnippetContext is the default width of a snippet on each side of a match.
const SnippetContext = 60

// Hit is one item that matches.
type Hit struct {
	Agent   session.Agent `json:"agent"`
	Session string        `json:"session"` // the full session id
	Main    string        `json:"main"`    // the session's live file
	File    string        `json:"file"`    // the file the item is in
	Line    int           `json:"line"`
	Turn    int           `json:"turn"` // as checkpoints numbers it
	Role    string        `json:"role"`
	Type    string        `json:"type"` // text, tool_call, tool_result, summary
	Name    string        `json:"name,omitempty"`
	State   session.State `json:"state"`
	// Snippet is the part of the item's text around the first match, on
	// one line; the match is Snippet[MatchStart:MatchEnd] (bytes). Before
	// and After say whether the text goes on past the snippet.
	Snippet    string `json:"snippet"`
	MatchStart int    `json:"match_start"`
	MatchEnd   int    `json:"match_end"`
	Before     bool   `json:"cut_before,omitempty"`
	After      bool   `json:"cut_after,omitempty"`
	// Matches is how many times the pattern occurs in the item.
	Matches int `json:"matches"`
}

// Matcher is a compiled pattern.
type Matcher struct {
	re *regexp.Regexp
	// lit is the pattern to look for in raw bytes, nil when raw bytes
	// cannot be searched
	lit []byte
	// esc is lit as a writer with ensure_ascii writes it (Kimi CLI's
	// Python: \uXXXX, lowercase hex, surrogate pairs), nil for an ASCII
	// pattern; a line may match when it holds either
	esc []byte
	// litF and escF find lit and esc
	litF, escF *finder
	// foldF finds an ASCII literal with -i, in the raw bytes (when lit is
	// set) and in the items' text; nil otherwise
	foldF *foldFinder
	// segF finds the longest part of a -i literal with a k or an s that
	// has neither: whatever character matches the k or the s (U+212A,
	// U+017F, raw or escaped), a raw match holds that part as it is, so
	// the bytes without it are skipped by one scan. Nil when there is
	// no such part.
	segF *foldFinder
	// span is the longest a raw match can be: the k and s escaped as
	// \u212a and \u017f
	span int
	ctx  int
	// decodeAll has the home decode every line, not only those holding
	// the pattern (tests hold the two ways to the same hits)
	decodeAll bool
	// liveMaps keeps the homes' live maps of the files searched (the
	// index), nil when none does
	liveMaps session.LiveMapCache
}

// WithLiveMaps has the search keep the homes' live maps of the files it
// searches in c (session.HistoryOptions.LiveMaps: the index), so that a
// later search reads only the lines that hold the pattern.
func (m *Matcher) WithLiveMaps(c session.LiveMapCache) { m.liveMaps = c }

// Compile compiles the options' pattern.
func Compile(opt Options) (*Matcher, error) {
	if opt.Pattern == "" {
		return nil, fmt.Errorf("an empty pattern matches everything")
	}
	expr := opt.Pattern
	if !opt.Regexp {
		expr = regexp.QuoteMeta(expr)
	}
	if opt.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression: %w", err)
	}
	m := &Matcher{re: re, ctx: opt.Context}
	if m.ctx <= 0 {
		m.ctx = SnippetContext
	}
	if !opt.Regexp && opt.IgnoreCase && ascii(opt.Pattern) {
		m.foldF = newFoldFinder([]byte(opt.Pattern))
		m.span = len(opt.Pattern)
		if m.foldF.odd {
			var seg []byte
			for _, part := range bytes.FieldsFunc(m.foldF.lit, func(r rune) bool { return r == 'k' || r == 's' }) {
				if len(part) > len(seg) {
					seg = part
				}
			}
			if seg != nil {
				m.segF = newFoldFinder(seg)
			}
			m.span += (len(`\u212a`) - 1) * (bytes.Count(m.foldF.lit, []byte("k")) + bytes.Count(m.foldF.lit, []byte("s")))
		}
	}
	if !opt.Regexp && rawSafe(opt.Pattern) && (!opt.IgnoreCase || ascii(opt.Pattern)) {
		m.lit = []byte(opt.Pattern)
		if !opt.IgnoreCase {
			m.litF = newFinder(m.lit)
		}
		if !ascii(opt.Pattern) {
			m.esc = asciiEscaped(opt.Pattern)
			m.escF = newFinder(m.esc)
		}
	}
	return m, nil
}

// rawSafe reports whether a client writes s into its JSON lines as it is:
// no quote, backslash, control character or U+2028/9 (which some writers
// escape).
func rawSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// asciiEscaped writes s as JSON with ensure_ascii does: every non-ASCII
// character as \uXXXX (lowercase hex), beyond U+FFFF as a surrogate pair.
// s holds no character JSON escapes otherwise (rawSafe).
func asciiEscaped(s string) []byte {
	var b []byte
	for _, r := range s {
		if r < 0x80 {
			b = append(b, byte(r))
			continue
		}
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			b = fmt.Appendf(b, "\\u%04x\\u%04x", r1, r2)
			continue
		}
		b = fmt.Appendf(b, "\\u%04x", r)
	}
	return b
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// MayMatch reports whether the file at path may hold a match, by a scan of
// its raw bytes (true when the pattern cannot be looked for that way).
// Memory is one buffer, whatever the file.
func (m *Matcher) MayMatch(ctx context.Context, path string) (bool, error) {
	if m.lit == nil {
		return true, nil
	}
	f, err := jsonl.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return m.mayMatch(ctx, f)
}

const scanBuf = 1 << 20

func (m *Matcher) mayMatch(ctx context.Context, r io.Reader) (bool, error) {
	keep := max(len(m.lit), len(m.esc)) - 1
	if m.foldF != nil && m.foldF.odd {
		// a match with U+212A or U+017F whole in one read, its part
		// without k and s with it
		keep = max(keep, m.span-1)
	}
	bp := scanBufs.Get().(*[]byte)
	if cap(*bp) < scanBuf+keep {
		*bp = make([]byte, scanBuf+keep)
	}
	defer scanBufs.Put(bp)
	buf := (*bp)[:scanBuf+keep]
	have := 0 // bytes carried over from the last read
	for n := 0; ; n++ {
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		k, err := io.ReadFull(r, buf[have:])
		chunk := buf[:have+k]
		if m.rawMay(chunk) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if keep > 0 && len(chunk) >= keep {
			have = copy(buf, chunk[len(chunk)-keep:])
		}
	}
}

// lineMay reports whether one raw line may hold a match (the scan of
// mayMatch, line by line: an item whose line does not hold the pattern's
// bytes cannot match).
func (m *Matcher) lineMay(raw []byte) bool { return m.rawMay(raw) }

// rawMay reports whether raw bytes may hold a match: they hold the
// literal, or its ensure_ascii form; with -i, ASCII case folded, or a
// character other than ASCII that folds to a letter of the pattern.
func (m *Matcher) rawMay(b []byte) bool {
	if f := m.foldF; f != nil {
		if !f.odd {
			return in(f, b)
		}
		if m.segF != nil && !in(m.segF, b) {
			return false
		}
		return in(f, b) || oddRaw(b)
	}
	return m.litF.in(b) || m.escF != nil && m.escF.in(b)
}

// scanBufs keeps mayMatch's buffers for the next files (one per core at a
// time): a fresh one per file was a megabyte to allocate and clear.
var scanBufs = sync.Pool{New: func() any { return new([]byte) }}

// Match looks for the pattern in an item's text and makes the hit's
// snippet; ok is false when it does not occur.
func (m *Matcher) Match(text string) (h Hit, ok bool) {
	locs := m.findAll(text)
	if len(locs) == 0 {
		return h, false
	}
	// an empty match (a regexp like "x*") is a match of nothing: skip it
	first := -1
	for i, l := range locs {
		if l[1] > l[0] {
			first = i
			break
		}
	}
	if first < 0 {
		return h, false
	}
	h.Matches = len(locs)
	s, e := locs[first][0], locs[first][1]
	from := backRunes(text, s, m.ctx)
	to := fwdRunes(text, e, m.ctx)
	snip := text[from:to]
	// one line: newlines and tabs become spaces (byte for byte, so the
	// match offsets stay)
	b := []byte(snip)
	for i, c := range b {
		if c == '\n' || c == '\r' || c == '\t' {
			b[i] = ' '
		}
	}
	h.Snippet, h.MatchStart, h.MatchEnd = string(b), s-from, e-from
	h.Before, h.After = from > 0, to < len(text)
	return h, true
}

// findAll is m.re.FindAllStringIndex(text, -1). With -i and an ASCII
// literal it is found by foldFinder, unless the pattern has a k or an s
// and the text holds U+212A or U+017F: the regular expression decides
// then.
func (m *Matcher) findAll(text string) [][]int {
	f := m.foldF
	if f == nil || f.odd && oddText(text) {
		return m.re.FindAllStringIndex(text, -1)
	}
	var locs [][]int
	for i := 0; ; {
		j := index(f, text, i)
		if j < 0 {
			return locs
		}
		i = j + len(f.lit)
		locs = append(locs, []int{j, i})
	}
}

func backRunes(s string, i, n int) int {
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

func fwdRunes(s string, i, n int) int {
	for ; n > 0 && i < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// Session searches one session and calls fn for every hit, in the order
// of show (live items in send order; with All, rotations first, then the
// main file in file order).
func (m *Matcher) Session(ctx context.Context, s *session.Session, all bool, fn func(*Hit) error) error {
	may := false
	files := []string{s.Main}
	if all {
		for _, f := range s.FilesWithRole(session.FileRotation) {
			files = append(files, f.Path)
		}
	}
	for _, p := range files {
		ok, err := m.MayMatch(ctx, p)
		if err != nil {
			return err
		}
		if ok {
			may = true
			break
		}
	}
	if !may {
		return nil
	}
	opt := show.Options{All: all}
	if m.lit != nil && !m.decodeAll {
		opt.Want, opt.LiveMaps = m.lineMay, m.liveMaps
	}
	return show.Show(ctx, s, opt, func(it *show.Item) error {
		h, ok := m.Match(it.Text)
		if !ok {
			return nil
		}
		h.Agent, h.Session, h.Main = s.Agent, s.ID, s.Main
		h.File, h.Line, h.Turn, h.Role, h.Type, h.Name, h.State = it.File, it.Line, it.Turn, it.Role, it.Type, it.Name, it.State
		return fn(&h)
	})
}

// Result is what searching one session gave.
type Result struct {
	Session *session.Session
	Hits    []Hit
	// More is how many hits past MaxHitsPerSession were not kept.
	More int
	Err  error
}

// MaxHitsPerSession bounds the hits kept of one session while it waits for
// its turn to be reported.
const MaxHitsPerSession = 10000

// All searches the sessions on every core and calls fn with each session's
// result in the order given (a session with no hit too, so that a caller
// can show progress). It stops at the first error fn returns, or when ctx
// is done.
func (m *Matcher) All(ctx context.Context, ss []*session.Session, all bool, fn func(Result) error) error {
	ctx, cancel := context.WithCancel(ctx)
	workers := min(runtime.GOMAXPROCS(0), max(len(ss), 1))
	results := make([]chan Result, len(ss))
	for i := range results {
		results[i] = make(chan Result, 1)
	}
	next := make(chan int)
	// at most window sessions are searched ahead of the one reported next,
	// so that the hits waiting for their turn stay bounded
	window := make(chan struct{}, workers*4)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := Result{Session: ss[i]}
				r.Err = m.Session(ctx, ss[i], all, func(h *Hit) error {
					if len(r.Hits) < MaxHitsPerSession {
						r.Hits = append(r.Hits, *h)
					} else {
						r.More++
					}
					return nil
				})
				results[i] <- r
			}
		}()
	}
	// the files of the sessions about to be searched are asked of the
	// disk ahead, a few at a time (readAhead): with the page cache cold,
	// the workers otherwise waited on one read each
	ahead := make(chan int, workers*16)
	wg.Add(1)
	go func() {
		defer wg.Done() // ahead is closed with next: All waits for this too
		for i := range ahead {
			if ctx.Err() == nil {
				readAheadSession(ss[i], all)
			}
		}
	}()
	go func() {
		defer close(next)
		defer close(ahead)
		for j := range min(workers*16, len(ss)) {
			ahead <- j
		}
		for i := range ss {
			if j := i + workers*16; j < len(ss) {
				select {
				case ahead <- j:
				default: // the disk is behind: no further ahead
				}
			}
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		cancel() // the feeder and the workers stop
		wg.Wait()
	}()
	for i := range ss {
		select {
		case r := <-results[i]:
			<-window
			if err := fn(r); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// readAheadSession reads ahead the files Session reads first: the main
// file, and with all the rotations. A file under readAheadMin (its size as
// discovery found it) is left to the kernel: one read brings it, and on a
// warm page cache the open, fstat and fadvise of each were only cost
// (over 100,000 sessions, 0.4 s of system time).
func readAheadSession(s *session.Session, all bool) {
	for _, f := range s.Files {
		if f.Dir || f.Size < readAheadMin {
			continue
		}
		if f.Path == s.Main || all && f.Role == session.FileRotation {
			readAhead(f.Path)
		}
	}
}

// readAheadMin is the size from which a file is read ahead.
const readAheadMin = 256 << 10

// Resumer is what an agent's home knows of resuming one of its sessions
// in its own client.
type Resumer interface {
	// ResumeCommand is the command line that resumes session s, and
	// whether it must run in the session's working directory.
	ResumeCommand(s *session.Session) (argv []string, inDir bool)
}

// Resume is how to resume a session: run Argv in Dir ("" when any
// directory will do, or when the directory is not known).
type Resume struct {
	Dir  string   `json:"dir,omitempty"`
	Argv []string `json:"argv"`
}

// ResumeOf says how to resume s, or nil when its agent's home does not.
func ResumeOf(s *session.Session) *Resume {
	r, ok := session.As[Resumer](s.Agent)
	if !ok {
		return nil
	}
	argv, inDir := r.ResumeCommand(s)
	if argv == nil {
		return nil
	}
	res := &Resume{Argv: argv}
	if inDir {
		res.Dir = session.HeadCWD(s)
		if res.Dir == "" && strings.HasPrefix(s.Project, "/") {
			res.Dir = s.Project
		}
	}
	return res
}
