// Package export writes a session as a readable transcript: Markdown, one
// self-contained HTML page, or JSON. It reads the conversation through
// pkg/show, so a transcript holds exactly what the client sends on resume
// (and with All what it no longer sends, marked), numbered by turn as
// `checkpoints` numbers it.
//
// Session text is untrusted: HTML output escapes every character that
// means something to a browser (html/template's escaper), loads nothing
// from outside the page and runs no script; Markdown output puts session
// text in fenced blocks whose fence is longer than any run of backticks in
// the text, so no session can end the block and inject markup.
package export

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/show"
	"github.com/sessctl/sessctl/pkg/termtext"
)

// Formats.
const (
	Markdown = "md"
	HTML     = "html"
	JSON     = "json"
)

// Options control a transcript.
type Options struct {
	Format string
	// Thinking adds the model's reasoning.
	Thinking bool
	// All adds what the client no longer sends, marked.
	All bool
	// Fold is how many lines of a tool call or result are shown before the
	// rest is folded (FoldLines when 0).
	Fold int
	// Title heads the transcript (the session's title, or its id).
	Title string
	// Redact, when set, rewrites every text of the transcript (the title,
	// and each item's text) before it is written: cmd passes pkg/redact's
	// detector, so the transcript holds no secret it finds.
	Redact func(string) string
}

// FoldLines is where long tool texts are folded by default.
const FoldLines = 12

// Write writes session s as a transcript to w, streaming: memory is one
// item at a time.
func Write(ctx context.Context, w io.Writer, s *session.Session, opt Options) error {
	if opt.Fold <= 0 {
		opt.Fold = FoldLines
	}
	if opt.Redact != nil {
		opt.Title = opt.Redact(opt.Title)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var wr writer
	switch opt.Format {
	case Markdown:
		wr = &mdWriter{w: bw, opt: opt}
	case HTML:
		wr = &htmlWriter{w: bw, opt: opt}
	case JSON:
		wr = &jsonWriter{w: bw}
	default:
		return fmt.Errorf("unknown format %q (md, html or json)", opt.Format)
	}
	visible := opt.Format != JSON // JSON carries the exact text
	if visible {
		opt.Title = termtext.Line(opt.Title)
	}
	if err := wr.begin(s, opt); err != nil {
		return err
	}
	turn := -2
	err := show.Show(ctx, s, show.Options{All: opt.All, Thinking: opt.Thinking}, func(it *show.Item) error {
		if opt.Redact != nil {
			it.Text = opt.Redact(it.Text)
		}
		if visible {
			// a transcript is read in a terminal too (stdout, cat, less -R):
			// control characters and escapes are shown, never sent
			it.Text, it.Name = termtext.Block(it.Text), termtext.Line(it.Name)
		}
		if it.Turn != turn {
			turn = it.Turn
			if err := wr.turn(it.Turn); err != nil {
				return err
			}
		}
		return wr.item(it)
	})
	if err != nil {
		return err
	}
	if err := wr.end(); err != nil {
		return err
	}
	return bw.Flush()
}

type writer interface {
	begin(s *session.Session, opt Options) error
	turn(n int) error
	item(it *show.Item) error
	end() error
}

// label is how an item is headed.
func label(it *show.Item) string {
	var l string
	switch it.Type {
	case show.TypeSummary:
		l = "Compaction summary"
	case show.TypeToolCall:
		l = "Tool call: " + it.Name
	case show.TypeToolResult:
		l = "Tool result"
		if it.Name != "" {
			l += ": " + it.Name
		}
		if it.IsError {
			l += " (error)"
		}
	case show.TypeThinking:
		l = "Thinking"
	default:
		l = strings.ToUpper(it.Role[:1]) + it.Role[1:]
	}
	if it.Injected {
		l += " [injected by the client]"
	}
	if it.State != session.Live {
		l += " [" + it.State.String() + "]"
	}
	return l
}

func turnTitle(n int) string {
	if n < 0 {
		return "Before the first turn"
	}
	return fmt.Sprintf("Turn %d", n)
}

// folded splits a tool text into the lines shown and the rest.
func folded(s string, n int) (head, rest string, more int) {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the text ends with a newline
	}
	if len(lines) <= n {
		return s, "", 0
	}
	return strings.Join(lines[:n], ""), strings.Join(lines[n:], ""), len(lines) - n
}

func tool(it *show.Item) bool {
	return it.Type == show.TypeToolCall || it.Type == show.TypeToolResult
}

// --- Markdown ---

type mdWriter struct {
	w   *bufio.Writer
	opt Options
}

func (m *mdWriter) begin(s *session.Session, opt Options) error {
	fmt.Fprintf(m.w, "# %s\n\n", mdInline(opt.Title))
	fmt.Fprintf(m.w, "- agent: %s\n- session: `%s`\n- file: `%s`\n- exported by sessctl\n", s.Agent, mdCode(termtext.Line(s.ID)), mdCode(termtext.Line(s.Main)))
	return nil
}

func (m *mdWriter) turn(n int) error {
	_, err := fmt.Fprintf(m.w, "\n## %s\n", turnTitle(n))
	return err
}

func (m *mdWriter) item(it *show.Item) error {
	fmt.Fprintf(m.w, "\n**%s**\n\n", mdInline(label(it)))
	if tool(it) {
		head, rest, more := folded(it.Text, m.opt.Fold)
		fence(m.w, head)
		if more > 0 {
			fmt.Fprintf(m.w, "\n<details><summary>%d more lines</summary>\n\n", more)
			fence(m.w, rest)
			fmt.Fprintf(m.w, "\n</details>\n")
		}
		return nil
	}
	fence(m.w, it.Text)
	return nil
}

func (m *mdWriter) end() error { return nil }

// fence writes text in a fenced block whose fence is longer than any run
// of backticks in it.
func fence(w *bufio.Writer, text string) {
	n, run := 3, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	w.WriteString(f + "text\n" + text)
	if !strings.HasSuffix(text, "\n") {
		w.WriteByte('\n')
	}
	w.WriteString(f + "\n")
}

// mdInline makes text safe in a heading or bold label: one line, with
// Markdown and HTML punctuation escaped.
func mdInline(s string) string {
	var b strings.Builder
	for _, r := range strings.Join(strings.Fields(s), " ") {
		if strings.ContainsRune("\\`*_{}[]()#+-.!<>|&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func mdCode(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "`", "'")
}

// --- HTML ---

type htmlWriter struct {
	w      *bufio.Writer
	opt    Options
	inTurn bool
}

var pageHead = template.Must(template.New("head").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{{.Title}}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;background:#fff}
h1{font-size:1.4rem}
h2{font-size:1.1rem;border-bottom:1px solid #ddd;margin-top:2rem}
.meta{color:#666;font-size:.85rem}
.item{margin:.8rem 0;padding:.5rem .8rem;border-left:4px solid #ccc;background:#fafafa}
.user{border-color:#2b6cb0}.assistant{border-color:#2f855a}.tool{border-color:#b7791f}
.summary{border-color:#6b46c1;background:#f5f0ff}.thinking{border-color:#999;color:#555}
.off{opacity:.6}
.label{font-weight:600;font-size:.85rem;margin-bottom:.3rem}
pre{white-space:pre-wrap;word-break:break-word;margin:0;font:13px/1.4 ui-monospace,monospace}
details summary{cursor:pointer;color:#555;font-size:.85rem}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">{{.Agent}} session <code>{{.ID}}</code> · <code>{{.File}}</code> · exported by sessctl</p>
`))

var itemTmpl = template.Must(template.New("item").Parse(`<div class="item {{.Class}}{{if .Off}} off{{end}}">
<div class="label">{{.Label}}</div>
<pre>{{.Head}}</pre>{{if .More}}
<details><summary>{{.More}} more lines</summary><pre>{{.Rest}}</pre></details>{{end}}
</div>
`))

func (h *htmlWriter) begin(s *session.Session, opt Options) error {
	return pageHead.Execute(h.w, map[string]any{"Title": opt.Title, "Agent": string(s.Agent), "ID": termtext.Line(s.ID), "File": termtext.Line(s.Main)})
}

func (h *htmlWriter) turn(n int) error {
	if h.inTurn {
		h.w.WriteString("</section>\n")
	}
	h.inTurn = true
	_, err := fmt.Fprintf(h.w, "<section>\n<h2>%s</h2>\n", template.HTMLEscapeString(turnTitle(n)))
	return err
}

func (h *htmlWriter) item(it *show.Item) error {
	class := it.Role
	switch it.Type {
	case show.TypeSummary:
		class = "summary"
	case show.TypeThinking:
		class = "thinking"
	case show.TypeToolCall, show.TypeToolResult:
		class = "tool"
	}
	head, rest, more := it.Text, "", 0
	if tool(it) {
		head, rest, more = folded(it.Text, h.opt.Fold)
	}
	return itemTmpl.Execute(h.w, map[string]any{"Class": class, "Off": it.State != session.Live, "Label": label(it),
		"Head": head, "Rest": rest, "More": more})
}

func (h *htmlWriter) end() error {
	if h.inTurn {
		h.w.WriteString("</section>\n")
	}
	_, err := h.w.WriteString("</body>\n</html>\n")
	return err
}

// --- JSON ---

type jsonWriter struct {
	w     *bufio.Writer
	first bool
}

// jsonHead is the transcript object before its items.
type jsonHead struct {
	Agent   session.Agent `json:"agent"`
	Session string        `json:"session"`
	File    string        `json:"file"`
}

func (j *jsonWriter) begin(s *session.Session, _ Options) error {
	b, err := json.Marshal(jsonHead{Agent: s.Agent, Session: s.ID, File: s.Main})
	if err != nil {
		return err
	}
	// {"agent":…,"session":…,"file":…,"items":[ … ]}: the head's fields,
	// then the items streamed one by one
	j.w.Write(b[:len(b)-1])
	j.w.WriteString(`,"items":[`)
	j.first = true
	return nil
}

func (j *jsonWriter) turn(int) error { return nil }

func (j *jsonWriter) item(it *show.Item) error {
	if !j.first {
		j.w.WriteByte(',')
	}
	j.first = false
	j.w.WriteString("\n")
	enc := json.NewEncoder(j.w)
	enc.SetEscapeHTML(false)
	return enc.Encode(it) // ends with a newline, which JSON allows
}

func (j *jsonWriter) end() error {
	_, err := j.w.WriteString("]}\n")
	return err
}
