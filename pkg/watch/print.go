package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/termtext"
)

// TextPrinter prints one line per record and a status line after each batch.
type TextPrinter struct {
	W     io.Writer
	Color bool
	// Width is the preview width in characters (default 100).
	Width int
	last  string
}

func (p *TextPrinter) col(code, s string) string {
	if !p.Color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *TextPrinter) width() int {
	if p.Width <= 0 {
		return 100
	}
	return p.Width
}

// Record prints one record: time, role, a one-line preview; tool calls
// with name and arguments; tool results with their size.
func (p *TextPrinter) Record(r *session.Record, _ Status, at time.Time) {
	ts := p.col("2", at.Local().Format("15:04:05"))
	w := p.width()
	switch r.Kind {
	case session.KindCorrupt:
		fmt.Fprintf(p.W, "%s %s line %d: %s\n", ts, p.col("31", "corrupt"), r.Line.Num, r.Line.Status.Describe())
		return
	case session.KindUnknown:
		fmt.Fprintf(p.W, "%s %s %s\n", ts, p.col("33", "unknown"), Preview(r.Type, w))
		return
	case session.KindCheckpoint:
		fmt.Fprintf(p.W, "%s %s\n", ts, p.col("2", fmt.Sprintf("checkpoint %d", r.CheckpointID)))
		return
	case session.KindSystemPrompt:
		fmt.Fprintf(p.W, "%s %-9s %s\n", ts, "system", p.col("2", fmt.Sprintf("system prompt, %s", size(len(r.Text)))))
		return
	case session.KindCompaction:
		fmt.Fprintf(p.W, "%s %s %s\n", ts, p.col("35", "compaction"), Preview(r.Text, w))
		return
	}
	role := string(r.Role)
	if role == "" {
		role = r.Type
	}
	if r.Thinking != "" {
		fmt.Fprintf(p.W, "%s %-9s %s\n", ts, termtext.Line(role), p.col("2", "(thinking) "+Preview(r.Thinking, w-11)))
	}
	// a tool result's text is its output: shown once, on the result line
	if r.Text != "" && len(r.ToolResults) == 0 || (len(r.ToolCalls) == 0 && len(r.ToolResults) == 0 && r.Thinking == "") {
		text := r.Text
		if r.UserPrompt && r.Prompt != "" {
			text = r.Prompt
		}
		label := fmt.Sprintf("%-9s", termtext.Line(role))
		if r.Role == session.RoleUser && r.UserPrompt {
			label = p.col("1", label)
		}
		fmt.Fprintf(p.W, "%s %s %s\n", ts, label, Preview(text, w))
	}
	for _, tc := range r.ToolCalls {
		name := termtext.Line(tc.Name)
		fmt.Fprintf(p.W, "%s %s %s %s\n", ts, p.col("36", "tool call"), p.col("1", name), Preview(tc.Input, w-len(name)-1))
	}
	for _, tr := range r.ToolResults {
		what := "tool result"
		if tr.IsError {
			what = p.col("31", "tool error")
		} else {
			what = p.col("36", what)
		}
		fmt.Fprintf(p.W, "%s %s %s  %s\n", ts, what, size(len(tr.Output)), p.col("2", Preview(tr.Output, w-24)))
	}
}

// Status prints the context line when it changed.
func (p *TextPrinter) Status(st Status) {
	line := StatusLine(st)
	if line == p.last {
		return
	}
	p.last = line
	code := "32"
	switch {
	case st.Left <= 0:
		code = "31"
	case st.CompactAt > 0 && st.Tokens*100 >= int64(st.CompactAt)*85:
		code = "33"
	}
	fmt.Fprintf(p.W, "  %s\n", p.col(code, line))
}

// StatusLine is the context status in words.
func StatusLine(st Status) string {
	basis := st.Basis
	if st.WindowSource == "default" {
		basis += ", window assumed"
	}
	s := fmt.Sprintf("context %s / %s tokens (%.1f%%, %s)", thousands(st.Tokens), thousands(int64(st.Window)), st.Percent, basis)
	if st.Left > 0 {
		return s + fmt.Sprintf(" · %s to compaction at %s", thousands(st.Left), thousands(int64(st.CompactAt)))
	}
	return s + fmt.Sprintf(" · past the compaction threshold %s by %s", thousands(int64(st.CompactAt)), thousands(-st.Left))
}

// Event prints what happened to the file.
func (p *TextPrinter) Event(e Event) {
	msg := e.Kind
	switch e.Kind {
	case EventStarted:
		msg = "following " + termtext.Line(e.Path)
	case EventRotated:
		msg = "rotated: " + termtext.Line(e.Path) + " is a new file"
	case EventTruncated:
		msg = "truncated: " + termtext.Line(e.Path)
	case EventDeleted:
		msg = "deleted: " + termtext.Line(e.Path)
	case EventSwitched:
		msg = "now following " + termtext.Line(e.Path)
	default:
		msg = termtext.Line(msg)
	}
	if e.Detail != "" {
		msg += " (" + termtext.Line(e.Detail) + ")"
	}
	fmt.Fprintf(p.W, "%s %s\n", p.col("2", "--"), p.col("1", msg))
	p.last = "" // show the status again after an event
}

// JSONPrinter writes one JSON object per line: records (field names in
// JSONRecord) and events ({"event": …}).
type JSONPrinter struct {
	W   io.Writer
	enc *json.Encoder
}

// JSONRecord is one record in watch --json output.
type JSONRecord struct {
	Time        time.Time            `json:"time"`
	Agent       session.Agent        `json:"agent"`
	Line        int                  `json:"line"`
	Kind        string               `json:"kind"`
	Type        string               `json:"type,omitempty"`
	Role        session.Role         `json:"role,omitempty"`
	Text        string               `json:"text,omitempty"`
	Thinking    string               `json:"thinking,omitempty"`
	ToolCalls   []session.ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []session.ToolResult `json:"tool_results,omitempty"`
	Model       string               `json:"model,omitempty"`
	Usage       *session.Usage       `json:"usage,omitempty"`
	UserPrompt  bool                 `json:"user_prompt,omitempty"`
	Status      string               `json:"line_status,omitempty"`
	Context     Status               `json:"context"`
}

func (p *JSONPrinter) encode(v any) {
	if p.enc == nil {
		p.enc = json.NewEncoder(p.W)
		p.enc.SetEscapeHTML(false)
	}
	p.enc.Encode(v)
}

// Record writes the normalised record.
func (p *JSONPrinter) Record(r *session.Record, st Status, at time.Time) {
	jr := JSONRecord{Time: at, Agent: r.Agent, Line: r.Line.Num, Kind: r.Kind.String(), Type: r.Type, Role: r.Role,
		Text: r.Text, Thinking: r.Thinking, ToolCalls: r.ToolCalls, ToolResults: r.ToolResults, Model: r.Model,
		Usage: r.Usage, UserPrompt: r.UserPrompt, Context: st}
	if r.Kind == session.KindCorrupt {
		jr.Status = r.Line.Status.String()
	}
	p.encode(jr)
}

// Status is carried by every record; nothing extra is written.
func (p *JSONPrinter) Status(Status) {}

// Event writes the event.
func (p *JSONPrinter) Event(e Event) { p.encode(e) }

// Preview collapses white space and shortens s to n characters; control
// characters and the like are shown as escapes (pkg/termtext).
func Preview(s string, n int) string {
	if n < 8 {
		n = 8
	}
	if len(s) > n*8 {
		k := n * 8
		for k > 0 && !utf8.RuneStart(s[k]) { // cut at a character boundary
			k--
		}
		s = s[:k]
	}
	s = termtext.Line(session.OneLine(s))
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

func size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func thousands(n int64) string { return termtext.Group(n) }
