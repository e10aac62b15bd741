package stats

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

// Options for Analyze.
type Options struct {
	// Window overrides the context window (tokens); 0 = from the file or
	// the model.
	Window int
	// Top is how many of the largest records to keep.
	Top int
	// Heuristic estimates with ceil(bytes/4) instead of the tokenizer.
	Heuristic bool
	// Progress, when set, is told the bytes read of the main transcript.
	Progress Progress
}

// Report is everything stats shows for one session.
type Report struct {
	Agent   session.Agent `json:"agent"`
	ID      string        `json:"id"`
	Project string        `json:"project"`
	Main    string        `json:"main"`
	Model   string        `json:"model"`

	Window Window `json:"window"`
	// Context is how full the context is now.
	Context ContextNow `json:"context"`
	// Consumption is the recorded usage of every file of the session.
	Consumption *SessionUsage `json:"consumption"`
	// Estimate says how the estimated numbers below were made.
	Estimate EstimateInfo `json:"estimate"`
	// ByRole, ByTool, Tools: estimated tokens of the main transcript.
	ByRole  []RoleTokens `json:"by_role"`
	ByTool  []ToolTokens `json:"by_tool"`
	Tools   ToolTokens   `json:"tools"` // all tools: calls vs results
	Largest []Largest    `json:"largest"`
	Growth  []Growth     `json:"growth"`
	// GrowthUnit is "turn" (a user prompt) or "checkpoint" (a Kimi
	// _checkpoint record): what starts a row of Growth.
	GrowthUnit string `json:"growth_unit"`

	Records      int   `json:"records"`
	Compactions  int   `json:"compactions"`
	Corrupt      int   `json:"corrupt_lines"`
	CorruptLines []int `json:"corrupt_line_numbers,omitempty"`
	Subagents    int   `json:"subagent_files"`
	// ClientCheck holds the client's own token totals against sessctl's
	// count, when the main transcript records them (Claude Code 2.1.330's
	// cost-state); nil otherwise.
	ClientCheck *ClientCheck `json:"client_check,omitempty"`
}

// Window is the context window and the limits derived from it.
type Window struct {
	Tokens int `json:"tokens"`
	// Source: "override", "recorded" (in the file), "model", or
	// "default" (model unknown: a guess).
	Source string `json:"source"`
	// Usable is sessctl's usable input budget (tokens.md §1).
	Usable int `json:"usable_budget"`
	// CompactAt is the context size at which the agent compacts (Kimi's
	// rule; 80 % for the others, sessctl's convention).
	CompactAt int `json:"compaction_threshold"`
}

// ContextNow is the size of the context now.
type ContextNow struct {
	// Recorded is the latest context gauge the files hold (-1: none).
	Recorded int64 `json:"recorded"`
	// RecordedSource says which field it came from.
	RecordedSource string `json:"recorded_source,omitempty"`
	// Estimated is the estimate of the active context's text (since the
	// last compaction), with the tokenizer or heuristic in Estimate.
	Estimated int64 `json:"estimated"`
	// Tokens is Recorded when there is one, else Estimated; Basis says
	// which.
	Tokens  int64   `json:"tokens"`
	Basis   string  `json:"basis"`
	Percent float64 `json:"percent_of_window"`
	// Left is the tokens left before the compaction threshold (negative:
	// past it).
	Left int64 `json:"tokens_left_before_compaction"`
}

// EstimateInfo labels estimated numbers.
type EstimateInfo struct {
	Method string `json:"method"` // o200k_base, cl100k_base, or bytes/4
	// Exact is true only when the model really uses that tokenizer.
	Exact bool  `json:"exact"`
	Total int64 `json:"total_tokens"`
}

// RoleTokens is estimated tokens of one role.
type RoleTokens struct {
	Role    string `json:"role"`
	Records int    `json:"records"`
	Tokens  int64  `json:"tokens"`
}

// ToolTokens is estimated tokens of one tool's calls and results.
type ToolTokens struct {
	Name         string `json:"name"`
	Calls        int    `json:"calls"`
	CallTokens   int64  `json:"call_tokens"`
	Results      int    `json:"results"`
	ResultTokens int64  `json:"result_tokens"`
}

// Largest is one of the largest records.
type Largest struct {
	Line    int    `json:"line"`
	Role    string `json:"role"`
	Tool    string `json:"tool,omitempty"`
	Tokens  int64  `json:"tokens"`
	Preview string `json:"preview"`
}

// Growth is the context at the end of one turn (or checkpoint).
type Growth struct {
	// N is the number `checkpoints` lists and `revert --checkpoint N`
	// takes: the turn's place from 0 (the agent's conversation model
	// numbers them), or the Kimi checkpoint id; -1 for a turn that cannot
	// be reverted to (rolled back already).
	N int `json:"n"`
	// State is "live" for a turn the client still sends, else why not:
	// rolled_back, compacted, off_chain (session.State).
	State string `json:"state"`
	Line  int    `json:"line"`
	// Estimated is the estimated active context at the end of the turn,
	// Added what the turn added to it.
	Estimated int64 `json:"estimated"`
	Added     int64 `json:"added"`
	// Recorded is the latest recorded gauge by then (-1: none).
	Recorded int64 `json:"recorded"`
}

// item is one record's share of the estimate, waiting for its count.
type item struct {
	line      int
	role      string // bucket
	tool      string
	texts     []string // counted together
	preview   string
	restart   bool // the active context restarts here (a compaction the client resumes from)
	mark      *mark
	recorded  int64 // -1: the record gives no size; -2: the size is unknown from here
	recSource string
	pending   int64 // the agent's own estimate of the texts (ContextRules.Pending)
	cut       int64 // the tokens of the parts of its texts cut from a huge line
}

// mark is a record that starts a turn, with the context as it stood just
// before it: the end of the turn before.
type mark struct {
	line       int
	checkpoint bool // a checkpoint record (else a user prompt)
	at         snapshot
}

// snapshot is the context at one point of the file.
type snapshot struct {
	active   int64 // estimated
	recorded int64 // -1: none
	restarts int   // restarts of the active context so far
}

// batchBytes bounds the text held for counting at once.
const batchBytes = 2 << 20

// Analyze reads one session: the main transcript for the estimates, every
// file for recorded usage, and the turns from the agent's conversation
// model.
func Analyze(ctx context.Context, s *session.Session, opt Options) (*Report, error) {
	rep := &Report{Agent: s.Agent, ID: s.ID, Project: s.Project, Main: s.Main, Context: ContextNow{Recorded: -1}}
	sus, err := Consumption(ctx, []*session.Session{s}, nil)
	if err != nil {
		return nil, err
	}
	Close(sus) // the totals are what the report needs
	rep.Consumption = sus[0]
	if rep.Consumption.Project != "" {
		rep.Project = rep.Consumption.Project
	}
	for _, f := range UsageFiles(s) {
		if f.Role == session.FileSubagent {
			rep.Subagents++
		}
	}
	f := session.FormatFor(s.Agent)
	if f == nil {
		return nil, fmt.Errorf("%s: not a session file of a known agent", s.Main)
	}

	a := newAnalyzer(rep, opt)
	a.ctx = ctx
	// the turns: from the records this pass reads, where the home can
	// number them so (the file is then decoded once), else from the
	// home's own read of the file
	var tracker session.TurnTracker
	if tt, ok := session.As[session.TurnTracking](s.Agent); ok && trackTurns {
		tracker = tt.NewTurnTracker()
	} else {
		turns, err := turnsOf(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Main, err)
		}
		a.setTurns(turns)
	}
	a.tracking = tracker != nil
	var size int64
	for _, fi := range s.Files {
		if fi.Path == s.Main {
			size = fi.Size
		}
	}
	a.precounted = !countAfter
	err = readParallel(ctx, s.Main, f, a.countCut, a.precount, func(r *session.Record, bigs []bigCount, counts []int) error {
		if opt.Progress != nil && size > 0 {
			opt.Progress(r.Line.End(), size)
		}
		a.bigs, a.pre = bigs, counts
		if tracker != nil {
			tracker.Add(r)
		}
		return a.record(r)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Main, err)
	}
	a.flush()
	if tracker != nil {
		// the marks were set at every record that may start a turn: keep
		// those that do
		a.setTurns(tracker.Turns())
		marks := a.marks[:0]
		for _, m := range a.marks {
			if _, ok := a.turns[m.line]; ok {
				marks = append(marks, m)
			}
		}
		a.marks = marks
	}
	a.finish()
	return rep, nil
}

type analyzer struct {
	ctx     context.Context
	rep     *Report
	opt     Options
	counter *tokens.Counter
	rules   ContextRules // nil: no restarts, no pending estimate
	client  ClientTotals // nil: the client records no totals of its own
	// the newest client totals seen, and where
	clientTotals map[string]session.Usage
	clientCost   *float64
	clientSource string
	clientLine   int
	items        []item
	bytes        int
	// precounted: the tokens of each record's texts were counted with its
	// decoding, on every core (precount), and pre holds the counts of the
	// record at hand, in the order add sees its texts
	precounted bool
	pre        []int

	roles   map[string]*RoleTokens
	tools   map[string]*ToolTokens
	callTo  map[string]string // open tool call id -> name
	largest minHeap

	turns map[int]session.Turn // by line
	bigs  []bigCount           // the cut strings of the record's line
	marks []mark
	// tracking: the turns are known only after the pass (TurnTracker);
	// until then every record that may start one is marked
	tracking   bool
	active     int64 // estimated active context
	restarts   int
	recorded   int64
	recSource  string
	pendingEst int64 // the agent's estimate of text since the last recorded size
	recWindow  int64
	model      string
}

func newAnalyzer(rep *Report, opt Options) *analyzer {
	a := &analyzer{rep: rep, opt: opt, roles: map[string]*RoleTokens{}, tools: map[string]*ToolTokens{},
		callTo: map[string]string{}, recorded: -1}
	a.rules, _ = session.As[ContextRules](rep.Agent)
	a.client, _ = session.As[ClientTotals](rep.Agent)
	if !opt.Heuristic {
		// o200k_base: exact for OpenAI's current models, an estimate for
		// the others (labelled in finish)
		if c, err := tokens.NewCounter(tokens.O200kBase); err == nil {
			a.counter = c
		}
	}
	return a
}

func (a *analyzer) record(r *session.Record) error {
	rep := a.rep
	switch r.Kind {
	case session.KindBlank:
		return nil
	case session.KindCorrupt:
		rep.Corrupt++
		if len(rep.CorruptLines) < 20 {
			rep.CorruptLines = append(rep.CorruptLines, r.Line.Num)
		}
		return nil
	}
	rep.Records++
	if a.client != nil && r.Kind == session.KindMetadata {
		if t, src, ok := a.client.ClientTotals(r); ok {
			a.clientTotals, a.clientSource, a.clientLine = t, src, r.Line.Num
			a.clientCost = nil
			if cc, ok := a.client.(ClientCost); ok {
				if usd, ok := cc.ClientCostUSD(r); ok {
					a.clientCost = &usd
				}
			}
		}
	}
	if r.Model != "" && !r.Synthetic {
		a.model = r.Model
	}
	if r.ContextWindow > 0 {
		a.recWindow = r.ContextWindow
	}
	it := item{line: r.Line.Num, recorded: -1}
	if r.Kind == session.KindCompaction {
		rep.Compactions++
	}
	it.restart = a.rules != nil && a.rules.Restarts(r)
	// recorded context gauges, by format (tokens.md §5)
	if n, src := session.RecordedContext(r); n >= 0 {
		it.recorded, it.recSource = n, src
	} else if it.restart {
		it.recorded = -2 // unknown after the restart until a record says
	}
	if _, ok := a.turns[r.Line.Num]; ok || a.tracking && (r.UserPrompt || r.Kind == session.KindCheckpoint) {
		it.mark = &mark{line: r.Line.Num, checkpoint: r.Kind == session.KindCheckpoint}
	}
	// what the record puts in the context
	switch {
	case len(r.ToolResults) > 0:
		it.role = "tool_result"
		for _, tr := range r.ToolResults {
			it.texts = append(it.texts, tr.Output)
			name, ok := a.callTo[tr.CallID]
			if ok {
				// answered: forget it, so the map holds only open calls
				delete(a.callTo, tr.CallID)
			} else {
				name = "(unknown)"
			}
			if it.tool == "" {
				it.tool = name
			}
		}
	case len(r.ToolCalls) > 0:
		it.role = "tool_call"
		for _, tc := range r.ToolCalls {
			it.texts = append(it.texts, tc.Name+" "+tc.Input)
			a.callTo[tc.ID] = tc.Name
			if it.tool == "" {
				it.tool = tc.Name
			}
		}
		// a Claude/Kimi assistant record can hold text beside its calls
		if r.Text != "" {
			a.add(item{line: r.Line.Num, role: "assistant", texts: []string{r.Text}, preview: r.Text, mark: it.mark,
				restart: it.restart, recorded: it.recorded, recSource: it.recSource})
			it.mark, it.restart, it.recorded, it.recSource = nil, false, -1, ""
		}
	case r.Kind == session.KindCompaction:
		it.role = "summary"
		it.texts = []string{r.Text}
	case r.Kind == session.KindSystemPrompt, r.Role == session.RoleSystem, r.Role == session.RoleDeveloper:
		it.role = "system"
		it.texts = []string{r.Text}
	case r.Role == session.RoleUser:
		it.role = "user"
		it.texts = []string{r.Text}
	case r.Role == session.RoleAssistant:
		it.role = "assistant"
		it.texts = []string{r.Text}
	}
	if r.Thinking != "" {
		a.add(item{line: r.Line.Num, role: "thinking", texts: []string{r.Thinking}, preview: r.Thinking, recorded: -1})
	}
	if it.preview == "" && len(it.texts) > 0 {
		it.preview = it.texts[0]
	}
	a.add(it)
	return nil
}

// recordTexts are the texts record gives add for r, in the order add sees
// them: an assistant text beside tool calls, the thinking, then the texts
// of the record's own item.
func recordTexts(r *session.Record) []string {
	switch r.Kind {
	case session.KindBlank, session.KindCorrupt:
		return nil
	}
	var out []string
	if len(r.ToolResults) == 0 && len(r.ToolCalls) > 0 && r.Text != "" {
		out = append(out, r.Text)
	}
	if r.Thinking != "" {
		out = append(out, r.Thinking)
	}
	switch {
	case len(r.ToolResults) > 0:
		for _, tr := range r.ToolResults {
			out = append(out, tr.Output)
		}
	case len(r.ToolCalls) > 0:
		for _, tc := range r.ToolCalls {
			out = append(out, tc.Name+" "+tc.Input)
		}
	case r.Kind == session.KindCompaction, r.Kind == session.KindSystemPrompt, r.Role == session.RoleSystem,
		r.Role == session.RoleDeveloper, r.Role == session.RoleUser, r.Role == session.RoleAssistant:
		out = append(out, r.Text)
	}
	return out
}

// precount counts the tokens of the texts record will give add for r
// (recordTexts, with the parts cut from a huge line put back as add puts
// them back). It runs beside the decoding, on every core.
func (a *analyzer) precount(r *session.Record, bigs []bigCount) []int {
	texts := recordTexts(r)
	counts := make([]int, len(texts))
	for i, t := range texts {
		t, _ = expand(t, bigs)
		switch {
		case a.counter == nil:
			counts[i] = tokens.CodexApprox(t)
		case len(t) > countAlone:
			counts[i] = a.counter.CountAll([]string{t})[0]
		default:
			counts[i] = a.counter.Count(t)
		}
	}
	return counts
}

// countAfter makes Analyze count the texts after the decoding, in batches,
// as it did before precount: for the test that holds the two to each other.
var countAfter bool

// countAlone is the length past which precount spreads one text over every
// core (a huge paste) rather than counting it on the worker at hand.
const countAlone = 512 << 10

// pending is the agent's own estimate of a text (ContextRules.Pending).
func (a *analyzer) pending(text string) int64 {
	if a.rules == nil {
		return 0
	}
	return a.rules.Pending(text)
}

// preview is session.Preview of the start of s: a preview shows a few
// dozen characters, and the whole of a long text would cost several times
// its size to make it.
func preview(s string, n int) string {
	if limit := 8 * n; len(s) > limit {
		k := limit
		for k > 0 && !utf8.RuneStart(s[k]) {
			k--
		}
		s = s[:k] + "…"
	}
	return session.Preview(s, n)
}

// countCut estimates the part of a long string cut from a huge line
// (shorten): its raw JSON is decoded and counted a chunk at a time.
func (a *analyzer) countCut(raw []byte) bigCount {
	var c bigCount
	var batch []string
	size := 0
	count := func() {
		if a.counter != nil {
			for _, n := range a.counter.CountAll(batch) {
				c.tokens += int64(n)
			}
		} else {
			for _, t := range batch {
				c.tokens += int64(tokens.CodexApprox(t))
			}
		}
		batch, size = batch[:0], 0
	}
	chunks(raw, func(t string) {
		if a.ctx != nil && a.ctx.Err() != nil {
			return // the read stops at its next look at the context
		}
		c.pending += a.pending(t)
		batch = append(batch, t)
		if size += len(t); size >= countBatch {
			count()
		}
	})
	count()
	return c
}

// now is the context as it stands.
func (a *analyzer) now() snapshot {
	rec := a.recorded
	if rec >= 0 {
		rec += a.pendingEst
	}
	return snapshot{active: a.active, recorded: rec, restarts: a.restarts}
}

func (a *analyzer) add(it item) {
	// the agent's own estimate applies to what the model reads as text
	pend := it.role != "tool_call" && it.role != "thinking"
	var n int64
	for i, t := range it.texts {
		t, cut := expand(t, a.bigs)
		it.cut += cut.tokens
		if pend {
			it.pending += a.pending(t) + cut.pending
		}
		if a.precounted {
			n += int64(a.pre[0])
			a.pre = a.pre[1:]
			continue
		}
		a.bytes += len(t)
		// a copy: the Record's strings may alias a reused buffer
		it.texts[i] = strings.Clone(t)
	}
	it.preview, _ = expand(it.preview, a.bigs)
	it.preview = preview(it.preview, 72)
	if a.precounted {
		a.apply(it, n+it.cut)
		return
	}
	a.items = append(a.items, it)
	if a.bytes >= batchBytes {
		a.flush()
	}
}

// flush counts the waiting texts and applies them in order.
func (a *analyzer) flush() {
	var texts []string
	for _, it := range a.items {
		texts = append(texts, it.texts...)
	}
	var counts []int
	if a.counter != nil {
		counts = a.counter.CountAll(texts)
	} else {
		counts = make([]int, len(texts))
		for i, t := range texts {
			counts[i] = tokens.CodexApprox(t)
		}
	}
	k := 0
	for _, it := range a.items {
		var n int64
		for range it.texts {
			n += int64(counts[k])
			k++
		}
		a.apply(it, n+it.cut)
	}
	a.items, a.bytes = a.items[:0], 0
}

func (a *analyzer) apply(it item, n int64) {
	rep := a.rep
	if it.mark != nil {
		it.mark.at = a.now()
		a.marks = append(a.marks, *it.mark)
	}
	if it.restart {
		a.active = 0
		a.restarts++
	}
	switch {
	case it.recorded == -2:
		a.recorded, a.recSource = -1, ""
	case it.recSource != "":
		a.recorded, a.recSource = it.recorded, it.recSource
		a.pendingEst = 0
	}
	if it.role == "" {
		return
	}
	a.active += n
	if a.recorded >= 0 && it.role != "thinking" {
		a.pendingEst += it.pending
	}
	rt := a.roles[it.role]
	if rt == nil {
		rt = &RoleTokens{Role: it.role}
		a.roles[it.role] = rt
	}
	rt.Records++
	rt.Tokens += n
	rep.Estimate.Total += n
	if it.tool != "" {
		tt := a.tools[it.tool]
		if tt == nil {
			tt = &ToolTokens{Name: it.tool}
			a.tools[it.tool] = tt
		}
		if it.role == "tool_call" {
			tt.Calls++
			tt.CallTokens += n
			rep.Tools.Calls++
			rep.Tools.CallTokens += n
		} else {
			tt.Results++
			tt.ResultTokens += n
			rep.Tools.Results++
			rep.Tools.ResultTokens += n
		}
	}
	if a.opt.Top > 0 {
		l := Largest{Line: it.line, Role: it.role, Tool: it.tool, Tokens: n, Preview: it.preview}
		if a.largest.Len() < a.opt.Top {
			heap.Push(&a.largest, l)
		} else if n > a.largest[0].Tokens {
			a.largest[0] = l
			heap.Fix(&a.largest, 0)
		}
	}
}

// trackTurns lets Analyze number turns from its own pass where the home
// can; false only in the test that holds the two ways to each other.
var trackTurns = true

// setTurns keeps the turns by line.
func (a *analyzer) setTurns(turns []session.Turn) {
	a.turns = make(map[int]session.Turn, len(turns))
	for _, t := range turns {
		a.turns[t.Line] = t
	}
}

// turnsOf lists the turns of a session's main transcript from the agent's
// conversation model, numbered as checkpoints and revert number them.
//
// TODO(conversation): the homes that do not implement session.Conversation
// yet (Codex, Kimi, clawdcode on main today) get pkg/checkpoint's listing,
// which numbers them the same way; drop this fallback, and the import,
// once every home implements it.
func turnsOf(ctx context.Context, s *session.Session) ([]session.Turn, error) {
	conv, ok := session.As[session.Conversation](s.Agent)
	if !ok {
		return nil, nil
	}
	return conv.Turns(ctx, s.Main)
}

// growth makes the rows of Growth from the marks: one per turn, each
// ending where the next begins.
func (a *analyzer) growth() {
	rep := a.rep
	rep.GrowthUnit = "turn"
	if len(a.marks) > 0 && a.marks[0].checkpoint {
		rep.GrowthUnit = "checkpoint"
	}
	rep.Growth = make([]Growth, 0, len(a.marks))
	for i := range a.marks {
		m := &a.marks[i]
		t := a.turns[m.line]
		end := a.now()
		if i+1 < len(a.marks) {
			end = a.marks[i+1].at
		}
		start := m.at.active
		if end.restarts != m.at.restarts {
			start = 0 // the turn's context restarted: it added what is there now
		}
		rep.Growth = append(rep.Growth, Growth{N: t.N, State: t.State.String(), Line: m.line,
			Estimated: end.active, Added: end.active - start, Recorded: end.recorded})
	}
}

func (a *analyzer) finish() {
	rep := a.rep
	a.growth()
	rep.Model = a.model
	if rep.Model == "" {
		if g, ok := session.As[session.Gauge](rep.Agent); ok {
			rep.Model = g.DefaultModel()
		}
	}
	// estimates: what was used, and whether it is exact for this model
	if a.counter != nil {
		enc, exact := tokens.EncodingForModel(rep.Model)
		rep.Estimate.Method = string(tokens.O200kBase)
		rep.Estimate.Exact = exact && enc == tokens.O200kBase
	} else {
		rep.Estimate.Method = "bytes/4"
	}
	for _, rt := range a.roles {
		rep.ByRole = append(rep.ByRole, *rt)
	}
	sort.Slice(rep.ByRole, func(i, j int) bool {
		if rep.ByRole[i].Tokens != rep.ByRole[j].Tokens {
			return rep.ByRole[i].Tokens > rep.ByRole[j].Tokens
		}
		return rep.ByRole[i].Role < rep.ByRole[j].Role
	})
	for _, tt := range a.tools {
		rep.ByTool = append(rep.ByTool, *tt)
	}
	sort.Slice(rep.ByTool, func(i, j int) bool {
		ti := rep.ByTool[i].CallTokens + rep.ByTool[i].ResultTokens
		tj := rep.ByTool[j].CallTokens + rep.ByTool[j].ResultTokens
		if ti != tj {
			return ti > tj
		}
		return rep.ByTool[i].Name < rep.ByTool[j].Name
	})
	rep.Tools.Name = "(all tools)"
	rep.Largest = make([]Largest, a.largest.Len())
	for i := len(rep.Largest) - 1; i >= 0; i-- {
		rep.Largest[i] = heap.Pop(&a.largest).(Largest)
	}
	if rep.ByRole == nil {
		rep.ByRole = []RoleTokens{}
	}
	if rep.ByTool == nil {
		rep.ByTool = []ToolTokens{}
	}

	// the window
	rec := rep.Consumption.Window
	if rec <= 0 {
		rec = a.recWindow
	}
	l := tokens.LimitsFor(rep.Agent, rep.Model, rec, a.opt.Window)
	rep.Window = Window{Tokens: l.Window, Source: l.Source, Usable: l.Usable, CompactAt: l.CompactAt}

	// context now
	c := &rep.Context
	c.Estimated = a.active
	c.Recorded = a.now().recorded
	c.RecordedSource = a.recSource
	if su := rep.Consumption; c.Recorded < 0 && su.Context >= 0 {
		c.Recorded, c.RecordedSource = su.Context, su.ContextSource
	}
	if c.Recorded < 0 {
		c.Recorded = -1
		c.Tokens, c.Basis = c.Estimated, "estimated"
	} else {
		c.Tokens, c.Basis = c.Recorded, "recorded"
	}
	if l.Window > 0 {
		c.Percent = float64(c.Tokens) * 100 / float64(l.Window)
	}
	c.Left = int64(l.CompactAt) - c.Tokens

	if a.clientSource != "" {
		rep.ClientCheck = newClientCheck(a.clientSource, a.clientLine, a.clientTotals, rep.Consumption.Totals.ByModel.Map())
		rep.ClientCheck.CostUSD = a.clientCost
	}
}

// minHeap keeps the largest records (smallest on top).
type minHeap []Largest

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].Tokens != h[j].Tokens {
		return h[i].Tokens < h[j].Tokens
	}
	return h[i].Line > h[j].Line
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(Largest)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// decodeBatch bounds the raw bytes decoded at once.
const decodeBatch = 1 << 20

// readParallel is session.ReadFile with the decoding (encoding/json, the
// slow part) spread over all cores: lines are read in order into batches
// of a few MiB, decoded in parallel, and handed to fn in file order, each
// with the counts of the strings cut from it when it was huge (shorten;
// countCut counts a cut part). It stops with ctx.Err() when ctx is done.
func readParallel(ctx context.Context, path string, f session.Format, countCut func([]byte) bigCount,
	pre func(*session.Record, []bigCount) []int, fn func(*session.Record, []bigCount, []int) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	rd := jsonl.NewReader(fh)
	workers := runtime.GOMAXPROCS(0)
	var lines []jsonl.Line
	var bigs [][]bigCount // of lines[i]; nil for most
	recs := make([]session.Record, 0, 1024)
	var counts [][]int
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		recs = slices.Grow(recs[:0], len(lines))[:len(lines)]
		counts = slices.Grow(counts[:0], len(lines))[:len(lines)]
		one := func(i int) {
			recs[i] = session.Decode(f, &lines[i])
			counts[i] = pre(&recs[i], bigs[i])
		}
		if len(lines) < 64 || workers == 1 {
			for i := range lines {
				one(i)
			}
		} else {
			// the next line to take: records differ a lot in size, so
			// each worker takes lines one at a time rather than a share
			var next atomic.Int64
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for {
						i := int(next.Add(1) - 1)
						if i >= len(lines) {
							return
						}
						one(i)
					}
				})
			}
			wg.Wait()
		}
		for i := range recs {
			if err := fn(&recs[i], bigs[i], counts[i]); err != nil {
				return err
			}
		}
		lines, recs, bigs = lines[:0], recs[:0], bigs[:0]
		return nil
	}
	held := 0
	for {
		l, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		var cut []bigCount
		if l.Status == jsonl.OK && len(l.Raw) > bigLine {
			if err := ctx.Err(); err != nil {
				return err
			}
			short := *l
			short.Raw = shorten(l.Raw, true, func(rest []byte) { cut = append(cut, countCut(rest)) })
			if cut == nil {
				short = l.Clone()
			}
			lines = append(lines, short)
		} else {
			lines = append(lines, l.Clone())
		}
		bigs = append(bigs, cut)
		held += len(lines[len(lines)-1].Raw)
		if held >= decodeBatch {
			if err := flush(); err != nil {
				return err
			}
			held = 0
		}
	}
	return flush()
}
