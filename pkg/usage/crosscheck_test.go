package usage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/sessctl/sessctl/pkg/agent/all" // the homes: decoders and scanners
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// The fast scanners (pkg/agent/*/usage.go) read only the bytes they need;
// the decoders (session.Decode) read every line whole. The test below holds
// the first to the second on every file of the shared samples, the repo's
// testdata and two generated corpora: per file, the requests sessctl counts
// must be the ones the decoded records give (line, usage, model, time, and
// the de-duplication keys made of message and request ids), and per agent
// the totals after de-duplication must be equal.
//
// The decoders serve every operation and keep less than usage accounting
// needs, so the reference applies a few rules of its own, each named here
// and counted in the test log: where a rule fires, the two differ on
// purpose, by that rule.
const (
	// Claude Code: cache writes are ephemeral_5m + ephemeral_1h when
	// message.usage.cache_creation is an object (ccusage's rule); the
	// decoder keeps the flat cache_creation_input_tokens.
	ruleCacheSplit = "claude: cache write is the 5m+1h split when present"
	// Every format: a usage field that is not a non-negative integer (a
	// string, a fraction, a negative, null in input or output, above 10^9)
	// makes sessctl reject the line, listed with its reason; the decoders'
	// FlexInt reads numeric strings and takes bad values as 0.
	ruleStrictFields = "usage fields must be non-negative integers up to 10^9"
	// Claude Code: the model of a <synthetic> reply is none, and
	// speed:"fast" appends -fast to the model (ccusage's names).
	ruleModelNames = "claude: <synthetic> has no model, speed fast adds -fast"
	// Claude Code: a requestId that is present but empty or null is a key
	// of its own (ccusage); the decoder reads both as no requestId.
	ruleEmptyRequestID = "claude: an empty or null requestId still keys"
	// Codex 0.169: cache_write_input_tokens is cache write, not input; the
	// decoder does not read it.
	ruleCodexCacheWrite = "codex: cache_write_input_tokens is cache write"
)

// ref is the reference request list of one file.
type ref struct {
	reqs  []usage.Request
	model []string // model name of reqs[i]
	rules map[string]int
}

func (r *ref) add(q usage.Request, model string) {
	r.reqs = append(r.reqs, q)
	r.model = append(r.model, model)
}

// readRecords streams the decoded records of a file.
func readRecords(t *testing.T, path string, a session.Agent, fn func(*session.Record)) {
	t.Helper()
	err := session.ReadFile(path, session.HomeOf(a), func(r *session.Record) error {
		fn(r)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// rawObject decodes what a rule needs from a record's own line.
func rawObject(r *session.Record, v any) bool {
	return json.Unmarshal(r.Line.Raw, v) == nil
}

// strict reports whether a raw usage field holds a value sessctl counts:
// absent (when optional), null (when optional), or an integer in range.
func strict(raw json.RawMessage, optional bool) bool {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return optional
	}
	if strings.ContainsAny(s, ".eE\"-") && s != "-0" {
		return false
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return false
	}
	v, err := n.Int64()
	return err == nil && v <= usage.MaxRequestTokens
}

func millis(r *session.Record) int64 {
	if r.Timestamp.IsZero() {
		return 0
	}
	return r.Timestamp.UnixMilli()
}

func claudeRef(t *testing.T, path string) ref {
	out := ref{rules: map[string]int{}}
	readRecords(t, path, session.Claude, func(r *session.Record) {
		if r.Usage == nil {
			return
		}
		var raw struct {
			RequestID *json.RawMessage `json:"requestId"`
			CostUSD   *float64         `json:"costUSD"`
			Message   struct {
				Usage struct {
					In    json.RawMessage `json:"input_tokens"`
					Out   json.RawMessage `json:"output_tokens"`
					CC    json.RawMessage `json:"cache_creation_input_tokens"`
					CR    json.RawMessage `json:"cache_read_input_tokens"`
					Speed *string         `json:"speed"`
					Split *struct {
						M5 json.RawMessage `json:"ephemeral_5m_input_tokens"`
						H1 json.RawMessage `json:"ephemeral_1h_input_tokens"`
					} `json:"cache_creation"`
				} `json:"usage"`
			} `json:"message"`
		}
		if !rawObject(r, &raw) {
			t.Fatalf("%s:%d: decoded but not JSON", path, r.Line.Num)
		}
		u := raw.Message.Usage
		if !strict(u.In, false) || !strict(u.Out, false) || !strict(u.CC, true) || !strict(u.CR, true) ||
			u.Split != nil && (!strict(u.Split.M5, true) || !strict(u.Split.H1, true)) {
			out.rules[ruleStrictFields]++
			return
		}
		q := usage.Request{Line: int32(r.Line.Num), Usage: *r.Usage, Time: millis(r), Sidechain: r.Sidechain, Counted: true}
		if raw.CostUSD != nil && *raw.CostUSD >= 0 {
			q.CostUSD, q.HasCost = *raw.CostUSD, true // the line's own cost (older Claude Code)
		}
		if u.Split != nil {
			var m5, h1 int64
			json.Unmarshal(u.Split.M5, &m5)
			json.Unmarshal(u.Split.H1, &h1)
			if m5+h1 != q.Usage.CacheCreation {
				out.rules[ruleCacheSplit]++
			}
			q.Usage.CacheCreation = m5 + h1
		}
		model := r.Model
		switch {
		case model == "<synthetic>":
			model = ""
			out.rules[ruleModelNames]++
		case model != "" && u.Speed != nil && *u.Speed == "fast":
			model += "-fast"
			out.rules[ruleModelNames]++
		}
		if r.MessageID != "" {
			hasReq := r.RequestID != ""
			if !hasReq && raw.RequestID != nil {
				hasReq = true // "" or null
				out.rules[ruleEmptyRequestID]++
			}
			q.Key = usage.HashKey([]byte(r.MessageID), []byte(r.RequestID), hasReq)
			q.MsgKey = usage.HashKey([]byte(r.MessageID), nil, false)
		}
		out.add(q, model)
	})
	return out
}

func codexRef(t *testing.T, path string) ref {
	out := ref{rules: map[string]int{}}
	model := "gpt-5" // Codex's default before any turn_context
	var prev *session.Usage
	var prevTotal int64
	pending := 0 // Codex 0.169 token_usage_records not yet matched by a change of the running total
	readRecords(t, path, session.Codex, func(r *session.Record) {
		if r.Type == "turn_context" && r.Model != "" {
			model = r.Model
		}
		if r.Type == "token_usage_record" && r.Usage != nil {
			var raw struct {
				Payload struct {
					Usage map[string]json.RawMessage `json:"usage"`
				} `json:"payload"`
			}
			rawObject(r, &raw)
			for _, v := range raw.Payload.Usage {
				if !strict(v, true) && string(v) != "null" {
					out.rules[ruleStrictFields]++
					return
				}
			}
			pending++
			var w int64
			json.Unmarshal(raw.Payload.Usage["cache_write_input_tokens"], &w)
			u := *r.Usage
			u.Input, u.CacheCreation = max(0, u.Input-w), w
			if u != (session.Usage{}) {
				out.add(usage.Request{Line: int32(r.Line.Num), Usage: u, Time: millis(r), Counted: true}, model)
			}
			return
		}
		if r.Type != "event_msg/token_count" || r.CumulativeUsage == nil && r.Usage == nil {
			return
		}
		var raw struct {
			Payload struct {
				Info struct {
					Total map[string]json.RawMessage `json:"total_token_usage"`
					Last  map[string]json.RawMessage `json:"last_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		rawObject(r, &raw)
		ok := func(m map[string]json.RawMessage) bool {
			for _, v := range m {
				if !strict(v, true) && string(v) != "null" {
					return false
				}
			}
			return true
		}
		if !ok(raw.Payload.Info.Total) || !ok(raw.Payload.Info.Last) {
			out.rules[ruleStrictFields]++
			return
		}
		write := func(m map[string]json.RawMessage) int64 {
			var n int64
			json.Unmarshal(m["cache_write_input_tokens"], &n)
			return n
		}
		split := func(u *session.Usage, w int64) session.Usage {
			if w > 0 {
				out.rules[ruleCodexCacheWrite]++
			}
			v := *u
			v.Input = max(0, v.Input-w)
			v.CacheCreation = w
			return v
		}
		var d session.Usage
		switch {
		case r.CumulativeUsage == nil:
			d = split(r.Usage, write(raw.Payload.Info.Last))
		default:
			cur := split(r.CumulativeUsage, write(raw.Payload.Info.Total))
			var total int64
			json.Unmarshal(raw.Payload.Info.Total["total_tokens"], &total)
			switch {
			case prev == nil:
				d = cur
			case cur == *prev && total == prevTotal:
				d = session.Usage{}
			case cur.Input >= prev.Input && cur.CacheRead >= prev.CacheRead && cur.CacheCreation >= prev.CacheCreation &&
				cur.Output >= prev.Output && cur.Reasoning >= prev.Reasoning && total >= prevTotal:
				d = session.Usage{Input: cur.Input - prev.Input, CacheRead: cur.CacheRead - prev.CacheRead,
					CacheCreation: cur.CacheCreation - prev.CacheCreation, Output: cur.Output - prev.Output, Reasoning: cur.Reasoning - prev.Reasoning}
			case r.Usage != nil:
				d = split(r.Usage, write(raw.Payload.Info.Last)) // a reset: this event's own request
			default:
				d = cur
			}
			prev, prevTotal = &cur, total
		}
		if d == (session.Usage{}) {
			return
		}
		if pending > 0 {
			pending-- // the response this change adds was counted from its record
			return
		}
		out.add(usage.Request{Line: int32(r.Line.Num), Usage: d, Time: millis(r), Counted: true}, model)
	})
	return out
}

func clawdRef(t *testing.T, path string) ref {
	out := ref{rules: map[string]int{}}
	readRecords(t, path, session.Clawdcode, func(r *session.Record) {
		if r.Usage == nil || r.Type != "assistant" {
			return
		}
		var raw struct {
			Message struct {
				Usage struct {
					In  json.RawMessage `json:"input_tokens"`
					Out json.RawMessage `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		rawObject(r, &raw)
		if !strict(raw.Message.Usage.In, true) || !strict(raw.Message.Usage.Out, true) {
			out.rules[ruleStrictFields]++
			return
		}
		out.add(usage.Request{Line: int32(r.Line.Num), Usage: *r.Usage, Time: millis(r), Counted: true}, r.Model)
	})
	return out
}

// kimiCodeRef reads a Kimi Code wire with encoding/json: every
// usage.record, its model the provider's id of the llm.request before it
// when that request's alias is the record's model.
func kimiCodeRef(t *testing.T, path string) ref {
	out := ref{rules: map[string]int{}}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var alias, id string
	for i, line := range bytes.Split(b, []byte("\n")) {
		var l struct {
			Type       string `json:"type"`
			Model      string `json:"model"`
			ModelAlias string `json:"modelAlias"`
			Time       int64  `json:"time"`
			Usage      *struct {
				InputOther, Output, InputCacheRead, InputCacheCreation int64
			} `json:"usage"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch l.Type {
		case "llm.request":
			alias, id = l.ModelAlias, l.Model
		case "usage.record":
			if l.Usage == nil {
				continue
			}
			model := l.Model
			if id != "" && alias == l.Model {
				model = id
			}
			out.add(usage.Request{Line: int32(i + 1), Time: l.Time, Counted: true, Usage: session.Usage{
				Input: l.Usage.InputOther, Output: l.Usage.Output, CacheRead: l.Usage.InputCacheRead,
				CacheCreation: l.Usage.InputCacheCreation}}, model)
		}
	}
	return out
}

// kimiRef reads a wire.jsonl with encoding/json: no home decodes wire
// lines into Records (they are an event log, not the conversation), so
// this is the reference the Kimi scanner is held to.
func kimiRef(t *testing.T, path string) ref {
	out := ref{rules: map[string]int{}}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type status struct {
		Type    string `json:"type"`
		Payload struct {
			Usage     map[string]json.RawMessage `json:"token_usage"`
			MessageID string                     `json:"message_id"`
			Event     *struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			} `json:"event"`
		} `json:"payload"`
	}
	for i, line := range bytes.Split(b, []byte("\n")) {
		var l struct {
			Timestamp float64 `json:"timestamp"`
			Message   status  `json:"message"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		st, side := l.Message, false
		if st.Type == "SubagentEvent" && st.Payload.Event != nil && st.Payload.Event.Type == "StatusUpdate" {
			var n status
			json.Unmarshal(st.Payload.Event.Payload, &n.Payload)
			st, side = n, true
		} else if st.Type != "StatusUpdate" {
			continue
		}
		if st.Payload.Usage == nil {
			continue
		}
		var f [4]int64
		bad := false
		for k, name := range []string{"input_other", "output", "input_cache_read", "input_cache_creation"} {
			v, present := st.Payload.Usage[name]
			if present && !strict(v, true) {
				bad = true
			}
			json.Unmarshal(v, &f[k])
		}
		if bad {
			out.rules[ruleStrictFields]++
			continue
		}
		q := usage.Request{Line: int32(i + 1), Counted: true, Sidechain: side,
			Usage: session.Usage{Input: f[0], Output: f[1], CacheRead: f[2], CacheCreation: f[3]}}
		if l.Timestamp > 0 && l.Timestamp < math.MaxInt64/1000 {
			q.Time = int64(l.Timestamp * 1000)
		}
		if id := st.Payload.MessageID; id != "" {
			q.Key = usage.HashKey([]byte("kimi\x00"+id), nil, false)
			q.MsgKey = q.Key
		}
		out.add(q, "")
	}
	return out
}

func reference(t *testing.T, a session.Agent, path string) ref {
	switch a {
	case session.Claude:
		return claudeRef(t, path)
	case session.Codex:
		return codexRef(t, path)
	case session.Kimi:
		return kimiRef(t, path)
	case session.Clawdcode:
		return clawdRef(t, path)
	case session.KimiCode:
		return kimiCodeRef(t, path)
	}
	t.Fatalf("%s: no reference for agent %s", path, a)
	return ref{}
}

// generated writes the two generated corpora (internal/gen) into dir.
func generated(t *testing.T, dir string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to run internal/gen: %v", err)
	}
	var roots []string
	for _, args := range [][]string{
		{"claude", "-size", "6MB", "-files", "24", "-quirks"},
		{"codex", "-size", "4MB", "-files", "16"},
	} {
		out := filepath.Join(dir, args[0])
		cmd := exec.Command(gobin, append([]string{"run", "../../internal/gen", args[0], "-out", out}, args[1:]...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("internal/gen %s: %v\n%s", args[0], err, b)
		}
		roots = append(roots, out)
	}
	return roots
}

// handWritten writes a Kimi and a clawdcode store: no generator makes them,
// and the samples hold neither a Kimi wire nor a clawdcode file. They hold
// what the scanners must get right: a subagent's usage nested in the main
// wire and repeated in its own, updates without usage or id, spaced and
// compact JSON, bad values, a torn last line.
func handWritten(t *testing.T, dir string) string {
	t.Helper()
	status := func(ts, id string, in, out, cr int, nested bool) string {
		st := fmt.Sprintf(`{"type": "StatusUpdate", "payload": {"context_tokens": %d, "max_context_tokens": 262144, "token_usage": {"input_other": %d, "output": %d, "input_cache_read": %d, "input_cache_creation": 0}, "message_id": %q}}`, in+cr, in, out, cr, id)
		if nested {
			st = `{"type": "SubagentEvent", "payload": {"task_tool_call_id": "t1", "event": ` + st + `}}`
		}
		return `{"timestamp": ` + ts + `, "message": ` + st + `}`
	}
	files := map[string][]string{
		"kimi/sessions/e33d5307e458280d2a3ce8298d246f98/s1/context.jsonl": {`{"role": "user", "content": "hi"}`},
		"kimi/sessions/e33d5307e458280d2a3ce8298d246f98/s1/wire.jsonl": {
			`{"type": "metadata", "protocol_version": "1.10"}`,
			status("1793520003.25", "m1", 1120, 40, 8000, false),
			status("1793520004.0", "s1", 300, 20, 100, true),
			`{"timestamp":1793520005.5,"message":{"type":"StatusUpdate","payload":{"token_usage":{"input_other":7,"output":1,"input_cache_read":0,"input_cache_creation":3}}}}`,
			`{"timestamp": 1793520006.0, "message": {"type": "StatusUpdate", "payload": {"context_tokens": 5}}}`,
			`{"timestamp": 1793520007.0, "message": {"type": "StatusUpdate", "payload": {"token_usage": {"input_other": "12", "output": 1}, "message_id": "bad"}}}`,
			status("1793520008.0", "m2", 1210, 15, 8000, false),
			`{"timestamp": 1793520009.0, "message": {"type": "StatusUpd`,
		},
		"kimi/sessions/e33d5307e458280d2a3ce8298d246f98/s1/subagents/a1/wire.jsonl": {
			status("1793520004.0", "s1", 300, 20, 100, false),
			status("1793520004.5", "s2", 90, 9, 0, false),
		},
		"clawdcode/projects/home-alice-app/N-aaaaaaaaaaaaaaaaaaaa.jsonl": {
			`{"uuid":"a","type":"user","timestamp":"2026-11-01T09:15:04.512Z","message":{"role":"user","content":"usage please"}}`,
			`{"uuid":"b","type":"assistant","timestamp":"2026-11-01T09:15:07.031Z","message":{"role":"assistant","content":"x","model":"glm-4.6","usage":{"input_tokens":1820,"output_tokens":42}}}`,
			`{"uuid": "c", "type": "assistant", "timestamp": "2026-11-01T09:16:07.031Z", "message": {"role": "assistant", "content": "y", "model": "glm-4.6", "usage": {"input_tokens": 1900, "output_tokens": 8}}}`,
			`{"uuid":"d","type":"assistant","timestamp":"2026-11-01T09:17:07.031Z","message":{"role":"assistant","content":"z","model":"glm-4.6","usage":{"input_tokens":-5,"output_tokens":8}}}`,
			`{"uuid":"e","type":"assistant","message":{"role":"assistant","content":"no time","model":"kimi-k2","usage":{"output_tokens":3}}}`,
			`{"uuid":"f","type":"tool_result","timestamp":"2026-11-01T09:18:07.031Z","message":{"role":"tool","content":"w","usage":{"input_tokens":5,"output_tokens":5}}}`,
		},
	}
	for name, lines := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := strings.Join(lines, "\n")
		if !strings.HasSuffix(name, "s1/wire.jsonl") {
			body += "\n" // the main wire ends torn
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFastScannersMatchDecoder(t *testing.T) {
	roots := []string{"../../testdata/sessions", "../../testdata/kimi-code-2.1.0", handWritten(t, t.TempDir())}
	if _, err := os.Stat("../../../shared/samples"); err == nil {
		roots = append(roots, "../../../shared/samples")
	} else {
		t.Log("shared samples not available: testdata and generated corpora only")
	}
	roots = append(roots, generated(t, t.TempDir())...)

	type side struct{ fast, ref usage.Ledger }
	ledgers := map[session.Agent]*side{}
	rules := map[string]int{}
	files := map[session.Agent]int{}
	for _, root := range roots {
		res := session.Discover([]session.Root{{Path: root}}, false)
		var jobs []struct {
			s *session.Session
			f session.File
			c usage.FileClass
		}
		for _, s := range res.Sessions {
			sc, ok := session.As[usage.Scanner](s.Agent)
			if !ok {
				t.Fatalf("%s: agent %s has no usage scanner", s.Main, s.Agent)
			}
			for _, f := range s.Files {
				if c := sc.Classify(s, f); c&usage.Carries != 0 {
					jobs = append(jobs, struct {
						s *session.Session
						f session.File
						c usage.FileClass
					}{s, f, c})
				}
			}
		}
		sort.Slice(jobs, func(i, j int) bool { return jobs[i].f.Path < jobs[j].f.Path })
		for _, j := range jobs {
			a := j.s.Agent
			sc, _ := session.As[usage.Scanner](a)
			fu, err := new(usage.Reader).ReadFile(context.Background(), j.f.Path, sc, j.c)
			if err != nil {
				t.Fatal(err)
			}
			want := reference(t, a, j.f.Path)
			for k, n := range want.rules {
				rules[k] += n
			}
			files[a]++
			var got []usage.Request
			var gotModel []string
			for i := range fu.Requests {
				if q := fu.Requests[i]; q.Counted {
					got = append(got, q)
					gotModel = append(gotModel, fu.Model(&fu.Requests[i]))
				}
			}
			if d := diffRequests(got, gotModel, want.reqs, want.model); d != "" {
				t.Errorf("%s (%s): the fast scanner and the decoder differ: %s", j.f.Path, a, d)
			}
			if ledgers[a] == nil {
				ledgers[a] = &side{}
			}
			ledgers[a].fast.Add(fu)
			rf := &usage.FileUsage{Path: j.f.Path, Class: j.c}
			for i, q := range want.reqs {
				q.Model = rf.ModelID(want.model[i])
				rf.Add(q, nil)
			}
			ledgers[a].ref.Add(rf)
		}
	}
	for a, l := range ledgers {
		var gotR, wantR []*usage.Request
		for i := range l.fast.Requests {
			gotR = append(gotR, &l.fast.Requests[i])
		}
		for i := range l.ref.Requests {
			wantR = append(wantR, &l.ref.Requests[i])
		}
		got, want := l.fast.Totals(gotR), l.ref.Totals(wantR)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: totals after de-duplication differ:\nfast    %+v\ndecoder %+v", a, got, want)
		}
		t.Logf("%s: %d files, %d requests, %d tokens", a, files[a], got.Requests, got.Total())
		if got.Requests == 0 {
			t.Errorf("%s: no requests at all: the corpora do not exercise this scanner", a)
		}
	}
	for _, a := range session.Registered() {
		if files[a] == 0 {
			t.Errorf("%s: no file with usage in any corpus", a)
		}
	}
	for k, n := range rules {
		t.Logf("rule %q: %d lines", k, n)
	}
}

// diffRequests describes the first difference between two request lists.
func diffRequests(got []usage.Request, gotModel []string, want []usage.Request, wantModel []string) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("line %d: only the decoder counts %+v", want[i].Line, want[i].Usage)
		case i >= len(want):
			return fmt.Sprintf("line %d: only the fast scanner counts %+v", got[i].Line, got[i].Usage)
		}
		g, w := got[i], want[i]
		if g.Line != w.Line || g.Usage != w.Usage || g.Time != w.Time || g.Key != w.Key || g.MsgKey != w.MsgKey ||
			g.Sidechain != w.Sidechain || gotModel[i] != wantModel[i] {
			return fmt.Sprintf("request %d:\nfast    line %d %+v model %q time %d keys %x/%x side %v\ndecoder line %d %+v model %q time %d keys %x/%x side %v",
				i, g.Line, g.Usage, gotModel[i], g.Time, g.Key, g.MsgKey, g.Sidechain,
				w.Line, w.Usage, wantModel[i], w.Time, w.Key, w.MsgKey, w.Sidechain)
		}
	}
	return ""
}
