package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// Styler is implemented by the homes: how the agent's client writes a line
// of its session file, so that a line redaction changes is written the way
// the client would have written it. Without it a line is written compactly
// (ojson.Compact), the way JSON.stringify and serde_json write.
type Styler interface {
	// LineStyle is the JSON style of the line whose parsed value is v.
	LineStyle(v *ojson.Value) ojson.Style
}

// Hit is one secret found in a session file.
type Hit struct {
	Line   int    `json:"line"`
	Offset int64  `json:"offset"` // the line's byte offset
	Rule   string `json:"rule"`
	// Field is where in the line's JSON the string is (message.content[0].text);
	// "" for a line that is not JSON.
	Field string `json:"field,omitempty"`
	// Preview is the secret in context, masked (Mask): never the secret.
	Preview string `json:"preview"`
	// Unredacted is set when the secret could not be replaced: it sits in
	// a line that is not valid JSON, across an escape of it.
	Unredacted bool `json:"unredacted,omitempty"`
}

// Report is what File found and changed.
type Report struct {
	Hits []Hit `json:"hits"`
	// Lines is the number of lines changed (or to change).
	Lines int `json:"lines_changed"`
}

// Unredacted counts the hits that could not be replaced.
func (r *Report) Unredacted() int {
	n := 0
	for _, h := range r.Hits {
		if h.Unredacted {
			n++
		}
	}
	return n
}

// MaxLineSize is the longest line File handles (jsonl's default). A longer
// line cannot be scanned, so File refuses the file rather than copy a
// possible secret through.
const MaxLineSize = jsonl.DefaultMaxLineSize

// ErrTooLong is returned for a file with a line longer than MaxLineSize.
var ErrTooLong = errors.New("a line is longer than the maximum line size; nothing was redacted")

// File reads a session file of agent from src and writes it to dst with
// every secret replaced by its Placeholder; dst nil only reports (a dry
// run). Only JSON string values change: a changed line is the same object
// with its keys in order, every other value copied as it was, and
// serialised in the style the agent's home names; a line without a secret
// is copied byte for byte, with its line ending. A line that is not valid
// JSON is searched as text and a secret in it replaced only where the
// secret's bytes are plain (no quote or backslash), so the line stays what
// it was; others are reported Unredacted.
func File(ctx context.Context, src io.Reader, dst io.Writer, agent session.Agent, d *Detector) (*Report, error) {
	styler, _ := session.As[Styler](agent)
	rep := &Report{Hits: []Hit{}}
	r := jsonl.NewReader(src)
	r.MaxLineSize = MaxLineSize
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if l.Status == jsonl.TooLong {
			return nil, fmt.Errorf("line %d: %w", l.Num, ErrTooLong)
		}
		out := l.Raw
		if l.Status != jsonl.Blank && d.Maybe(string(l.Raw)) {
			var changed bool
			var hits []Hit
			if l.Status == jsonl.OK {
				out, hits, changed, err = redactLine(l.Raw, styler, d)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", l.Num, err)
				}
			} else {
				out, hits, changed = redactText(l.Raw, d)
			}
			for i := range hits {
				hits[i].Line, hits[i].Offset = l.Num, l.Offset
			}
			rep.Hits = append(rep.Hits, hits...)
			if changed {
				rep.Lines++
			}
		}
		if dst != nil {
			buf = append(append(buf[:0], out...), l.EOL.Bytes()...)
			if _, err := dst.Write(buf); err != nil {
				return nil, err
			}
		}
	}
	return rep, nil
}

// redactLine redacts the string values of one JSON line.
func redactLine(raw []byte, styler Styler, d *Detector) ([]byte, []Hit, bool, error) {
	v, err := ojson.Parse(raw)
	if err != nil {
		// jsonl accepted it: a difference between the two parsers
		return nil, nil, false, fmt.Errorf("cannot parse the line to redact it: %w", err)
	}
	hits := redactValue(v, "", d, 0)
	if len(hits) == 0 {
		return raw, nil, false, nil
	}
	st := ojson.Compact
	if styler != nil {
		st = styler.LineStyle(v)
	}
	out := st.Encode(v)
	if !jsonl.Valid(out) {
		return nil, nil, false, errors.New("the redacted line would not be valid JSON")
	}
	return out, hits, true, nil
}

// maxInner bounds how deep redactValue follows JSON held in strings.
const maxInner = 4

// redactValue redacts every string value below v in place. A string that
// holds JSON (Codex's function call arguments) is redacted as text when
// the result is still JSON; when a secret straddled one of its escapes,
// the JSON inside is redacted instead, value by value, and written back
// compactly.
func redactValue(v *ojson.Value, path string, d *Detector, depth int) []Hit {
	var hits []Hit
	walk(v, path, func(s *ojson.Value, field string, set func(*ojson.Value)) {
		text := s.Text()
		fs := d.Find(text)
		if len(fs) == 0 {
			return
		}
		red := Replace(text, fs, func(f Finding) string { return Placeholder(f.Rule) })
		if depth < maxInner && json.Valid([]byte(text)) && !json.Valid([]byte(red)) {
			if inner, err := ojson.Parse([]byte(text)); err == nil && (inner.Is(ojson.Object) || inner.Is(ojson.Array)) {
				if in := redactValue(inner, field+"(json)", d, depth+1); len(in) > 0 && json.Valid(ojson.Fresh.Encode(inner)) {
					hits = append(hits, in...)
					set(ojson.Str(string(ojson.Fresh.Encode(inner))))
					return
				}
			}
		}
		for _, f := range fs {
			hits = append(hits, Hit{Rule: f.Rule, Field: field, Preview: Preview(text, fs, f)})
		}
		set(ojson.Str(red))
	})
	return hits
}

// walk calls fn for every string value below v (not for keys), with a path
// to it and a function that replaces it.
func walk(v *ojson.Value, path string, fn func(s *ojson.Value, field string, set func(*ojson.Value))) {
	switch v.Kind() {
	case ojson.String:
		// the root is never a string (lines are objects)
	case ojson.Object:
		for _, m := range v.Members() {
			field := m.Key
			if path != "" {
				field = path + "." + m.Key
			}
			if m.Val.Is(ojson.String) {
				k := m.Key
				fn(m.Val, field, func(nv *ojson.Value) { v.Set(k, nv) })
				continue
			}
			walk(m.Val, field, fn)
		}
	case ojson.Array:
		for i, e := range v.Elems() {
			field := path + "[" + strconv.Itoa(i) + "]"
			if e.Is(ojson.String) {
				i := i
				fn(e, field, func(nv *ojson.Value) { v.SetElem(i, nv) })
				continue
			}
			walk(e, field, fn)
		}
	}
}

// redactText redacts a line that is not valid JSON, as text: a secret is
// replaced only when it holds no quote, backslash or control byte, so the
// replacement changes nothing of the line's (broken) structure.
func redactText(raw []byte, d *Detector) ([]byte, []Hit, bool) {
	text := string(raw)
	fs := d.Find(text)
	if len(fs) == 0 {
		return raw, nil, false
	}
	var hits []Hit
	var plain []Finding
	for _, f := range fs {
		h := Hit{Rule: f.Rule, Preview: Preview(text, fs, f)}
		if bytes.ContainsAny(raw[f.Start:f.End], "\"\\") || hasControl(raw[f.Start:f.End]) {
			h.Unredacted = true
		} else {
			plain = append(plain, f)
		}
		hits = append(hits, h)
	}
	if len(plain) == 0 {
		return raw, hits, false
	}
	return []byte(Replace(text, plain, func(f Finding) string { return Placeholder(f.Rule) })), hits, true
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}
