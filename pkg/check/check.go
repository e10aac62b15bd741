// Package check validates session files and says exactly what is wrong with
// them: file, line and byte offset of every problem.
package check

import (
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"sort"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Problem kinds (stable names, used in --json output).
const (
	CorruptLine        = "corrupt_line"
	TruncatedLine      = "truncated_line"
	DanglingToolCall   = "tool_call_without_result"
	OrphanToolResult   = "tool_result_without_call"
	BrokenParent       = "broken_parent_chain"
	CheckpointSequence = "checkpoint_out_of_sequence"
	UnknownType        = "unknown_record_type"
	UnknownFormat      = "unknown_format"
)

// Problem is one thing wrong in a file.
type Problem struct {
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Offset  int64  `json:"offset"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Report is the result of checking one file.
type Report struct {
	Path     string         `json:"path"`
	Agent    session.Agent  `json:"agent"`
	Records  int            `json:"records"`
	Counts   map[string]int `json:"counts"` // records per kind
	Problems []Problem      `json:"problems"`
	Unknown  map[string]int `json:"unknown_types,omitempty"`
	// Repairable is how many of the problems `sessctl repair` would fix
	// (set by Repairable; problems past MaxPerKind included).
	Repairable int `json:"repairable"`

	perLine map[int]int    // damage found per line (unknown types are not damage)
	Status  map[string]int `json:"line_status,omitempty"`
}

// Options tune a check.
type Options struct {
	// MaxPerKind caps the problems reported of each kind per file (the
	// counts stay exact). Zero means no cap.
	MaxPerKind int
	// Context stops a check between lines when it is done (Ctrl-C); the
	// check then returns its error. Nil means never.
	Context context.Context
}

// File checks one session file of a known agent on its own.
func File(path string, agent session.Agent, opt Options) (*Report, error) {
	reps, err := Files([]string{path}, agent, opt)
	if err != nil {
		return nil, err
	}
	return reps[0], nil
}

// Files checks the files of one session together: the main transcript and
// its subagent transcripts. Tool calls and results are paired, and
// parentUuid references resolved, across all of them (a subagent's first
// line points into the main file), while each problem is reported in the
// file where it is.
func Files(paths []string, agent session.Agent, opt Options) ([]*Report, error) {
	f := session.FormatFor(agent)
	g := &group{seed: maphash.MakeSeed(), uuids: map[uint64]struct{}{}, calls: map[string]pending{}, results: map[string]pending{}}
	var reps []*Report
	for i, path := range paths {
		rep := &Report{Path: path, Agent: agent, Counts: map[string]int{}, Unknown: map[string]int{}, Status: map[string]int{}}
		reps = append(reps, rep)
		c := &checker{rep: rep, opt: opt, per: map[string]int{}, g: g, file: i}
		g.checkers = append(g.checkers, c)
		if f == nil {
			if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
				continue // an empty file: a session with nothing in it yet
			}
			rep.Problems = append(rep.Problems, Problem{Path: path, Kind: UnknownFormat,
				Message: "not a session file of a known agent (Kimi CLI, Kimi Code, Claude Code, Codex, clawdcode)"})
			continue
		}
		ctx := opt.Context
		if ctx == nil {
			ctx = context.Background()
		}
		err := session.ReadFileContext(ctx, path, f, func(r *session.Record) error {
			c.record(r)
			return nil
		})
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	g.finish()
	return reps, nil
}

type pending struct {
	file   int
	line   int
	offset int64
	name   string
}

type parentRef struct {
	file   int
	line   int
	offset int64
	parent string
	hash   uint64
}

// group is the state shared by the files of one session.
type group struct {
	checkers []*checker
	seed     maphash.Seed
	uuids    map[uint64]struct{}
	parents  []parentRef
	calls    map[string]pending // tool call id -> where it was made
	results  map[string]pending // results whose call was not seen yet
}

type checker struct {
	rep      *Report
	opt      Options
	per      map[string]int
	g        *group
	file     int
	lastCkpt int
	haveCkpt bool
}

func (c *checker) add(l *jsonl.Line, kind, msg string) {
	c.per[kind]++
	if l != nil && kind != UnknownType {
		if c.rep.perLine == nil {
			c.rep.perLine = map[int]int{}
		}
		c.rep.perLine[l.Num]++
	}
	if c.opt.MaxPerKind > 0 && c.per[kind] > c.opt.MaxPerKind {
		return
	}
	p := Problem{Path: c.rep.Path, Kind: kind, Message: msg}
	if l != nil {
		p.Line, p.Offset = l.Num, l.Offset
	}
	c.rep.Problems = append(c.rep.Problems, p)
}

func (c *checker) record(r *session.Record) {
	l := &r.Line
	c.rep.Status[l.Status.String()]++
	if r.Kind == session.KindBlank {
		return
	}
	c.rep.Records++
	c.rep.Counts[r.Kind.String()]++
	switch r.Kind {
	case session.KindCorrupt:
		kind := CorruptLine
		if l.Status == jsonl.Truncated {
			kind = TruncatedLine
		}
		c.add(l, kind, fmt.Sprintf("%s (%d bytes)", l.Status.Describe(), l.Len))
		return
	case session.KindUnknown:
		c.rep.Unknown[r.Type]++
		c.add(l, UnknownType, fmt.Sprintf("record of unknown type %q (kept as it is)", r.Type))
	case session.KindCheckpoint:
		want := 0
		if c.haveCkpt {
			want = c.lastCkpt + 1
		}
		if r.CheckpointID != want {
			c.add(l, CheckpointSequence, fmt.Sprintf("checkpoint id %d, expected %d", r.CheckpointID, want))
		}
		c.lastCkpt, c.haveCkpt = r.CheckpointID, true
	}
	g := c.g
	for _, tc := range r.ToolCalls {
		if tc.ID == "" {
			continue
		}
		if _, ok := g.results[tc.ID]; ok {
			delete(g.results, tc.ID) // answered before it was logged: out of order, but paired
			continue
		}
		g.calls[tc.ID] = pending{file: c.file, line: l.Num, offset: l.Offset, name: tc.Name}
	}
	for _, tr := range r.ToolResults {
		if tr.CallID == "" {
			continue
		}
		if _, ok := g.calls[tr.CallID]; ok {
			delete(g.calls, tr.CallID)
			continue
		}
		g.results[tr.CallID] = pending{file: c.file, line: l.Num, offset: l.Offset}
	}
	// the conversation tree, where the agent keeps one (Claude Code,
	// clawdcode: their records carry uuids)
	if r.UUID != "" {
		g.uuids[maphash.String(g.seed, r.UUID)] = struct{}{}
	}
	if r.ParentUUID != "" {
		g.parents = append(g.parents, parentRef{file: c.file, line: l.Num, offset: l.Offset, parent: r.ParentUUID,
			hash: maphash.String(g.seed, r.ParentUUID)})
	}
}

func (g *group) finish() {
	type item struct {
		p    pending
		id   string
		kind string
	}
	var items []item
	for id, p := range g.calls {
		items = append(items, item{p, id, DanglingToolCall})
	}
	for id, p := range g.results {
		items = append(items, item{p, id, OrphanToolResult})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].p.line < items[j].p.line })
	where := "this session"
	if len(g.checkers) == 1 {
		where = "this file"
	}
	for _, it := range items {
		l := &jsonl.Line{Num: it.p.line, Offset: it.p.offset}
		c := g.checkers[it.p.file]
		if it.kind == DanglingToolCall {
			c.add(l, it.kind, fmt.Sprintf("tool call %s (%s) has no result in %s", it.id, it.p.name, where))
		} else {
			c.add(l, it.kind, fmt.Sprintf("tool result answers %s, a call that is not in %s", it.id, where))
		}
	}
	for _, pr := range g.parents {
		if _, ok := g.uuids[pr.hash]; !ok {
			g.checkers[pr.file].add(&jsonl.Line{Num: pr.line, Offset: pr.offset}, BrokenParent,
				fmt.Sprintf("parentUuid %s is not a record of %s", pr.parent, where))
		}
	}
	for _, c := range g.checkers {
		c.finish()
	}
}

func (c *checker) finish() {
	sort.SliceStable(c.rep.Problems, func(i, j int) bool { return c.rep.Problems[i].Line < c.rep.Problems[j].Line })
	for kind, n := range c.per {
		if c.opt.MaxPerKind > 0 && n > c.opt.MaxPerKind {
			c.rep.Problems = append(c.rep.Problems, Problem{Path: c.rep.Path, Kind: kind,
				Message: fmt.Sprintf("%d more problems of this kind not shown", n-c.opt.MaxPerKind)})
		}
	}
}
