package tokens

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

func scan(t *testing.T, a session.Agent, role session.FileRole, lines ...string) *FileUsage {
	t.Helper()
	fu, err := ScanReader(strings.NewReader(strings.Join(lines, "\n")+"\n"), "test.jsonl", a, role)
	if err != nil {
		t.Fatal(err)
	}
	return fu
}

func total(reqs []Request) session.Usage {
	var u session.Usage
	for _, r := range reqs {
		u = u.Add(r.Usage)
	}
	return u
}

// claudeLineOf builds an assistant line the way Claude Code 2.1.114 writes it.
func claudeLineOf(msg, req, usage string, extra string) string {
	r := ""
	if req != "" {
		r = `,"requestId":"` + req + `"`
	}
	return `{"parentUuid":"p","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"` + msg +
		`","type":"message","role":"assistant","content":[{"type":"text","text":"a \"usage\":{ in text"}],"usage":` + usage + `}` +
		r + extra + `,"type":"assistant","uuid":"u","timestamp":"2026-11-22T02:58:38.406Z","sessionId":"s","version":"2.1.114"}`
}

func TestClaudeDedupeKeepsLargestPerResponse(t *testing.T) {
	// one response over three lines with growing output (streaming
	// partials), a second response, and a line without message.id (never
	// deduplicated, as in ccusage)
	fu := scan(t, session.Claude, session.FileMain,
		claudeLineOf("msg_1", "req_1", `{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}`, ""),
		claudeLineOf("msg_1", "req_1", `{"input_tokens":10,"output_tokens":7,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}`, ""),
		claudeLineOf("msg_1", "req_1", `{"input_tokens":10,"output_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000}`, ""),
		claudeLineOf("msg_2", "req_2", `{"input_tokens":20,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":2000,"cache_creation":{"ephemeral_5m_input_tokens":30,"ephemeral_1h_input_tokens":12}}`, ""),
		`{"type":"assistant","timestamp":"2026-11-22T02:58:38.406Z","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"assistant","timestamp":"2026-11-22T02:58:38.406Z","message":{"usage":{"input_tokens":1,"output_tokens":1}}}`,
	)
	if fu.UsageLines != 6 || fu.RejectedCount != 0 || fu.SessctlOnly != 0 {
		t.Fatalf("usage lines %d, rejected %d, sessctl-only %d", fu.UsageLines, fu.RejectedCount, fu.SessctlOnly)
	}
	var lg Ledger
	lg.Add(fu)
	if len(lg.Requests) != 4 {
		t.Fatalf("got %d requests, want 4 (msg_1, msg_2, two without id)", len(lg.Requests))
	}
	// msg_1 keeps output 7; msg_2's cache creation is the 5m+1h split (42),
	// not the flat field (0)
	want := session.Usage{Input: 10 + 20 + 1 + 1, Output: 7 + 5 + 1 + 1, CacheRead: 1000 + 2000, CacheCreation: 100 + 42}
	if got := total(lg.Requests); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if got := total(lg.CCUsageView()); got != want {
		t.Errorf("ccusage view %+v, want %+v", got, want)
	}
}

func TestClaudeDedupeAcrossFilesAndSidechain(t *testing.T) {
	u := `{"input_tokens":5,"output_tokens":5}`
	a := scan(t, session.Claude, session.FileMain, claudeLineOf("msg_1", "req_1", u, ""))
	// the same response replayed in a resumed file: counted once, in the
	// first file (equal totals: the first one stays)
	b := scan(t, session.Claude, session.FileMain, claudeLineOf("msg_1", "req_1", u, ""))
	// a sidechain copy under a new requestId: the message id alone matches
	c := scan(t, session.Claude, session.FileSubagent, strings.Replace(claudeLineOf("msg_1", "req_9", `{"input_tokens":50,"output_tokens":5}`, ""), `"isSidechain":false`, `"isSidechain":true`, 1))
	var lg Ledger
	lg.Add(a)
	lg.Add(b)
	lg.Add(c)
	if len(lg.Requests) != 1 || lg.Requests[0].File != 0 || lg.Requests[0].Usage.Input != 5 {
		t.Fatalf("requests %+v: want one, from file 0, the non-sidechain one (input 5)", lg.Requests)
	}
}

func TestClaudeBadInputAndCCUsageQuirks(t *testing.T) {
	spaced := `{"parentUuid": null, "message": {"id": "msg_s", "model": "claude-opus-4-8", "usage": {"input_tokens": 20, "output_tokens": 7}}, "type": "assistant", "timestamp": "2026-11-22T02:58:38.406Z"}`
	fu := scan(t, session.Claude, session.FileMain,
		spaced, // ccusage drops it (no exact "usage":{ bytes); sessctl counts it
		claudeLineOf("msg_n", "", `{"input_tokens":3,"output_tokens":4}`, `,"costUSD":null`), // ccusage: null key
		claudeLineOf("msg_a", "", `{"input_tokens":"40","output_tokens":9}`, ""),             // a string
		claudeLineOf("msg_b", "", `{"input_tokens":40,"output_tokens":-9}`, ""),              // negative
		claudeLineOf("msg_c", "", `{"input_tokens":null,"output_tokens":9}`, ""),             // null
		claudeLineOf("msg_d", "", `{"input_tokens":4.5,"output_tokens":9}`, ""),              // fraction
		claudeLineOf("msg_e", "", `{"input_tokens":99999999999999,"output_tokens":1}`, ""),   // absurd
		claudeLineOf("msg_f", "", `{"input_tokens":1,"output_tokens":1,"cache_read_input_tokens":null}`, ""),
		`{"type":"assistant","message": {"usage":{ GARBAGE`,
		`not json at all`,
	)
	if fu.RejectedCount != 6 {
		t.Errorf("rejected %d lines %v, want 6 (string, negative, null, fraction, absurd, corrupt)", fu.RejectedCount, fu.Rejected)
	}
	// the fast scan looks only at lines that can carry usage: the garbled
	// usage line (9) counts, "not json at all" is skipped unseen
	if fu.Corrupt != 1 || fu.Rejected[len(fu.Rejected)-1].Line != 9 || fu.Lines != 10 {
		t.Errorf("corrupt %d, last rejection %+v, lines %d; want 1, line 9, 10", fu.Corrupt, fu.Rejected[len(fu.Rejected)-1], fu.Lines)
	}
	if fu.SessctlOnly != 3 || fu.CCUsageOnly != 1 {
		t.Errorf("sessctl-only %d (want 3: spaced, costUSD null, cache null), ccusage-only %d (want 1: absurd)", fu.SessctlOnly, fu.CCUsageOnly)
	}
	for _, d := range fu.Rejected {
		if d.Reason == "" || d.Line == 0 {
			t.Errorf("a rejection without line or reason: %+v", d)
		}
	}
	var lg Ledger
	lg.Add(fu)
	if got, want := total(lg.Requests), (session.Usage{Input: 20 + 3 + 1, Output: 7 + 4 + 1}); got != want {
		t.Errorf("sessctl %+v, want %+v", got, want)
	}
	if got, want := total(lg.CCUsageView()), (session.Usage{Input: 99999999999999, Output: 1}); got != want {
		t.Errorf("ccusage view %+v, want %+v", got, want)
	}
}

func codexTC(total, last string) string {
	return `{"timestamp":"2026-11-22T02:59:33.239Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":` + total +
		`,"last_token_usage":` + last + `,"model_context_window":258400},"rate_limits":null}}`
}

func cu(in, cached, out, reas int) string {
	return `{"input_tokens":` + itoa(in) + `,"cached_input_tokens":` + itoa(cached) + `,"output_tokens":` + itoa(out) +
		`,"reasoning_output_tokens":` + itoa(reas) + `,"total_tokens":` + itoa(in+out) + `}`
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestCodexDeltas(t *testing.T) {
	fu := scan(t, session.Codex, session.FileMain,
		`{"timestamp":"2026-11-22T02:59:33.113Z","type":"session_meta","payload":{"id":"x","cwd":"/w"}}`,
		`{"timestamp":"2026-11-22T02:59:33.113Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}`,
		`{"timestamp":"2026-11-22T02:59:33.130Z","type":"turn_context","payload":{"model":"gpt-5.3-codex"}}`,
		codexTC(cu(100, 60, 10, 4), cu(100, 60, 10, 4)),
		codexTC(cu(100, 60, 10, 4), cu(100, 60, 10, 4)), // written twice: adds nothing
		codexTC(cu(250, 160, 30, 4), cu(150, 100, 20, 0)),
		codexTC(cu(250, 160, 30, 4), `{"input_tokens":0,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":6187}`), // synthetic
	)
	var lg Ledger
	lg.Add(fu)
	want := session.Usage{Input: 250 - 160, CacheRead: 160, Output: 30, Reasoning: 4}
	if got := total(lg.Requests); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if fu.Context != 6187 || fu.Window != 258400 || fu.CWD != "/w" {
		t.Errorf("context %d window %d cwd %q", fu.Context, fu.Window, fu.CWD)
	}
	for _, r := range lg.Requests {
		if m := lg.Model(&r); m != "gpt-5.3-codex" {
			t.Errorf("model %q, want the turn_context's", m)
		}
	}
}

func TestKimiWireDedupesSubagentEvents(t *testing.T) {
	status := func(id string, in, out int) string {
		return `{"type": "StatusUpdate", "payload": {"context_tokens": 9120, "max_context_tokens": 262144, "token_usage": {"input_other": ` + itoa(in) +
			`, "output": ` + itoa(out) + `, "input_cache_read": 8000, "input_cache_creation": 0}, "message_id": "` + id + `"}}`
	}
	main := scan(t, session.Kimi, session.FileWire,
		`{"type": "metadata", "protocol_version": "1.10"}`,
		`{"timestamp": 1793520003.0, "message": `+status("m1", 1120, 40)+`}`,
		`{"timestamp": 1793520004.0, "message": {"type": "SubagentEvent", "payload": {"event": `+status("s1", 300, 20)+`}}}`,
	)
	sub := scan(t, session.Kimi, session.FileWire, `{"timestamp": 1793520004.0, "message": `+status("s1", 300, 20)+`}`)
	var lg Ledger
	lg.Add(main)
	lg.Add(sub)
	want := session.Usage{Input: 1120 + 300, Output: 60, CacheRead: 16000}
	if got := total(lg.Requests); got != want {
		t.Errorf("totals %+v, want %+v (s1 once)", got, want)
	}
	if main.Context != 9120 || main.Window != 262144 {
		t.Errorf("context %d window %d", main.Context, main.Window)
	}
	// context.jsonl _usage is a gauge, never billing
	ctx := scan(t, session.Kimi, session.FileMain, `{"role": "_usage", "token_count": 9332}`, `{"role": "_usage", "token_count": 9400}`)
	if len(ctx.Requests) != 0 || ctx.Context != 9400 {
		t.Errorf("context.jsonl: %d requests, gauge %d", len(ctx.Requests), ctx.Context)
	}
}

func TestClawdSumsAssistantUsage(t *testing.T) {
	fu := scan(t, session.Clawdcode, session.FileMain,
		`{"uuid":"a","type":"assistant","timestamp":"2026-03-02T09:15:07.031Z","message":{"role":"assistant","content":"x","model":"glm-4.6","usage":{"input_tokens":1820,"output_tokens":42}}}`,
		`{"uuid":"b","type":"assistant","timestamp":"2026-03-02T09:16:07.031Z","message":{"role":"assistant","content":"y","model":"glm-4.6","usage":{"input_tokens":1900,"output_tokens":8}}}`,
		`{"uuid":"c","type":"user","message":{"role":"user","content":"the word usage"}}`,
	)
	if got, want := total(fu.Requests), (session.Usage{Input: 3720, Output: 50}); got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
}

func TestLexer(t *testing.T) {
	l := lexer{b: []byte(`{"a":"x\"y\\","b":[1,{"c":"}"}],"n":-0,"m":12,"f":1e3,"s":"7","z":null}`)}
	got := map[string]string{}
	ok := l.object(func(k []byte) {
		switch string(k) {
		case "a":
			got["a"] = l.text()
		case "n", "m", "f", "s", "z":
			v, kind := l.number()
			got[string(k)] = itoa(int(v)) + "/" + kind.String()
		}
	})
	if !ok || l.bad {
		t.Fatal("lexer failed on valid JSON")
	}
	want := map[string]string{"a": `x"y\`, "n": "0/ok", "m": "12/ok", "f": "0/not an integer", "s": "0/a string", "z": "0/null"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	for _, bad := range []string{`{"a":`, `{"a":"x}`, `{"a" 1}`, `{"a":[1,2}`} {
		l := lexer{b: []byte(bad)}
		l.object(func([]byte) { l.skip() })
		if !l.bad {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestLineReaderLongLinesAndTornEnd(t *testing.T) {
	long := strings.Repeat("x", 700<<10) // longer than the buffer
	lr := &lineReader{r: strings.NewReader("a\n" + long + "\n\nlast"), buf: make([]byte, 64<<10)}
	var got []string
	for {
		l, err := lr.next()
		if err != nil {
			break
		}
		got = append(got, string(l))
	}
	if len(got) != 4 || got[0] != "a" || got[1] != long || got[2] != "" || got[3] != "last" || !lr.torn {
		t.Fatalf("lines %d, torn %v", len(got), lr.torn)
	}
}

func TestNextMatchCountsSkippedLines(t *testing.T) {
	in := "a\nb\n" + strings.Repeat("x", 100) + "\nusage here\nc\nusage again\ntorn"
	lr := &lineReader{r: strings.NewReader(in), buf: make([]byte, 16)} // tiny buffer: refills mid-line
	var got []string
	var nums []int
	for {
		l, err := lr.nextMatch([]byte("usage"))
		if err != nil {
			break
		}
		got = append(got, string(l))
		nums = append(nums, lr.num)
	}
	if len(got) != 2 || got[0] != "usage here" || nums[0] != 4 || got[1] != "usage again" || nums[1] != 6 {
		t.Fatalf("got %q at %v", got, nums)
	}
	if string(lr.tail) != "torn" || lr.num != 7 || !lr.torn {
		t.Fatalf("tail %q, num %d, torn %v", lr.tail, lr.num, lr.torn)
	}
}

func TestParseMillis(t *testing.T) {
	for _, s := range []string{"2026-11-22T02:58:38.406Z", "2024-02-29T23:59:59.999Z", "2026-11-22T02:58:38Z", "2026-11-22T03:58:38.406+01:00"} {
		got, err := parseMillis([]byte(s))
		want, err2 := parseRFC3339(s)
		if err != nil || err2 != nil || got != want {
			t.Errorf("%s: %d %v, want %d %v", s, got, err, want, err2)
		}
	}
	for _, s := range []string{"2026-02-31T02:58:38.406Z", "2026-13-22T02:58:38.406Z", "not a time", ""} {
		if _, err := parseMillis([]byte(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestUnescapeJSON(t *testing.T) {
	cases := map[string]string{
		`plain`:                    "plain",
		`a\ud83d\ude00b`:           "a\U0001F600b", // a surrogate pair is one character
		`\u00e9\n\t\"\\\/`:         "é\n\t\"\\/",
		`claude-opus-4-8\u005b1m]`: "claude-opus-4-8[1m]",
		`bad \x escape`:            `bad \x escape`, // not JSON: kept as it is
	}
	for in, want := range cases {
		if got := unescapeJSON([]byte(in)); got != want {
			t.Errorf("unescapeJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// Request keys are 64-bit hashes: ids that differ in a single byte or in
// their length, as sequential ids do, must not collide.
func TestHashKeyNoCollisions(t *testing.T) {
	seen := map[uint64]string{}
	add := func(id, req string, hasReq bool) {
		k := hashKey([]byte(id), []byte(req), hasReq)
		name := id + "|" + req
		if !hasReq {
			name = id + "|(none)"
		}
		if prev, ok := seen[k]; ok && prev != name {
			t.Fatalf("%q and %q hash alike", prev, name)
		}
		seen[k] = name
	}
	for i := range 200000 {
		id := "msg_01" + strconv.Itoa(i)
		add(id, "", false)
		add(id, "", true) // an empty requestId is not a missing one
		add(id, "req_011"+strconv.Itoa(i%977), true)
	}
	for n := range 40 {
		add(strings.Repeat("a", n), "", false) // lengths alone
	}
}

// Ledger.Totals is Totals.Add over the same requests.
func TestLedgerTotalsIsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	models := []string{"", "claude-opus-4-8", "(unknown)", "gpt-5", "claude-opus-4-8-fast"}
	fu := &FileUsage{}
	for range 500 {
		r := Request{Line: 1, counted: true, ccusage: true, Time: rng.Int64N(3) * 1_700_000_000_000}
		if rng.IntN(4) > 0 {
			r.Usage = session.Usage{Input: rng.Int64N(100), Output: rng.Int64N(3), CacheRead: rng.Int64N(2), Reasoning: rng.Int64N(2)}
		}
		r.Model = fu.models.id(models[rng.IntN(len(models))])
		fu.Requests = append(fu.Requests, r)
	}
	var lg Ledger
	lg.Add(fu)
	var reqs []*Request
	var want Totals
	for i := range lg.Requests {
		reqs = append(reqs, &lg.Requests[i])
		want.Add(&lg.Requests[i], lg.Model(&lg.Requests[i]))
	}
	got := lg.Totals(reqs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Totals\n%+v\nwant\n%+v", got, want)
	}
	if empty := lg.Totals(nil); !reflect.DeepEqual(empty, Totals{}) {
		t.Errorf("no requests: %+v", empty)
	}
}

// refDedupe is the two-map dedupe that dedupe replaced, kept to hold the
// one-map version to the same results.
type refDedupe struct{ exact, byMsg map[uint64]int32 }

func (d *refDedupe) push(list []Request, r *Request) []Request {
	if r.key == 0 {
		return append(list, *r)
	}
	at, ok := d.exact[r.key]
	if !ok {
		if j, found := d.byMsg[r.msgKey]; found && (r.sidechain || list[j].sidechain) {
			at, ok = j, true
		}
	}
	if ok {
		if better(r, &list[at]) {
			list[at] = *r
			d.exact[r.key] = at
			d.byMsg[r.msgKey] = at
		}
		return list
	}
	d.exact[r.key] = int32(len(list))
	d.byMsg[r.msgKey] = int32(len(list))
	return append(list, *r)
}

func TestDedupeIsTwoMapDedupe(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		// few messages and requestIds, so that keys repeat in every way
		msgs, reqs := 1+rng.IntN(8), 1+rng.IntN(4)
		var d dedupe
		ref := refDedupe{map[uint64]int32{}, map[uint64]int32{}}
		var got, want []Request
		for i := range 200 {
			r := Request{Line: int32(i), Usage: session.Usage{Input: rng.Int64N(5)}, sidechain: rng.IntN(3) == 0, speed: rng.IntN(4) == 0}
			if rng.IntN(10) > 0 {
				m := strconv.Itoa(rng.IntN(msgs))
				r.msgKey = hashKey([]byte(m), nil, false)
				if rng.IntN(5) == 0 {
					r.key = r.msgKey // no requestId
				} else {
					r.key = hashKey([]byte(m), []byte(strconv.Itoa(rng.IntN(reqs))), true)
				}
			}
			got = d.push(got, &r)
			want = ref.push(want, &r)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: lists differ\n%v\n%v", round, got, want)
		}
	}
}
