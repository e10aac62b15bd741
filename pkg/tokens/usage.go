package tokens

import (
	"bytes"
	"io"
	"sort"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Recorded usage: what the model API reported for each request, totalled by
// each format's own rules (tokens.md §4). This is the number bills are made
// of, and the one ccusage sums; it is never mixed with estimates or with
// context gauges.

// MaxRequestTokens bounds one usage field of one request. A larger value is
// not a real API report (no model has a window near it) and the line is
// rejected rather than allowed to dwarf every real number.
const MaxRequestTokens = 1_000_000_000

// Request is the recorded usage of one model request. It holds no
// pointers, so that the long lists of them cost the garbage collector
// nothing: its model is an id into the table of the FileUsage that holds
// it, or of the Ledger once added there (FileUsage.Model, Ledger.Model).
type Request struct {
	Usage session.Usage
	Model ModelID
	// Time is the request's timestamp in Unix milliseconds, 0 when unknown.
	Time int64
	// Line is the 1-based line number in the file that recorded it.
	Line int32
	// File numbers the file among those added to a Ledger, in the order
	// of the Add calls (0 for the first).
	File int32

	key, msgKey uint64 // Claude dedupe keys (message.id+requestId, message.id); 0 = none
	sidechain   bool
	speed       bool // the usage carried a speed field (ccusage's last tie-break)

	// counted says whether sessctl counts the request; ccusage says whether
	// ccusage 20.0.24 would (it silently drops some lines, see Drop).
	counted, ccusage bool
}

// Drop is why a line that carries usage is not counted by sessctl, or by
// ccusage.
type Drop struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// FileUsage is what one pass over one file found.
type FileUsage struct {
	Path  string
	Agent session.Agent
	// Requests in file order (Claude: before de-duplication; Codex: one per
	// counted change of the running total; Kimi: one per StatusUpdate).
	Requests []Request
	Lines    int // lines read
	// UsageLines counts lines that carried recorded usage.
	UsageLines int
	// Rejected are lines with usage that sessctl did not count (the first
	// maxDrops of them; RejectedCount has them all). Corrupt lines count
	// here too when they looked like usage records.
	Rejected      []Drop
	RejectedCount int
	// CCUsageOnly counts lines sessctl rejects and ccusage would count;
	// SessctlOnly lines sessctl counts and ccusage would silently drop (the
	// first maxDrops are listed in SessctlOnlyLines).
	CCUsageOnly      int
	SessctlOnly      int
	SessctlOnlyLines []Drop
	// Corrupt counts unusable lines (torn, not JSON) among those inspected.
	Corrupt int
	// LastActivity is the newest timestamp of a counted request (Unix ms).
	LastActivity int64
	// Context is the latest context gauge the file recorded (-1 = none):
	// Codex last_token_usage.total_tokens, Kimi StatusUpdate.context_tokens.
	Context int64
	// Window is the context window the file recorded, 0 when none.
	Window int64
	// CWD is the working directory the file names (Codex session_meta).
	CWD string

	models modelTable
}

const maxDrops = 20

// ModelID names a model in a table of names: a FileUsage's, or a Ledger's
// once the request was added to it. 0 is no model ("").
type ModelID int32

// modelTable interns model names.
type modelTable struct {
	names []string // the name of id i is names[i-1]
	index map[string]ModelID
}

func (t *modelTable) name(id ModelID) string {
	if id <= 0 || int(id) > len(t.names) {
		return ""
	}
	return t.names[id-1]
}

// id returns the id of name, adding it when new.
func (t *modelTable) id(name string) ModelID {
	if name == "" {
		return 0
	}
	if id, ok := t.index[name]; ok {
		return id
	}
	if t.index == nil {
		t.index = map[string]ModelID{}
	}
	t.names = append(t.names, name)
	id := ModelID(len(t.names))
	t.index[name] = id
	return id
}

func (f *FileUsage) reject(line int, reason string) {
	f.RejectedCount++
	if len(f.Rejected) < maxDrops {
		f.Rejected = append(f.Rejected, Drop{line, reason})
	}
}

func (f *FileUsage) sessctlOnly(line int, reason string) {
	f.SessctlOnly++
	if len(f.SessctlOnlyLines) < maxDrops {
		f.SessctlOnlyLines = append(f.SessctlOnlyLines, Drop{line, reason})
	}
}

// A Scanner reads the recorded usage of files, reusing its buffers from one
// file to the next. A Scanner is not safe for concurrent use; give each
// goroutine its own.
type Scanner struct {
	buf  []byte
	reqs []Request // a list to fill next, given back by Reuse
}

// Reuse gives the scanner a request list that is no longer needed (a
// FileUsage's Requests once a Ledger has copied them), so that the next
// file fills it instead of allocating one.
func (sc *Scanner) Reuse(reqs []Request) {
	if cap(reqs) > cap(sc.reqs) {
		sc.reqs = reqs[:0]
	}
}

// ScanFile reads the recorded usage of one file of agent a. role tells a
// Kimi wire.jsonl from a context.jsonl (only the wire carries billing
// usage); for other agents it is ignored. Memory does not grow with the
// file, only with its longest line and its number of usage records.
func ScanFile(path string, a session.Agent, role session.FileRole) (*FileUsage, error) {
	return new(Scanner).ScanFile(path, a, role)
}

// ScanFile is the package function ScanFile with sc's buffers.
func (sc *Scanner) ScanFile(path string, a session.Agent, role session.FileRole) (*FileUsage, error) {
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
	return sc.scan(fh, path, a, role, hint)
}

// ScanReader is ScanFile over any reader; path only names the result.
func ScanReader(r io.Reader, path string, a session.Agent, role session.FileRole) (*FileUsage, error) {
	return new(Scanner).ScanReader(r, path, a, role)
}

// ScanReader is the package function ScanReader with sc's buffers.
func (sc *Scanner) ScanReader(r io.Reader, path string, a session.Agent, role session.FileRole) (*FileUsage, error) {
	return sc.scan(r, path, a, role, 0)
}

// scan reads one file; hint is the number of requests to make room for.
func (sc *Scanner) scan(r io.Reader, path string, a session.Agent, role session.FileRole, hint int) (*FileUsage, error) {
	if sc.buf == nil {
		sc.buf = make([]byte, 256<<10)
	}
	lr := &lineReader{r: r, buf: sc.buf}
	defer func() { sc.buf = lr.buf }()
	fu := &FileUsage{Path: path, Agent: a, Context: -1}
	switch {
	case sc.reqs != nil:
		fu.Requests, sc.reqs = sc.reqs[:0], nil
	case hint > 0:
		fu.Requests = make([]Request, 0, hint)
	}
	var err error
	switch a {
	case session.Claude:
		err = scanClaude(lr, fu)
	case session.Codex:
		err = scanCodex(lr, fu)
	case session.Kimi:
		if role == session.FileWire {
			err = scanKimiWire(lr, fu)
		} else {
			err = scanKimiContext(lr, fu)
		}
	case session.Clawdcode:
		err = scanClawd(lr, fu)
	default:
		return fu, nil
	}
	return fu, err
}

// lineReader yields the lines of a stream with their numbers from one
// reusable buffer, which grows only to hold the longest line. Lines keep no
// terminator (a trailing CR is kept; JSON white space makes it harmless).
type lineReader struct {
	r          io.Reader
	buf        []byte
	start, end int // unread bytes are buf[start:end]
	eof        bool
	num        int
	torn       bool   // the last line had no newline
	tail       []byte // that line, when nextMatch skipped it
}

func (lr *lineReader) next() ([]byte, error) {
	scanFrom := lr.start
	for {
		if i := bytes.IndexByte(lr.buf[scanFrom:lr.end], '\n'); i >= 0 {
			line := lr.buf[lr.start : scanFrom+i]
			lr.start = scanFrom + i + 1
			lr.num++
			return line, nil
		}
		if lr.eof {
			if lr.start == lr.end {
				return nil, io.EOF
			}
			line := lr.buf[lr.start:lr.end]
			lr.start = lr.end
			lr.num++
			lr.torn = true
			return line, nil
		}
		scanned := lr.end - lr.start // no newline in these
		if err := lr.fill(); err != nil {
			return nil, err
		}
		scanFrom = lr.start + scanned
	}
}

// nextMatch returns the next line that contains pat, skipping the lines
// before it in one search over the buffer (they are counted, not looked
// at). A last line without newline and without pat is left in lr.tail.
func (lr *lineReader) nextMatch(pat []byte) ([]byte, error) {
	for {
		buf := lr.buf[lr.start:lr.end]
		if i := bytes.Index(buf, pat); i >= 0 {
			// skip whole lines up to the one holding the match (forward:
			// IndexByte is vectorised, LastIndexByte is not)
			ls := 0
			for {
				k := bytes.IndexByte(buf[ls:i], '\n')
				if k < 0 {
					break
				}
				ls += k + 1
				lr.num++
			}
			lr.start += ls
			// the line ends after the match: look for its newline from there
			if k := bytes.IndexByte(buf[i:], '\n'); k >= 0 {
				line := buf[ls : i+k]
				lr.start += i + k + 1 - ls
				lr.num++
				return line, nil
			}
			return lr.next()
		}
		if last := bytes.LastIndexByte(buf, '\n'); last >= 0 {
			lr.num += bytes.Count(buf[:last+1], []byte{'\n'})
			lr.start += last + 1
		}
		if lr.eof {
			if lr.start < lr.end {
				lr.num++
				lr.torn = true
				lr.tail = lr.buf[lr.start:lr.end]
				lr.start = lr.end
			}
			return nil, io.EOF
		}
		if err := lr.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more input after the unread bytes, moving them to the front
// and growing the buffer when it is full.
func (lr *lineReader) fill() error {
	n := lr.end - lr.start
	if lr.start > 0 {
		copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start, lr.end = 0, n
	}
	if lr.end == len(lr.buf) {
		nb := make([]byte, 2*len(lr.buf))
		copy(nb, lr.buf[:lr.end])
		lr.buf = nb
	}
	m, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += m
	if err == io.EOF {
		lr.eof = true
	} else if err != nil {
		return err
	}
	return nil
}

// Ledger totals requests over many files, applying Claude Code's
// de-duplication (one count per message.id + requestId across all files,
// the largest usage wins). Add files in a stable order (sorted by path, as
// ccusage does) to get the same winners on every run. Requests without a
// key (Codex, clawdcode) are kept as they are. The ledger copies what it
// keeps, so a FileUsage's Requests can be dropped after Add.
type Ledger struct {
	files int32 // files added so far
	// Requests are counted by sessctl, de-duplicated.
	Requests []Request
	// CCUsage holds the requests ccusage 20.0.24 would count, de-duplicated
	// by its rules over the lines it does not drop, once the two views
	// differ; use CCUsageView.
	CCUsage []Request

	own, ccu dedupe
	models   modelTable
	remap    []ModelID // file model id -> ledger model id, during Add
	// diverged is set once a line was counted by one view and not the
	// other; until then CCUsage is Requests and is not kept twice.
	diverged bool
}

// dedupe indexes a request list by its two keys. Both indexes are always
// set together to the same place, so one map keyed by message.id holds
// both: the place of the message's latest request (the message index),
// and the key and place of its first key (the exact index). A message
// seen with further requestIds keeps those in more. One map look-up per
// request instead of two, and a quarter less memory.
type dedupe struct {
	byMsg map[uint64]msgEntry
	more  map[uint64]int32 // exact index entries not in byMsg
}

type msgEntry struct {
	latest, at int32 // message index; exact index of key
	key        uint64
}

// exact returns the place of the request with key, if any.
func (d *dedupe) exact(e msgEntry, found bool, key uint64) (int32, bool) {
	if found && e.key == key {
		return e.at, true
	}
	at, ok := d.more[key]
	return at, ok
}

// set indexes place at under both keys of r.
func (d *dedupe) set(e msgEntry, found bool, r *Request, at int32) {
	switch {
	case !found:
		e = msgEntry{key: r.key, at: at}
	case e.key == r.key:
		e.at = at
	default:
		if d.more == nil {
			d.more = map[uint64]int32{}
		}
		d.more[r.key] = at
	}
	e.latest = at
	d.byMsg[r.msgKey] = e
}

// Add adds one file's requests and then releases them from fu. It returns
// the list it released, which the caller may give to a Scanner's Reuse.
func (lg *Ledger) Add(fu *FileUsage) []Request {
	fi := lg.files
	lg.files++
	lg.remap = append(lg.remap[:0], 0)
	for _, name := range fu.models.names {
		lg.remap = append(lg.remap, lg.models.id(name))
	}
	for i := range fu.Requests {
		r := &fu.Requests[i]
		r.File = fi
		if int(r.Model) < len(lg.remap) && r.Model > 0 {
			r.Model = lg.remap[r.Model]
		} else {
			r.Model = 0
		}
		if r.counted != r.ccusage && !lg.diverged {
			lg.diverged = true
			lg.CCUsage = append([]Request(nil), lg.Requests...)
			lg.ccu = lg.own.clone()
		}
		if r.counted {
			lg.Requests = lg.own.push(lg.Requests, r)
		}
		if r.ccusage && lg.diverged {
			lg.CCUsage = lg.ccu.push(lg.CCUsage, r)
		}
	}
	reqs := fu.Requests
	fu.Requests = nil
	return reqs
}

// Grow makes room for about n more requests (a hint: it saves growing the
// tables one doubling at a time). Room in the list that is never used costs
// address space more than memory; the map is sized for half of it.
func (lg *Ledger) Grow(n int) {
	if n <= 0 {
		return
	}
	lg.Requests = append(make([]Request, 0, len(lg.Requests)+n), lg.Requests...)
	if lg.own.byMsg == nil {
		lg.own.byMsg = make(map[uint64]msgEntry, n/2)
	}
}

// Model returns the model name of one of lg's requests.
func (lg *Ledger) Model(r *Request) string { return lg.models.name(r.Model) }

// CCUsageView returns the requests ccusage would count.
func (lg *Ledger) CCUsageView() []Request {
	if !lg.diverged {
		return lg.Requests
	}
	return lg.CCUsage
}

func (d *dedupe) clone() dedupe {
	c := dedupe{byMsg: make(map[uint64]msgEntry, len(d.byMsg))}
	for k, v := range d.byMsg {
		c.byMsg[k] = v
	}
	if d.more != nil {
		c.more = make(map[uint64]int32, len(d.more))
		for k, v := range d.more {
			c.more[k] = v
		}
	}
	return c
}

// push adds r to list unless it duplicates a request already there, in
// which case the better of the two stays (ccusage's push_deduped_entry):
// the one not on a sidechain, else the larger total, else the one with a
// speed field.
func (d *dedupe) push(list []Request, r *Request) []Request {
	if r.key == 0 {
		return append(list, *r)
	}
	if d.byMsg == nil {
		d.byMsg = map[uint64]msgEntry{}
	}
	e, found := d.byMsg[r.msgKey]
	at, ok := d.exact(e, found, r.key)
	// sidechain logs replay parent messages under a new requestId
	if !ok && found && (r.sidechain || list[e.latest].sidechain) {
		at, ok = e.latest, true
	}
	if ok {
		if better(r, &list[at]) {
			list[at] = *r
			d.set(e, found, r, at)
		}
		return list
	}
	d.set(e, found, r, int32(len(list)))
	return append(list, *r)
}

func better(c, e *Request) bool {
	if c.sidechain != e.sidechain {
		return e.sidechain
	}
	if ct, et := c.Usage.Total(), e.Usage.Total(); ct != et {
		return ct > et
	}
	return c.speed && !e.speed
}

// Totals is recorded usage summed, with a breakdown by model.
type Totals struct {
	session.Usage
	Requests int                      `json:"requests"`
	ByModel  map[string]session.Usage `json:"by_model,omitempty"`
	// LastActivity is the newest request time.
	LastActivity time.Time `json:"last_activity,omitzero"`
}

// Add counts one request of the given model.
func (t *Totals) Add(r *Request, model string) {
	t.Usage = t.Usage.Add(r.Usage)
	t.Requests++
	if r.Usage.Total() > 0 || r.Usage.Reasoning > 0 {
		t.addModel(model, r.Usage)
	}
	if r.Time > 0 {
		if ts := time.UnixMilli(r.Time).UTC(); ts.After(t.LastActivity) {
			t.LastActivity = ts
		}
	}
}

// addModel adds u to the row of model m ("(unknown)" when m is empty).
func (t *Totals) addModel(m string, u session.Usage) {
	if t.ByModel == nil {
		t.ByModel = map[string]session.Usage{}
	}
	if m == "" {
		m = "(unknown)"
	}
	t.ByModel[m] = t.ByModel[m].Add(u)
}

// Totals counts the requests reqs of lg: the same as Totals.Add for each
// of them, with one map update per model rather than one per request.
func (lg *Ledger) Totals(reqs []*Request) Totals {
	var t Totals
	var byID []session.Usage // by model id
	var seen []bool
	var last int64
	for _, r := range reqs {
		t.Usage = t.Usage.Add(r.Usage)
		if r.Usage.Total() > 0 || r.Usage.Reasoning > 0 {
			for int(r.Model) >= len(byID) {
				byID, seen = append(byID, session.Usage{}), append(seen, false)
			}
			byID[r.Model] = byID[r.Model].Add(r.Usage)
			seen[r.Model] = true
		}
		last = max(last, r.Time)
	}
	t.Requests = len(reqs)
	for id, u := range byID {
		if !seen[id] {
			continue
		}
		t.addModel(lg.models.name(ModelID(id)), u)
	}
	if last > 0 {
		t.LastActivity = time.UnixMilli(last).UTC()
	}
	return t
}

// Merge adds another Totals.
func (t *Totals) Merge(o Totals) {
	t.Usage = t.Usage.Add(o.Usage)
	t.Requests += o.Requests
	for m, u := range o.ByModel {
		t.addModel(m, u)
	}
	if o.LastActivity.After(t.LastActivity) {
		t.LastActivity = o.LastActivity
	}
}

// Models returns the model names of t, largest total first.
func (t *Totals) Models() []string {
	var ms []string
	for m := range t.ByModel {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool {
		ti, tj := t.ByModel[ms[i]].Total(), t.ByModel[ms[j]].Total()
		if ti != tj {
			return ti > tj
		}
		return ms[i] < ms[j]
	})
	return ms
}

// parseMillis returns a timestamp in Unix milliseconds, with a fast path
// for the form every client writes (2026-11-22T02:58:38.406Z).
func parseMillis(b []byte) (int64, error) {
	if len(b) == 24 && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[23] == 'Z' {
		num := func(i, j int) int {
			n := 0
			for _, c := range b[i:j] {
				if c < '0' || c > '9' {
					return -1
				}
				n = n*10 + int(c-'0')
			}
			return n
		}
		y, mo, d, h, mi, se, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
		if y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h >= 0 && h < 24 && mi >= 0 && mi < 60 && se >= 0 && se < 60 && ms >= 0 {
			t := time.Date(y, time.Month(mo), d, h, mi, se, ms*1e6, time.UTC)
			if t.Day() == d { // not 31 February
				return t.UnixMilli(), nil
			}
		}
	}
	return parseRFC3339(string(b))
}

// parseRFC3339 returns a timestamp in Unix milliseconds.
func parseRFC3339(s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

// looksCorrupt is the cheap test applied to lines the fast path does not
// decode: a non-blank line that does not start with '{' and end with '}',
// or a torn last line that is not valid JSON. It misses damage inside a
// well-bracketed line; the single-session view validates every line.
func looksCorrupt(line []byte, torn bool) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return false
	}
	if t[0] != '{' || t[len(t)-1] != '}' {
		return true
	}
	return torn && !validLine(line)
}
