package tokens

import (
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
)

// normalModel lowercases a model id and drops a provider prefix such as
// "openai/" or "moonshotai/".
func normalModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if k := strings.LastIndexByte(m, '/'); k >= 0 {
		m = m[k+1:]
	}
	return m
}

// family reports whether m is name itself or name followed by "-" or ".",
// so that "o3" matches "o3-mini" but not "o30".
func family(m, name string) bool {
	rest, ok := strings.CutPrefix(m, name)
	return ok && (rest == "" || rest[0] == '-' || rest[0] == '.' || rest[0] == '[')
}

// EncodingForModel returns the encoding to count a model's tokens with.
// exact is true when the model really uses it: OpenAI's gpt-4o, gpt-4.1,
// gpt-4.5, gpt-5 family, o1/o3/o4, gpt-oss and Codex models (o200k_base) and
// the older gpt-4, gpt-3.5 and text-embedding models (cl100k_base). For
// every other model (Claude, Kimi, GLM, unknown ones) it returns o200k_base
// with exact false: the count is then an estimate and must be labelled so.
func EncodingForModel(model string) (enc Encoding, exact bool) {
	m := normalModel(model)
	switch {
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "chatgpt-4o"),
		family(m, "gpt-4.1"), family(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"), family(m, "gpt-oss"),
		family(m, "o1"), family(m, "o3"), family(m, "o4"),
		strings.HasPrefix(m, "codex"), strings.Contains(m, "-codex"):
		return O200kBase, true
	case m == "gpt-4", strings.HasPrefix(m, "gpt-4-"), family(m, "gpt-3.5"), family(m, "gpt-35"),
		strings.HasPrefix(m, "text-embedding-3"), m == "text-embedding-ada-002":
		return Cl100kBase, true
	}
	return O200kBase, false
}

// Context windows, in tokens.
const (
	claudeWindow    = 200_000
	claude1MWindow  = 1_000_000
	gpt5Window      = 258_400 // what Codex records for gpt-5 and gpt-5.3-codex
	gpt41Window     = 1_047_576
	gpt4oWindow     = 128_000
	oSeriesWindow   = 200_000
	kimiWindow      = 262_144 // Kimi's max_context_size for kimi-k2 and kimi-for-coding
	glm46Window     = 200_000
	defaultWindow   = 200_000
	reservedContext = 50_000 // sessctl's budget reserve (Kimi's reserved_context_size too)
	defaultTrigger  = 80     // percent: clawdcode's trigger and sessctl's "getting full"
)

// ContextWindow returns a model's context window in tokens. known is false
// when the model is not recognised; the window is then 200,000, a guess.
// A Claude model id with the "[1m]" suffix (claude-opus-4-8[1m]) has
// 1,000,000, and so have the claude-opus-5 models (claude-opus-5-5). For Codex sessions prefer the model_context_window recorded in
// the file, and for Kimi the recorded max_context_tokens.
func ContextWindow(model string) (window int, known bool) {
	m := normalModel(model)
	if strings.HasSuffix(m, "[1m]") || family(m, "claude-opus-5") {
		// claude-opus-5-5, Claude Code 2.1.330's default: the client's
		// result reports contextWindow 1000000 without the suffix
		return claude1MWindow, true
	}
	switch {
	case strings.Contains(m, "claude"), m == "opus", m == "sonnet", m == "haiku":
		return claudeWindow, true
	case strings.HasPrefix(m, "gpt-5"):
		return gpt5Window, true
	case family(m, "gpt-4.1"):
		return gpt41Window, true
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "chatgpt-4o"):
		return gpt4oWindow, true
	case family(m, "o3"), family(m, "o4-mini"):
		return oSeriesWindow, true
	case strings.HasPrefix(m, "kimi-k2"), m == "kimi-for-coding":
		return kimiWindow, true
	case strings.HasPrefix(m, "moonshot"):
		// moonshot-v1-8k, -32k and -128k carry their window in the name.
		for _, w := range []struct {
			suffix string
			window int
		}{{"-8k", 8 << 10}, {"-32k", 32 << 10}, {"-128k", 128 << 10}} {
			if strings.HasSuffix(m, w.suffix) {
				return w.window, true
			}
		}
		return kimiWindow, true
	case family(m, "glm-4.6"):
		return glm46Window, true
	}
	return defaultWindow, false
}

// UsableBudget is sessctl's convention for the input a window leaves room
// for: window − 50,000 when the window is larger than 50,000, else 80 % of
// it (200,000 → 150,000; 258,400 → 208,400; 32,000 → 25,600).
func UsableBudget(window int) int {
	if window > reservedContext {
		return window - reservedContext
	}
	return window * defaultTrigger / 100
}

// DefaultTrigger is the share of the window, in percent, at which sessctl
// says a context is getting full when an agent's own rule is unknown (80:
// clawdcode's rule, and sessctl's convention for Claude Code and Codex).
const DefaultTrigger = defaultTrigger

// Limits is a context window and what follows from it.
type Limits struct {
	Window int `json:"tokens"`
	// Source: "override", "recorded" (in the file), "model", or "default"
	// (model unknown: a guess).
	Source string `json:"source"`
	// Usable is sessctl's usable input budget (UsableBudget).
	Usable int `json:"usable_budget"`
	// CompactAt is the context size at which the agent compacts (its own
	// rule where known, DefaultTrigger otherwise).
	CompactAt int `json:"compaction_threshold"`
}

// LimitsFor works out the window of a session of agent a: override when
// set, else the window the file recorded, else the model's (the agent's
// default model when the file names none), else the agent's default.
func LimitsFor(a session.Agent, model string, recorded int64, override int) Limits {
	g, _ := session.As[session.Gauge](a)
	var l Limits
	switch {
	case override > 0:
		l.Window, l.Source = override, "override"
	case recorded > 0:
		l.Window, l.Source = int(recorded), "recorded"
	default:
		if model == "" && g != nil {
			model = g.DefaultModel()
		}
		w, known := ContextWindow(model)
		l.Window, l.Source = w, "model"
		if !known {
			l.Source = "default"
			if g != nil && g.DefaultWindow() > 0 {
				l.Window = g.DefaultWindow()
			}
		}
	}
	l.Usable = UsableBudget(l.Window)
	l.CompactAt = l.Window * defaultTrigger / 100
	if g != nil {
		l.CompactAt = g.CompactAt(l.Window)
	}
	return l
}
