package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/sessctl/sessctl/pkg/cleanup"
	"github.com/sessctl/sessctl/pkg/termtext"
)

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := newIndentEncoder(w, "", "  ")
	return enc.Encode(v)
}

// indentEncoder writes what a json.Encoder with SetIndent(prefix, indent)
// and SetEscapeHTML(false) writes, the same bytes, faster: the encoder
// writes compact JSON, which indentJSON indents knowing it is valid
// (encoding/json's indenting runs its validating scanner over every byte:
// half of the time of stats --all --json's output).
type indentEncoder struct {
	w              io.Writer
	compact        bytes.Buffer
	out            []byte
	enc            *json.Encoder
	prefix, indent string
}

func newIndentEncoder(w io.Writer, prefix, indent string) *indentEncoder {
	e := &indentEncoder{w: w, prefix: prefix, indent: indent}
	e.enc = json.NewEncoder(&e.compact)
	e.enc.SetEscapeHTML(false)
	return e
}

// Encode writes v, indented, and a newline.
func (e *indentEncoder) Encode(v any) error {
	e.compact.Reset()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	e.out = indentJSON(e.out[:0], e.compact.Bytes(), e.prefix, e.indent)
	_, err := e.w.Write(e.out)
	return err
}

// indentJSON appends src, compact JSON as encoding/json writes it (valid,
// no white space but a final newline), to dst indented as json.Indent
// indents it: each element on a line of its own, prefix and one indent a
// level, ": " after a key, and empty objects and arrays as {} and [].
// TestIndentJSON and FuzzIndentJSON hold it to json.Indent.
func indentJSON(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			// the string through its closing quote, as it is
			j := i + 1
			for {
				k := bytes.IndexByte(src[j:], '"')
				if k < 0 {
					return append(dst, src[i:]...) // not from encoding/json
				}
				end := j + k
				n := 0 // backslashes before the quote
				for p := end - 1; p > i && src[p] == '\\'; p-- {
					n++
				}
				if n%2 == 0 {
					dst = append(dst, src[i:end+1]...)
					i = end
					break
				}
				j = end + 1
			}
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// A jsonArray is a top-level array field of a report, written by
// writeJSONStream element by element.
type jsonArray struct {
	key  string // its JSON key
	n    int
	elem func(i int) (any, error)
}

// writeJSONStream prints v as writeJSON does, the same bytes, except that
// the arrays' elements are encoded one at a time through one reused buffer
// and written as they come. v must hold each of those fields empty (not
// nil). A report over thousands of sessions is then never held whole, twice
// over, in memory: encoding/json builds the whole text, then indents it
// into a second buffer, both grown by doubling.
func writeJSONStream(w io.Writer, v any, arrays ...jsonArray) error {
	var head bytes.Buffer
	if err := writeJSON(&head, v); err != nil {
		return err
	}
	rest := head.Bytes()
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, a := range arrays {
		// a top-level key is indented by two spaces, and nothing else is
		// (strings cannot hold a raw newline)
		marker := []byte("\n  \"" + a.key + "\": []")
		at := bytes.Index(rest, marker)
		if at < 0 || bytes.Contains(rest[at+len(marker):], marker) {
			return fmt.Errorf("internal error: JSON field %q not found once", a.key)
		}
		bw.Write(rest[:at+len(marker)-1])
		if err := writeElems(bw, a); err != nil {
			return err
		}
		if a.n > 0 {
			bw.WriteString("\n  ")
		}
		bw.WriteByte(']')
		rest = rest[at+len(marker):]
	}
	bw.Write(rest)
	return bw.Flush()
}

// jsonArrayWriter writes a top-level JSON array element by element, the
// same bytes as writeJSON of the whole slice, holding one element at a
// time.
type jsonArrayWriter struct {
	bw  *bufio.Writer
	buf bytes.Buffer
	enc *indentEncoder
	n   int
	err error
}

func newJSONArrayWriter(w io.Writer) *jsonArrayWriter {
	a := &jsonArrayWriter{bw: bufio.NewWriterSize(w, 64<<10)}
	a.enc = newIndentEncoder(&a.buf, "  ", "  ")
	return a
}

func (a *jsonArrayWriter) add(v any) {
	if a.err != nil {
		return
	}
	a.buf.Reset()
	if a.err = a.enc.Encode(v); a.err != nil {
		return
	}
	if a.n == 0 {
		a.bw.WriteString("[\n  ")
	} else {
		a.bw.WriteString(",\n  ")
	}
	a.n++
	a.bw.Write(bytes.TrimSuffix(a.buf.Bytes(), []byte("\n")))
}

func (a *jsonArrayWriter) close() error {
	if a.err != nil {
		return a.err
	}
	if a.n == 0 {
		a.bw.WriteString("[]\n")
	} else {
		a.bw.WriteString("\n]\n")
	}
	return a.bw.Flush()
}

// line and block make untrusted text (session content, paths, error
// messages that quote them) safe for a terminal: control characters, bidi
// overrides and invalid UTF-8 are shown as escapes (see pkg/termtext and
// docs/output.md). Every text output goes through one of them; JSON output
// never does.
func line(s string) string  { return termtext.Line(s) }
func block(s string) string { return termtext.Block(s) }

// warn prints a warning line on w, made safe for a terminal.
func warn(w io.Writer, format string, a ...any) {
	fmt.Fprintf(w, "sessctl: warning: %s\n", line(fmt.Sprintf(format, a...)))
}

// newTable returns a borderless, left-aligned table in the style of
// kubectl/docker listings.
func newTable(w io.Writer, header ...string) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: "  "}},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: "  "}},
			},
		}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	return t
}

// drawTable writes header and rows as the table newTable draws (through
// trimWriter), the same bytes, at a fraction of the cost: tablewriter's
// work per cell was a third of the CPU of ls over 100,000 sessions.
// Widths are tablewriter's own (twwidth: East Asian wide characters count
// two, colour escapes nothing).
func drawTable(w io.Writer, header []string, rows [][]string) error {
	return drawRows(w, header, len(rows), func(k int, ws []int) []string {
		for i, c := range rows[k] {
			ws[i] = cellWidth(c)
		}
		return rows[k]
	})
}

// drawRows is drawTable of n rows given one by one: row(k, ws) returns
// row k's cells and sets their widths (cellWidth) in ws, so that a caller
// that measured its cells already (ls, on every core) need not hold them
// twice. row is called twice for each row: to measure, then to write.
func drawRows(w io.Writer, header []string, n int, row func(k int, ws []int) []string) error {
	widths := make([]int, len(header))
	hw := make([]int, len(header))
	for i, c := range header {
		hw[i] = cellWidth(c)
		widths[i] = hw[i]
	}
	ws := make([]int, len(header))
	for k := range n {
		row(k, ws)
		for i, x := range ws {
			widths[i] = max(widths[i], x)
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	put := func(cells []string, cw []int) {
		buf = buf[:0]
		for i, c := range cells {
			buf = append(buf, c...)
			if i < len(cells)-1 {
				for range widths[i] - cw[i] + 2 {
					buf = append(buf, ' ')
				}
			}
		}
		bw.Write(bytes.TrimRight(buf, " "))
		bw.WriteByte('\n')
	}
	put(header, hw)
	for k := range n {
		put(row(k, ws), ws)
	}
	return bw.Flush()
}

// twwidth keeps the widths of the last 8,192 strings it measured, in a
// cache it makes when it loads: 2 MB of every run's heap, which counts
// against stats's 64 MB. cellWidth measures the common cell itself, so a
// smaller cache serves what is left (cells with other than printable
// ASCII).
func init() { twwidth.SetCacheCapacity(512) }

// cellWidth is twwidth.Width(c), the columns c takes on a terminal,
// without twwidth's work for the common cell of printable ASCII only.
func cellWidth(c string) int {
	for i := 0; i < len(c); i++ {
		if b := c[i]; b < 0x20 || b >= 0x7f {
			return twwidth.Width(c)
		}
	}
	return len(c)
}

// trimmingWriter removes the padding tablewriter leaves at the end of lines.
type trimmingWriter struct {
	w   io.Writer
	buf []byte
}

func trimWriter(w io.Writer) *trimmingWriter { return &trimmingWriter{w: w} }

func (t *trimmingWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	for {
		i := bytes.IndexByte(t.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := bytes.TrimRight(t.buf[:i], " ")
		if _, err := t.w.Write(append(line, '\n')); err != nil {
			return 0, err
		}
		t.buf = t.buf[i+1:]
	}
}

// flush writes what is left without a newline.
func flushTable(t *trimmingWriter) {
	if len(t.buf) > 0 {
		t.w.Write(bytes.TrimRight(t.buf, " "))
		t.buf = nil
	}
}

// colorer colours text only when enabled.
type colorer struct{ on bool }

func (c colorer) wrap(code, s string) string {
	if !c.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}
func (c colorer) red(s string) string    { return c.wrap("31", s) }
func (c colorer) yellow(s string) string { return c.wrap("33", s) }
func (c colorer) green(s string) string  { return c.wrap("32", s) }
func (c colorer) dim(s string) string    { return c.wrap("2", s) }
func (c colorer) bold(s string) string   { return c.wrap("1", s) }

// useColor: only on a terminal, never with NO_COLOR set (no-color.org) or
// --no-color.
func useColor(w io.Writer, env *appEnv, noColor bool) bool {
	if noColor || env.getenv("NO_COLOR") != "" || env.getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// isTerminal reports whether w is a terminal (for progress output).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// humanBytes formats a size with a binary unit and one decimal, the same way
// cleanup's plan reasons do.
func humanBytes(n int64) string { return cleanup.FormatSize(n) }

// relTime formats t relative to now: "just now", "5m ago", "3h ago", "2d ago",
// or a date for anything older than 60 days.
func relTime(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Format("2006-01-02 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
	return t.Format("2006-01-02")
}

// ellipsis shortens s to at most n runes.
func ellipsis(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n <= 1 {
		return string(r[:n])
	}
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// plural counts: "1 record", "0 records", "12,345 records".
func plural[N int | int64](n N, word string) string { return termtext.Count(n, word) }

// isAre is the verb that agrees with n.
func isAre[N int | int64](n N) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// thousands formats n with comma separators.
func thousands(n int64) string { return termtext.Group(n) }
