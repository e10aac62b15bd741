package stats

import (
	"container/heap"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

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
	// GrowthUnit is "turn" (a user prompt) or "checkpoint" (Kimi).
	GrowthUnit string `json:"growth_unit"`

	Records      int   `json:"records"`
	Compactions  int   `json:"compactions"`
	Corrupt      int   `json:"corrupt_lines"`
	CorruptLines []int `json:"corrupt_line_numbers,omitempty"`
	Subagents    int   `json:"subagent_files"`
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
	N    int `json:"n"`
	Line int `json:"line"`
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
	compact   bool // a compaction resets the active context before it
	turn      int  // growth marker: start of a turn (checkpoint id + 1, or turn number)
	recorded  int64
	recSource string
}

// batchBytes bounds the text held for counting at once.
const batchBytes = 2 << 20

// Analyze reads one session: the main transcript for the estimates, every
// file for recorded usage.
func Analyze(s *session.Session, opt Options) (*Report, error) {
	rep := &Report{Agent: s.Agent, ID: s.ID, Project: s.Project, Main: s.Main, Context: ContextNow{Recorded: -1}}
	rep.Consumption = Consumption([]*session.Session{s}, nil)[0]
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
	var size int64
	for _, fi := range s.Files {
		if fi.Path == s.Main {
			size = fi.Size
		}
	}
	err := readParallel(s.Main, f, func(r *session.Record) error {
		if opt.Progress != nil && size > 0 {
			opt.Progress(r.Line.End(), size)
		}
		return a.record(r)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Main, err)
	}
	a.flush()
	a.finish()
	return rep, nil
}

type analyzer struct {
	rep     *Report
	opt     Options
	counter *tokens.Counter
	items   []item
	bytes   int

	roles   map[string]*RoleTokens
	tools   map[string]*ToolTokens
	callTo  map[string]string // open tool call id -> name
	largest minHeap

	active     int64 // estimated active context
	turnStart  int64
	turnN      int
	turnLine   int
	inTurn     bool
	recorded   int64
	recSource  string
	pendingEst int64 // Kimi: estimate of text since the last _usage
	recWindow  int64
	model      string
}

func newAnalyzer(rep *Report, opt Options) *analyzer {
	a := &analyzer{rep: rep, opt: opt, roles: map[string]*RoleTokens{}, tools: map[string]*ToolTokens{},
		callTo: map[string]string{}, recorded: -1}
	rep.GrowthUnit = "turn"
	if rep.Agent == session.Kimi {
		rep.GrowthUnit = "checkpoint"
	}
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
	if r.Model != "" && !r.Synthetic {
		a.model = r.Model
	}
	if r.ContextWindow > 0 {
		a.recWindow = r.ContextWindow
	}
	it := item{line: r.Line.Num}
	// recorded context gauges, by format (tokens.md §5)
	if n, src := tokens.RecordedContext(rep.Agent, r); n >= 0 {
		it.recorded, it.recSource = n, src
	} else if rep.Agent == session.Claude && r.Kind == session.KindCompaction && r.Type == "system/compact_boundary" {
		it.recorded, it.recSource = -2, "" // unknown after the boundary until the next usage
	}
	if r.Kind == session.KindCompaction {
		rep.Compactions++
		// Claude/clawdcode boundary, Codex compacted: the active context
		// restarts here (Kimi rotates files instead)
		if r.Type == "system/compact_boundary" || r.Type == "compacted" {
			it.compact = true
		}
	}
	// turn markers
	if rep.Agent == session.Kimi {
		if r.Kind == session.KindCheckpoint {
			it.turn = r.CheckpointID + 1
		}
	} else if r.UserPrompt {
		it.turn = -1 // numbered in order
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
			a.add(item{line: r.Line.Num, role: "assistant", texts: []string{r.Text}, preview: r.Text, turn: it.turn, recorded: it.recorded, recSource: it.recSource})
			it.turn, it.recorded, it.recSource = 0, 0, ""
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
		a.add(item{line: r.Line.Num, role: "thinking", texts: []string{r.Thinking}, preview: r.Thinking})
	}
	if it.preview == "" && len(it.texts) > 0 {
		it.preview = it.texts[0]
	}
	a.add(it)
	return nil
}

func (a *analyzer) add(it item) {
	for _, t := range it.texts {
		a.bytes += len(t)
	}
	// a copy: the Record's strings may alias a reused buffer
	for i, t := range it.texts {
		it.texts[i] = strings.Clone(t)
	}
	it.preview = session.Preview(it.preview, 72)
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
		a.apply(it, n)
	}
	a.items, a.bytes = a.items[:0], 0
}

func (a *analyzer) apply(it item, n int64) {
	rep := a.rep
	if it.turn != 0 {
		a.endTurn()
		a.turnN++
		if it.turn > 0 {
			a.turnN = it.turn - 1 // a Kimi checkpoint id
		}
		a.turnLine, a.inTurn, a.turnStart = it.line, true, a.active
	}
	if it.compact {
		a.active = 0
		a.turnStart = 0
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
	if rep.Agent == session.Kimi && a.recorded >= 0 {
		// Kimi's own pending estimate: characters of text parts // 4
		for _, t := range it.texts {
			if it.role != "tool_call" && it.role != "thinking" {
				a.pendingEst += int64(tokens.KimiApprox(t))
			}
		}
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

func (a *analyzer) endTurn() {
	if !a.inTurn {
		return
	}
	rec := a.recorded
	if rec >= 0 && a.rep.Agent == session.Kimi {
		rec += a.pendingEst
	}
	a.rep.Growth = append(a.rep.Growth, Growth{N: a.turnN, Line: a.turnLine, Estimated: a.active, Added: a.active - a.turnStart, Recorded: rec})
}

func (a *analyzer) finish() {
	rep := a.rep
	a.endTurn()
	if rep.Growth == nil {
		rep.Growth = []Growth{}
	}
	rep.Model = a.model
	if rep.Agent == session.Codex && rep.Model == "" {
		rep.Model = tokens.DefaultCodexModel
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
	w := &rep.Window
	su := rep.Consumption
	switch {
	case a.opt.Window > 0:
		w.Tokens, w.Source = a.opt.Window, "override"
	case su.Window > 0:
		w.Tokens, w.Source = int(su.Window), "recorded"
	case a.recWindow > 0:
		w.Tokens, w.Source = int(a.recWindow), "recorded"
	default:
		model := rep.Model
		if rep.Agent == session.Kimi && model == "" {
			model = "kimi-for-coding"
		}
		n, known := tokens.ContextWindow(model)
		w.Tokens, w.Source = n, "model"
		if !known {
			w.Source = "default"
			if rep.Agent == session.Clawdcode {
				w.Tokens = 128_000 // clawdcode's default maxContextTokens
			}
		}
	}
	w.Usable = tokens.UsableBudget(w.Tokens)
	w.CompactAt = tokens.CompactionThreshold(string(rep.Agent), w.Tokens)

	// context now
	c := &rep.Context
	c.Estimated = a.active
	c.Recorded = a.recorded
	c.RecordedSource = a.recSource
	if rep.Agent == session.Kimi && c.Recorded >= 0 {
		c.Recorded += a.pendingEst
	}
	if c.Recorded < 0 && su.Context >= 0 {
		c.Recorded = su.Context
		c.RecordedSource = "wire.jsonl StatusUpdate.context_tokens"
	}
	if c.Recorded < 0 {
		c.Recorded = -1
		c.Tokens, c.Basis = c.Estimated, "estimated"
	} else {
		c.Tokens, c.Basis = c.Recorded, "recorded"
	}
	if w.Tokens > 0 {
		c.Percent = float64(c.Tokens) * 100 / float64(w.Tokens)
	}
	c.Left = int64(w.CompactAt) - c.Tokens
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
// of a few MiB, decoded in parallel, and handed to fn in file order.
func readParallel(path string, f session.Format, fn func(*session.Record) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	rd := jsonl.NewReader(fh)
	workers := runtime.GOMAXPROCS(0)
	var lines []jsonl.Line
	recs := make([]session.Record, 0, 1024)
	flush := func() error {
		recs = slices.Grow(recs[:0], len(lines))[:len(lines)]
		if len(lines) < 64 || workers == 1 {
			for i := range lines {
				recs[i] = session.Decode(f, &lines[i])
			}
		} else {
			var wg sync.WaitGroup
			per := (len(lines) + workers - 1) / workers
			for lo := 0; lo < len(lines); lo += per {
				hi := min(lo+per, len(lines))
				wg.Go(func() {
					for i := lo; i < hi; i++ {
						recs[i] = session.Decode(f, &lines[i])
					}
				})
			}
			wg.Wait()
		}
		for i := range recs {
			if err := fn(&recs[i]); err != nil {
				return err
			}
		}
		lines, recs = lines[:0], recs[:0]
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
		lines = append(lines, l.Clone())
		held += len(l.Raw)
		if held >= decodeBatch {
			if err := flush(); err != nil {
				return err
			}
			held = 0
		}
	}
	return flush()
}
