package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/termtext"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// Report is the JSON form of a diff (sessctl diff --json).
type Report struct {
	A         FileInfo       `json:"a"`
	B         FileInfo       `json:"b"`
	Unchanged int            `json:"unchanged"`
	Removed   int            `json:"removed"`
	Added     int            `json:"added"`
	Changed   int            `json:"changed"`
	TokensRem int64          `json:"tokens_removed_estimate"`
	TokensAdd int64          `json:"tokens_added_estimate"`
	Records   []RecordChange `json:"records"` // null with --stat
}

// FileInfo describes one side.
type FileInfo struct {
	Path    string        `json:"path"`
	Agent   session.Agent `json:"agent"`
	Records int           `json:"records"`
}

// RecordChange is one removed, added or changed record.
type RecordChange struct {
	Op       Op        `json:"op"`
	ALine    int32     `json:"a_line,omitempty"`
	BLine    int32     `json:"b_line,omitempty"`
	Type     string    `json:"type"`
	UUID     string    `json:"uuid,omitempty"`
	Preview  string    `json:"preview"`
	Tokens   int64     `json:"tokens_estimate"`
	TextDiff []Segment `json:"text_diff,omitempty"`
}

// Segment is one piece of a text diff.
type Segment struct {
	Op   string `json:"op"` // equal, delete, insert
	Text string `json:"text"`
}

// Options control rendering.
type Options struct {
	Stat  bool // counts and token estimates only
	Color bool // ANSI colours
	// Context is how many characters of unchanged text are shown around a
	// change inside a changed message (default 40).
	Context int
}

// detail is a decoded record, for display.
type detail struct {
	typ, uuid, text, raw string
	tokens               int64
}

type reader struct {
	side *Side
	f    *os.File
	fmt  session.Format
}

func (r *reader) detail(i int32) (detail, error) {
	raw, err := ReadRecord(r.f, r.side, int(i))
	if err != nil {
		return detail{}, err
	}
	d := detail{typ: r.side.Type(int(i)), raw: string(raw)}
	if r.fmt != nil {
		l, err := jsonl.NewReader(bytes.NewReader(raw)).Next()
		if err == nil {
			rec := session.Decode(r.fmt, l)
			d.uuid = rec.UUID
			d.text = recordText(&rec)
		}
	} else {
		d.text = string(raw)
	}
	d.tokens = int64(tokens.CodexApprox(d.text))
	return d, nil
}

func recordText(r *session.Record) string {
	var b strings.Builder
	b.WriteString(r.Text)
	if r.Thinking != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(r.Thinking)
	}
	for _, c := range r.ToolCalls {
		fmt.Fprintf(&b, "\n[tool call %s %s]", c.Name, c.Input)
	}
	for _, res := range r.ToolResults {
		if res.Output != r.Text {
			fmt.Fprintf(&b, "\n[tool result %s]", res.Output)
		}
	}
	return b.String()
}

func open(s *Side) (*reader, error) {
	f, err := jsonl.OpenRandom(s.Path)
	if err != nil {
		return nil, err
	}
	return &reader{side: s, f: f, fmt: session.FormatFor(s.Agent)}, nil
}

// Walk re-reads every removed, added and changed record and calls fn with
// its description; it fills the totals of rep. Only one record (or pair)
// is in memory at a time.
func (r *Result) Walk(rep *Report, opt Options, fn func(RecordChange) error) error {
	ra, err := open(r.A)
	if err != nil {
		return err
	}
	defer ra.f.Close()
	rb, err := open(r.B)
	if err != nil {
		return err
	}
	defer rb.f.Close()
	if opt.Context <= 0 {
		opt.Context = 40
	}
	*rep = Report{
		A:         FileInfo{Path: r.A.Path, Agent: r.A.Agent, Records: r.A.Records()},
		B:         FileInfo{Path: r.B.Path, Agent: r.B.Agent, Records: r.B.Records()},
		Unchanged: r.Counts[Same], Removed: r.Counts[Removed], Added: r.Counts[Added], Changed: r.Counts[Changed],
	}
	for _, e := range r.Entries {
		rc := RecordChange{Op: e.Op, ALine: e.ALine, BLine: e.BLine}
		switch e.Op {
		case Removed:
			d, err := ra.detail(e.A)
			if err != nil {
				return err
			}
			rc.Type, rc.UUID, rc.Tokens = d.typ, d.uuid, d.tokens
			rc.Preview = preview(d)
			rep.TokensRem += d.tokens
		case Added:
			d, err := rb.detail(e.B)
			if err != nil {
				return err
			}
			rc.Type, rc.UUID, rc.Tokens = d.typ, d.uuid, d.tokens
			rc.Preview = preview(d)
			rep.TokensAdd += d.tokens
		case Changed:
			da, err := ra.detail(e.A)
			if err != nil {
				return err
			}
			db, err := rb.detail(e.B)
			if err != nil {
				return err
			}
			rc.Type, rc.UUID = db.typ, db.uuid
			rc.Preview = preview(db)
			ta, tb := da.text, db.text
			if ta == tb { // same message text: the difference is elsewhere in the record
				ta, tb = da.raw, db.raw
			}
			segs, rem, add := textDiff(ta, tb, opt.Context)
			rc.TextDiff = segs
			rc.Tokens = add - rem
			rep.TokensRem += rem
			rep.TokensAdd += add
		}
		if opt.Stat {
			continue
		}
		if err := fn(rc); err != nil {
			return err
		}
	}
	return nil
}

func preview(d detail) string {
	s := d.text
	if s == "" {
		s = d.raw
	}
	return session.Preview(s, 120)
}

// textDiff diffs two texts with go-diff and returns the segments (long
// unchanged stretches shortened to ctx characters at each end) and the
// estimated tokens deleted and inserted.
func textDiff(a, b string, ctx int) (segs []Segment, rem, add int64) {
	dmp := diffmatchpatch.New()
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMain(a, b, false))
	for k, d := range diffs {
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			t := []rune(d.Text)
			if len(t) > 2*ctx+1 {
				head, tail := string(t[:ctx]), string(t[len(t)-ctx:])
				switch {
				case k == 0:
					d.Text = "…" + tail
				case k == len(diffs)-1:
					d.Text = head + "…"
				default:
					d.Text = head + "…" + tail
				}
			}
			segs = append(segs, Segment{Op: "equal", Text: d.Text})
		case diffmatchpatch.DiffDelete:
			rem += int64(tokens.CodexApprox(d.Text))
			segs = append(segs, Segment{Op: "delete", Text: d.Text})
		case diffmatchpatch.DiffInsert:
			add += int64(tokens.CodexApprox(d.Text))
			segs = append(segs, Segment{Op: "insert", Text: d.Text})
		}
	}
	return segs, rem, add
}

// WriteText prints the diff for a terminal or a pipe. Everything taken from
// the files (paths, types, ids, previews, text) is shown through
// pkg/termtext, so a record cannot send control sequences to the terminal.
func WriteText(w io.Writer, r *Result, opt Options) (*Report, error) {
	var rep Report
	c := colors{on: opt.Color}
	line := termtext.Line
	fmt.Fprintf(w, "%s\n%s\n", c.red("--- a: "+line(r.A.Path)), c.green("+++ b: "+line(r.B.Path)))
	err := r.Walk(&rep, opt, func(rc RecordChange) error {
		switch rc.Op {
		case Removed:
			_, err := fmt.Fprintf(w, "%s\n", c.red(fmt.Sprintf("- %d %s: %s", rc.ALine, line(rc.Type), line(rc.Preview))))
			return err
		case Added:
			_, err := fmt.Fprintf(w, "%s\n", c.green(fmt.Sprintf("+ %d %s: %s", rc.BLine, line(rc.Type), line(rc.Preview))))
			return err
		}
		id := ""
		if rc.UUID != "" {
			id = " " + line(rc.UUID)
		}
		fmt.Fprintf(w, "%s\n", c.yellow(fmt.Sprintf("~ %d→%d %s%s:", rc.ALine, rc.BLine, line(rc.Type), id)))
		var b strings.Builder
		b.WriteString("    ")
		for _, s := range rc.TextDiff {
			t := strings.ReplaceAll(termtext.Block(s.Text), "\n", "\n    ")
			switch s.Op {
			case "delete":
				if c.on {
					b.WriteString(c.red(t))
				} else {
					b.WriteString("[-" + t + "-]")
				}
			case "insert":
				if c.on {
					b.WriteString(c.green(t))
				} else {
					b.WriteString("{+" + t + "+}")
				}
			default:
				b.WriteString(t)
			}
		}
		_, err := fmt.Fprintf(w, "%s\n", b.String())
		return err
	})
	if err != nil {
		return nil, err
	}
	WriteStat(w, &rep, c)
	return &rep, nil
}

// WriteStat prints the summary line(s).
func WriteStat(w io.Writer, rep *Report, c colors) {
	fmt.Fprintf(w, " %s unchanged, %s, %s, %s\n", termtext.Count(rep.Unchanged, "record"),
		c.red(fmt.Sprintf("%s removed (~%s)", termtext.Group(int64(rep.Removed)), termtext.Count(rep.TokensRem, "token"))),
		c.green(fmt.Sprintf("%s added (~%s)", termtext.Group(int64(rep.Added)), termtext.Count(rep.TokensAdd, "token"))),
		c.yellow(fmt.Sprintf("%s changed", termtext.Group(int64(rep.Changed)))))
}

// WriteStatOnly prints --stat output.
func WriteStatOnly(w io.Writer, r *Result, opt Options) (*Report, error) {
	var rep Report
	opt.Stat = true
	if err := r.Walk(&rep, opt, nil); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, " a: %s (%s)\n b: %s (%s)\n", termtext.Line(rep.A.Path), termtext.Count(rep.A.Records, "record"), termtext.Line(rep.B.Path), termtext.Count(rep.B.Records, "record"))
	WriteStat(w, &rep, colors{on: opt.Color})
	return &rep, nil
}

// WriteJSON prints the report as JSON (records omitted with opt.Stat).
func WriteJSON(w io.Writer, r *Result, opt Options) error {
	var rep Report
	var recs []RecordChange
	err := r.Walk(&rep, opt, func(rc RecordChange) error {
		recs = append(recs, rc)
		return nil
	})
	if err != nil {
		return err
	}
	if !opt.Stat {
		rep.Records = recs
		if rep.Records == nil {
			rep.Records = []RecordChange{}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

type colors struct{ on bool }

func (c colors) wrap(code, s string) string {
	if !c.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
func (c colors) red(s string) string    { return c.wrap("31", s) }
func (c colors) green(s string) string  { return c.wrap("32", s) }
func (c colors) yellow(s string) string { return c.wrap("33", s) }
