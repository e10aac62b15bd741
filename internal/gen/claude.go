package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// genClaude writes a Claude Code config dir: projects/<project>/<id>.jsonl
// with subagent files, responses split over several lines that repeat
// (sometimes partial) usage, tool results of several KB, progress lines
// with copies of subagent usage and toolUseResult aggregates (neither
// counted), compactions, and resumed files that replay another file's
// prefix (duplicates across files).
func genClaude(opt options, stdout io.Writer) error {
	r := newRNG(opt.seed, 1)
	projects := []string{"-home-dev-src-api", "-home-dev-src-web", "-home-dev-work-demo", "-srv-build-tools", "-home-dev-notes"}
	weights := make([]float64, opt.files)
	var sum float64
	for i := range weights {
		weights[i] = 0.3 + 2.2*r.Float64()*r.Float64()
		sum += weights[i]
	}
	base := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	var written int64
	var prev []string // lines of earlier sessions, for resumed copies
	for i := 0; i < opt.files; i++ {
		target := int64(float64(opt.size) * weights[i] / sum)
		project := projects[r.IntN(len(projects))]
		id := r.uuid()
		dir := filepath.Join(opt.out, "projects", project)
		g := &claudeGen{r: newRNG(opt.seed, uint64(100+i)), id: id, cwd: "/" + strings.ReplaceAll(strings.TrimPrefix(project, "-"), "-", "/"),
			t: base.Add(time.Duration(i) * 5 * time.Hour), version: []string{"2.1.197", "2.1.114", "2.0.42", "1.0.29"}[r.IntN(4)],
			withReq: r.IntN(10) != 0, split: r.IntN(2) == 0}
		g.model = []string{"claude-opus-4-8", "claude-sonnet-4-5", "claude-haiku-4-5"}[r.IntN(3)]
		var head []string
		if len(prev) > 0 && r.IntN(8) == 0 {
			head = prev // a resumed copy: replays another file's prefix
		}
		n, lines, err := g.writeFile(filepath.Join(dir, id+".jsonl"), target, head, false)
		if err != nil {
			return err
		}
		written += n
		if len(lines) > 40 {
			prev = lines[:40]
		}
		if r.IntN(6) == 0 { // a subagent transcript
			sg := &claudeGen{r: newRNG(opt.seed, uint64(10000+i)), id: id, cwd: g.cwd, t: g.t, version: g.version,
				withReq: g.withReq, split: g.split, model: "claude-haiku-4-5", agentID: "a" + g.r.hexID(16)}
			p := filepath.Join(dir, id, "subagents", "agent-"+sg.agentID+".jsonl")
			n, _, err := sg.writeFile(p, target/5, nil, true)
			if err != nil {
				return err
			}
			written += n
		}
	}
	if opt.quirks {
		n, err := claudeQuirks(opt, base)
		if err != nil {
			return err
		}
		written += n
	}
	fmt.Fprintf(stdout, "wrote %d bytes of Claude Code sessions in %d files under %s\n", written, opt.files, opt.out)
	return nil
}

type claudeGen struct {
	r        rng
	id, cwd  string
	t        time.Time
	version  string
	model    string
	withReq  bool
	split    bool
	agentID  string
	parent   string
	cacheTot int64
}

func (g *claudeGen) ts() string {
	g.t = g.t.Add(time.Duration(200+g.r.IntN(9000)) * time.Millisecond)
	return g.t.Format("2006-01-02T15:04:05.000Z")
}

func (g *claudeGen) env(uuid string) string {
	side := "false"
	if g.agentID != "" {
		side = "true"
	}
	parent := "null"
	if g.parent != "" {
		parent = jstr(g.parent)
	}
	g.parent = uuid
	s := `"parentUuid":` + parent + `,"isSidechain":` + side
	if g.agentID != "" {
		s += `,"agentId":` + jstr(g.agentID)
	}
	return s
}

func (g *claudeGen) tail(uuid string) string {
	return `"uuid":` + jstr(uuid) + `,"timestamp":` + jstr(g.ts()) + `,"userType":"external","cwd":` + jstr(g.cwd) +
		`,"sessionId":` + jstr(g.id) + `,"version":` + jstr(g.version) + `,"gitBranch":"main"`
}

func (g *claudeGen) usage(in, out, cc, cr int64) string {
	s := fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,"service_tier":"standard"`, in, cc, cr, out)
	if g.split {
		h1 := cc / 4
		s += fmt.Sprintf(`,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":%d}`, cc-h1, h1)
	}
	return s + "}"
}

// turn returns the lines of one user turn: prompt, one or more responses
// (each over several lines) with tool calls and results.
func (g *claudeGen) turn() []string {
	r := g.r
	var out []string
	u := r.uuid()
	out = append(out, `{`+g.env(u)+`,"type":"user","message":{"role":"user","content":`+jstr(r.text(80+r.IntN(1500)))+`},`+g.tail(u)+`}`)
	steps := 1 + r.IntN(4)
	for s := 0; s < steps; s++ {
		msgID := "msg_" + r.hexID(24)
		req := ""
		if g.withReq {
			req = `,"requestId":"req_` + r.hexID(24) + `"`
		}
		in := int64(1 + r.IntN(400))
		cc := int64(r.IntN(3000))
		cr := g.cacheTot
		g.cacheTot += cc + int64(r.IntN(2000))
		outTok := int64(20 + r.IntN(1500))
		model := g.model
		speed := ""
		if r.IntN(20) == 0 {
			speed = `,"speed":"fast"`
		}
		blocks := []string{}
		if r.IntN(3) == 0 {
			blocks = append(blocks, `{"type":"thinking","thinking":`+jstr(r.text(100+r.IntN(800)))+`,"signature":"`+r.hexID(64)+`"}`)
		}
		blocks = append(blocks, `{"type":"text","text":`+jstr(r.text(40+r.IntN(1200)))+`}`)
		tool := s < steps-1
		var toolID, toolName string
		if tool {
			toolID = "toolu_" + r.hexID(24)
			toolName = []string{"Bash", "Read", "Edit", "Grep", "Write", "Agent"}[r.IntN(6)]
			blocks = append(blocks, `{"type":"tool_use","id":"`+toolID+`","name":"`+toolName+`","input":{"command":`+jstr(r.text(20+r.IntN(600)))+`}}`)
		}
		for bi, b := range blocks {
			ot := outTok
			if bi < len(blocks)-1 && r.IntN(2) == 0 {
				ot = int64(1 + r.IntN(int(outTok))) // streaming partial
			}
			uu := r.uuid()
			out = append(out, `{`+g.env(uu)+`,"message":{"id":"`+msgID+`","type":"message","role":"assistant","model":"`+model+`","content":[`+b+
				`],"stop_reason":null,"stop_sequence":null,"usage":`+strings.TrimSuffix(g.usage(in, ot, cc, cr), "}")+speed+`}}`+req+`,"type":"assistant",`+g.tail(uu)+`}`)
		}
		if tool {
			uu := r.uuid()
			res := `{` + g.env(uu) + `,"type":"user","message":{"role":"user","content":[{"tool_use_id":"` + toolID + `","type":"tool_result","content":` + jstr(r.text(500+r.IntN(r.IntN(30000)+1))) + `}]},`
			if toolName == "Agent" {
				// the subagent's aggregate usage: informational, never counted
				res += `"toolUseResult":{"status":"completed","totalTokens":12075,"usage":` + g.usage(183, 62, 1653, 10177) + `},`
			}
			out = append(out, res+g.tail(uu)+`}`)
			if r.IntN(12) == 0 {
				// progress copy of a subagent message, with usage: never counted
				pu := r.uuid()
				out = append(out, `{"parentUuid":null,"isSidechain":false,"type":"progress","data":{"type":"agent_progress","message":{"type":"assistant","message":{"id":"msg_`+r.hexID(24)+
					`","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"working"}],"usage":`+g.usage(10, 5, 0, 900)+`}}},`+g.tail(pu)+`}`)
			}
		}
	}
	if r.IntN(40) == 0 {
		// a compaction: boundary (a root) and summary
		b := r.uuid()
		g.parent = ""
		out = append(out, `{`+g.env(b)+`,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,`+g.tail(b)+`,"level":"info","compactMetadata":{"trigger":"auto","preTokens":170251,"postTokens":9120}}`)
		su := r.uuid()
		out = append(out, `{`+g.env(su)+`,"type":"user","message":{"role":"user","content":`+jstr("This session is being continued from a previous conversation. "+r.text(2000))+`},"isCompactSummary":true,`+g.tail(su)+`}`)
		g.cacheTot = 9000
	}
	out = append(out, `{"type":"last-prompt","lastPrompt":"next","sessionId":"`+g.id+`"}`)
	return out
}

func (g *claudeGen) writeFile(path string, target int64, head []string, side bool) (int64, []string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	var lines []string
	put := func(l string) {
		w.WriteString(l)
		w.WriteByte('\n')
		n += int64(len(l) + 1)
		if len(lines) < 64 {
			lines = append(lines, l)
		}
	}
	if !side {
		put(`{"type":"queue-operation","operation":"enqueue","timestamp":"` + g.t.Format("2006-01-02T15:04:05.000Z") + `","sessionId":"` + g.id + `","content":"start"}`)
	}
	for _, l := range head {
		put(l)
	}
	for n < target {
		for _, l := range g.turn() {
			put(l)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, nil, err
	}
	return n, lines, f.Close()
}

// claudeQuirks writes one project of lines that ccusage 20.0.24 silently
// drops but sessctl counts (or rejects with a reason), plus corrupt lines.
func claudeQuirks(opt options, base time.Time) (int64, error) {
	id := "0badc0de-0000-4000-8000-000000000001"
	p := filepath.Join(opt.out, "projects", "-home-dev-quirks", id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return 0, err
	}
	ts := base.Format("2006-01-02T15:04:05.000Z")
	line := func(msg, extra, usage string) string {
		return `{"parentUuid":null,"isSidechain":false,"message":{"id":"` + msg + `","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"hi"}],"usage":` + usage + `}` + extra + `,"type":"assistant","uuid":"` + msg + `-u","timestamp":"` + ts + `","sessionId":"` + id + `","version":"2.1.197"}`
	}
	lines := []string{
		line("msg_q1", "", `{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":0}`),
		// re-serialised with Python's default separators: ccusage drops it
		`{"parentUuid": null, "isSidechain": false, "message": {"id": "msg_q2", "type": "message", "role": "assistant", "model": "claude-opus-4-8", "content": [{"type": "text", "text": "spaced"}], "usage": {"input_tokens": 20, "output_tokens": 7, "cache_read_input_tokens": 200, "cache_creation_input_tokens": 3}}, "type": "assistant", "uuid": "u2", "timestamp": "` + ts + `", "sessionId": "` + id + `", "version": "2.1.197"}`,
		// a null requestId: ccusage rejects the line
		line("msg_q3", `,"requestId":null`, `{"input_tokens":30,"output_tokens":9,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}`),
		// a string count and a negative count: rejected by both
		line("msg_q4", "", `{"input_tokens":"40","output_tokens":9}`),
		line("msg_q5", "", `{"input_tokens":40,"output_tokens":-9}`),
		// absurdly large: sessctl rejects it, ccusage counts it
		line("msg_q6", "", `{"input_tokens":5000000000000,"output_tokens":1}`),
		`{"type":"assistant","message": GARBAGE`,
		line("msg_q7", "", `{"input_tokens":1,"output_tokens":1}`)[:90], // torn last line
	}
	content := strings.Join(lines, "\n")
	return int64(len(content)), os.WriteFile(p, []byte(content), 0o600)
}
