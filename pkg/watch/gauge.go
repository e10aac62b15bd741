package watch

import (
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// Gauge follows the context size of a session record by record, as
// tokens.md §5 defines it per format: the newest recorded gauge (Kimi
// _usage, Codex last_token_usage, Claude's last assistant usage, a
// compaction's postTokens) plus an estimate of the text appended after it
// (characters / 4, Kimi's own rule); with no recorded gauge yet, only the
// estimate.
type Gauge struct {
	Agent session.Agent
	// WindowOverride, when > 0, replaces the window.
	WindowOverride int

	recorded  int64 // -1: none yet
	source    string
	since     int64 // estimated tokens of the text after the recorded gauge
	chars     int64 // characters after the recorded gauge, not yet divided
	model     string
	recWindow int64
}

// NewGauge starts a gauge for an agent's session.
func NewGauge(agent session.Agent) *Gauge { return &Gauge{Agent: agent, recorded: -1} }

// Status is the context now.
type Status struct {
	Tokens int64 `json:"tokens"`
	// Basis: "recorded", "recorded+estimate" (text after the last
	// recorded gauge estimated), or "estimate" (nothing recorded yet).
	Basis  string `json:"basis"`
	Source string `json:"source,omitempty"`
	Window int    `json:"window"`
	// WindowSource: "recorded", "model", "override", or "default" (a guess).
	WindowSource string  `json:"window_source"`
	Percent      float64 `json:"percent_of_window"`
	CompactAt    int     `json:"compaction_threshold"`
	// Left is the tokens left before the compaction threshold (negative:
	// past it).
	Left  int64  `json:"tokens_left_before_compaction"`
	Model string `json:"model,omitempty"`
}

// Add feeds one record.
func (g *Gauge) Add(r *session.Record) {
	if r.Kind == session.KindBlank || r.Kind == session.KindCorrupt {
		return
	}
	if r.Model != "" && !r.Synthetic && r.Model != "<synthetic>" {
		g.model = r.Model
	}
	if r.ContextWindow > 0 {
		g.recWindow = r.ContextWindow
	}
	rec, src := session.RecordedContext(r)
	if rec >= 0 {
		g.recorded, g.source, g.since, g.chars = rec, src, 0, 0
		return
	}
	if r.Kind != session.KindMessage && r.Kind != session.KindCompaction {
		return
	}
	n := int64(len([]rune(r.Text)))
	for _, tc := range r.ToolCalls {
		n += int64(len([]rune(tc.Name)) + len([]rune(tc.Input)))
	}
	for _, tr := range r.ToolResults {
		n += int64(len([]rune(tr.Output)))
	}
	g.chars += n
	g.since = g.chars / 4
}

// Now returns the context now against the window and the agent's
// compaction threshold (tokens.ContextWindow, tokens.CompactionThreshold).
func (g *Gauge) Now() Status {
	st := Status{Model: g.model, Source: g.source}
	switch {
	case g.recorded >= 0 && g.since > 0:
		st.Tokens, st.Basis = g.recorded+g.since, "recorded+estimate"
	case g.recorded >= 0:
		st.Tokens, st.Basis = g.recorded, "recorded"
	default:
		st.Tokens, st.Basis = g.since, "estimate"
	}
	l := tokens.LimitsFor(g.Agent, g.model, g.recWindow, g.WindowOverride)
	st.Window, st.WindowSource, st.CompactAt = l.Window, l.Source, l.CompactAt
	if st.Window > 0 {
		st.Percent = float64(st.Tokens) * 100 / float64(st.Window)
	}
	st.Left = int64(st.CompactAt) - st.Tokens
	return st
}
