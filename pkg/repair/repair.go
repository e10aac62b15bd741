// Package repair makes a damaged session file whole the way its client
// would have written it: torn and corrupt lines leave the live file (the
// complete record glued behind a torn one stays), exact double writes are
// written once, and what the agent's home knows of its client (a tool call
// left unanswered by a crash, invalid UTF-8 as the client's own reader sees
// it) is mended by that home.
//
// A repair is planned in one streaming pass (Plan) and written in a second
// (Plan.Write) through pkg/rewrite, which rotates the original first: every
// removed byte stays in the rotation. Memory is bounded by the longest line
// and the number of fixes, not by the file.
package repair

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"sort"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Kinds of damage.
const (
	KindTorn      = "torn_line"           // the last line, cut by a crash mid-write
	KindCorrupt   = "corrupt_line"        // a line no reader can use
	KindGlued     = "glued_record"        // a complete record appended onto a torn line
	KindDuplicate = "duplicate_line"      // the same record written twice
	KindUTF8      = "invalid_utf8"        // bytes that are not UTF-8, as the client reads them
	KindDangling  = "dangling_tool_call"  // a tool call the client never answered
	KindTooLong   = "too_long_line"       // a line too long to read: left as it is
	KindOrphan    = "orphan_tool_result"  // a tool result whose call is not in the file
	KindParent    = "broken_parent"       // a parent link to a record that is not in the file
	KindSequence  = "checkpoint_sequence" // a turn marker numbered out of sequence
)

// Fix is one repair, in the order of the file.
type Fix struct {
	// Line and Offset locate the damaged line (1-based line number and
	// byte offset in the original file).
	Line   int    `json:"line"`
	Offset int64  `json:"offset"`
	Kind   string `json:"kind"`
	// Reason says in words what was wrong and what repair does.
	Reason string `json:"reason"`
	// RemovedBytes are the bytes of the line that leave the live file.
	RemovedBytes int64 `json:"removed_bytes"`
	// Wrote are the lines written in its place or after it, as written.
	Wrote []string `json:"wrote,omitempty"`

	drop     bool                             // the line leaves the file
	replace  []byte                           // the line is replaced by these bytes
	edit     func(raw []byte) ([]byte, error) // the line as written (nil: it leaves the file)
	after    [][]byte                         // lines written after the line (after the end for Line 0)
	before   [][]byte                         // lines written before line insertAt
	insertAt int
}

// Drop makes a fix that removes the line.
func Drop(l *jsonl.Line, kind, reason string) Fix {
	return Fix{Line: l.Num, Offset: l.Offset, Kind: kind, Reason: reason, RemovedBytes: l.Len + int64(l.EOL.Len()), drop: true}
}

// Replace makes a fix that writes b in place of the line (b is copied: it
// may be the reader's buffer).
func Replace(l *jsonl.Line, kind, reason string, b []byte) Fix {
	b = bytes.Clone(b)
	return Fix{Line: l.Num, Offset: l.Offset, Kind: kind, Reason: reason, RemovedBytes: l.Len + int64(l.EOL.Len()),
		replace: b, Wrote: []string{string(b)}}
}

// Append makes a fix that writes lines at the end of the file, for the
// damage at line l.
func Append(l *jsonl.Line, kind, reason string, lines ...[]byte) Fix {
	f := Fix{Line: l.Num, Offset: l.Offset, Kind: kind, Reason: reason, after: lines}
	for _, b := range lines {
		f.Wrote = append(f.Wrote, string(b))
	}
	return f
}

// Insert makes a fix that writes lines just before line l (which stays),
// for the damage at line at: a tool call answered where the client must
// see the answer, right after the call's own records.
func Insert(l, at *jsonl.Line, kind, reason string, lines ...[]byte) Fix {
	f := Fix{Line: at.Num, Offset: at.Offset, Kind: kind, Reason: reason, before: lines}
	f.insertAt = l.Num
	for _, b := range lines {
		f.Wrote = append(f.Wrote, string(b))
	}
	return f
}

// Edit makes a fix that rewrites line num (at offset) when the file is
// written: fn gets the line as it stands (after any other fix of it) and
// returns what is written instead, or nil when the line leaves the file.
// It is for repairs that only the end of the planning pass decides, when
// the line itself is long gone (a parent link, a result whose call never
// came).
func Edit(num int, offset int64, kind, reason string, fn func(raw []byte) ([]byte, error)) Fix {
	return Fix{Line: num, Offset: offset, Kind: kind, Reason: reason, edit: fn}
}

// Mender is what an agent's home knows of mending its client's files. A
// home without one gets the repairs every format shares.
type Mender interface {
	// NewMend starts the repair of one file; now stamps written records.
	NewMend(now time.Time) Mend
}

// Mend follows one file through the planning pass.
type Mend interface {
	// Record sees every usable record (and every line repair rewrote) in
	// file order, before it is kept; it returns the fixes this record
	// calls for. The Record is only valid during the call.
	Record(r *session.Record) []Fix
	// UTF8 is the line as the client's own reader decodes bytes that are
	// not UTF-8, or nil when the client cannot read it (it then leaves the
	// file as a corrupt line).
	UTF8(raw []byte) []byte
	// DuplicateKey is the identity of a record the client writes once
	// (Claude Code's uuid), or "" when an exact repeat of the record may be
	// legitimate.
	DuplicateKey(r *session.Record) string
	// End returns the fixes that only the end of the file tells (a tool
	// call still unanswered when the file ends). Their lines are written
	// after the last line.
	End() []Fix
}

// Plan is a planned repair.
type Plan struct {
	Path  string        `json:"path"`
	Agent session.Agent `json:"agent"`
	Fixes []Fix         `json:"fixes"`
	// Unrepairable is damage repair leaves as it is, each with the reason;
	// it makes the command exit 1.
	Unrepairable []Fix `json:"unrepairable"`
}

// dupWindow is how many recent records are compared for double writes: a
// client that writes a record twice does it back to back (a retried
// append), so a window keeps memory bounded without missing them.
const dupWindow = 4096

// Scan plans the repair of the file at path, of agent a; now stamps the
// records it writes.
func Scan(ctx context.Context, path string, a session.Agent, now time.Time) (*Plan, error) {
	h := session.HomeOf(a)
	if h == nil {
		return nil, fmt.Errorf("%s: sessctl cannot repair %s sessions", path, a)
	}
	fh, err := jsonl.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return scan(ctx, fh, path, h, now)
}

// ScanReader is Scan over src (tests, and files already open).
func ScanReader(ctx context.Context, src io.Reader, path string, a session.Agent, now time.Time) (*Plan, error) {
	h := session.HomeOf(a)
	if h == nil {
		return nil, fmt.Errorf("%s: sessctl cannot repair %s sessions", path, a)
	}
	return scan(ctx, src, path, h, now)
}

func scan(ctx context.Context, src io.Reader, path string, h session.Home, now time.Time) (*Plan, error) {
	p := &Plan{Path: path, Agent: h.Agent(), Fixes: []Fix{}, Unrepairable: []Fix{}}
	var m Mend = generic{}
	if md, ok := h.(Mender); ok {
		m = md.NewMend(now)
	}
	seed := maphash.MakeSeed()
	recent := map[string]uint64{} // duplicate key -> hash of its line
	var order []string
	rd := jsonl.NewReader(src)
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if l.Num%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		line := l
		switch l.Status {
		case jsonl.OK, jsonl.Blank:
		case jsonl.TooLong:
			p.Unrepairable = append(p.Unrepairable, Fix{Line: l.Num, Offset: l.Offset, Kind: KindTooLong,
				Reason: fmt.Sprintf("a line of %d bytes, longer than sessctl reads; left as it is", l.Len)})
			continue
		case jsonl.InvalidUTF8:
			if b := m.UTF8(l.Raw); b != nil {
				p.Fixes = append(p.Fixes, Replace(l, KindUTF8, "bytes that are not UTF-8, replaced as the client's own reader reads them", b))
				fixed := *l
				fixed.Raw, fixed.Status = b, jsonl.OK
				line = &fixed
				break
			}
			p.Fixes = append(p.Fixes, Drop(l, KindCorrupt, "bytes that are not UTF-8, which the client cannot read: the line leaves the file"))
			continue
		default:
			if b := gluedRecord(l.Raw); b != nil {
				p.Fixes = append(p.Fixes, Replace(l, KindGlued,
					fmt.Sprintf("a torn record (%d bytes) with a complete one appended onto it: the complete record stays", len(l.Raw)-len(b)), b))
				fixed := *l
				fixed.Raw, fixed.Status = b, jsonl.OK
				line = &fixed
				break
			}
			if l.Status == jsonl.Truncated {
				p.Fixes = append(p.Fixes, Drop(l, KindTorn, "the last line was cut mid-write (no newline, not JSON): it leaves the file"))
			} else {
				p.Fixes = append(p.Fixes, Drop(l, KindCorrupt, l.Status.Describe()+": the line leaves the file"))
			}
			continue
		}
		if line.Status == jsonl.Blank {
			continue
		}
		r := session.Decode(h, line)
		if r.Kind == session.KindCorrupt {
			continue
		}
		if key := m.DuplicateKey(&r); key != "" {
			sum := maphash.Bytes(seed, line.Raw)
			if prev, ok := recent[key]; ok && prev == sum {
				p.Fixes = append(p.Fixes, Drop(l, KindDuplicate, "an exact repeat of a record the client writes once: written once"))
				continue
			}
			if _, ok := recent[key]; !ok {
				order = append(order, key)
				if len(order) > dupWindow {
					delete(recent, order[0])
					order = order[1:]
				}
			}
			recent[key] = sum
		}
		p.Fixes = append(p.Fixes, m.Record(&r)...)
	}
	p.Fixes = append(p.Fixes, m.End()...)
	// End's fixes may name earlier lines; the output and Write go in file
	// order (appended records keep their order among themselves)
	sort.SliceStable(p.Fixes, func(i, j int) bool { return p.Fixes[i].Line < p.Fixes[j].Line })
	return p, nil
}

// gluedRecord finds the complete JSON object a client appended onto a torn
// line (Claude Code and Kimi append without looking at the last byte). The
// torn part is the head of a record cut short, so an object that begins
// inside it runs on into the glued record and is never whole: the glued
// record is the one suffix that begins with `{"` and is a whole object.
// Candidates are tried from the right, the shortest first; the bytes
// validated are capped (glueBudget), so a huge corrupt line costs a few
// passes at most.
func gluedRecord(raw []byte) []byte {
	end := len(raw)
	for end > 0 && (raw[end-1] == ' ' || raw[end-1] == '\t' || raw[end-1] == '\r') {
		end--
	}
	if end < 2 || raw[end-1] != '}' {
		return nil
	}
	budget := glueBudget
	for k := end; ; {
		k = bytes.LastIndex(raw[:k], []byte(`{"`))
		if k <= 0 {
			return nil // none, or the whole line (which is not valid)
		}
		cand := raw[k:end]
		if budget -= len(cand); budget < 0 {
			return nil
		}
		if json.Valid(cand) {
			return cand
		}
	}
}

// glueBudget caps the bytes gluedRecord validates for one line.
const glueBudget = 64 << 20

// Changed reports whether the plan changes the file.
func (p *Plan) Changed() bool { return len(p.Fixes) > 0 }

// Write streams the repaired file: src is the original, dst the new file.
// Every line no fix names is copied byte for byte; the file ends with a
// newline.
func (p *Plan) Write(src io.Reader, dst io.Writer) error {
	byLine := map[int][]*Fix{}
	inserts := map[int][][]byte{}
	var atEnd [][]byte
	for i := range p.Fixes {
		f := &p.Fixes[i]
		if f.before != nil {
			inserts[f.insertAt] = append(inserts[f.insertAt], f.before...)
		}
		if f.drop || f.replace != nil || f.edit != nil {
			byLine[f.Line] = append(byLine[f.Line], f)
		}
		atEnd = append(atEnd, f.after...)
	}
	rd := jsonl.NewReader(src)
	rd.SkipValidation = true
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if l.Status == jsonl.TooLong {
			return fmt.Errorf("%s:%d: a line too long to copy through a repair", p.Path, l.Num)
		}
		for _, b := range inserts[l.Num] {
			if _, err := dst.Write(append(b[:len(b):len(b)], '\n')); err != nil {
				return err
			}
		}
		raw, eol := l.Raw, l.EOL.Bytes()
		drop := false
		for _, f := range byLine[l.Num] {
			switch {
			case f.drop:
				drop = true
			case f.replace != nil:
				raw = f.replace
			case f.edit != nil && !drop:
				if raw, err = f.edit(raw); err != nil {
					return fmt.Errorf("%s:%d: %w", p.Path, l.Num, err)
				}
				drop = raw == nil
			}
		}
		if drop {
			continue
		}
		if len(eol) == 0 {
			eol = []byte{'\n'}
		}
		if _, err := dst.Write(raw); err != nil {
			return err
		}
		if _, err := dst.Write(eol); err != nil {
			return err
		}
	}
	for _, b := range atEnd {
		if _, err := dst.Write(append(b[:len(b):len(b)], '\n')); err != nil {
			return err
		}
	}
	return nil
}

// generic is the repair of an agent whose home has no Mender.
type generic struct{}

func (generic) Record(*session.Record) []Fix        { return nil }
func (generic) UTF8([]byte) []byte                  { return nil }
func (generic) DuplicateKey(*session.Record) string { return "" }
func (generic) End() []Fix                          { return nil }
