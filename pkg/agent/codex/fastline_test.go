package codex

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/usage"
)

// fastLines are token_count events in the layouts Codex writes (0.104,
// 0.169 with its ordinal, cache writes and reasoning flag), which the fast
// path must take, not only match.
var fastLines = []string{
	codexTC(cu(19653, 11988, 162, 63), cu(19653, 11988, 162, 63)),
	`{"timestamp":"2026-11-22T02:59:33.239Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9709,"cached_input_tokens":6796,"output_tokens":31,"reasoning_output_tokens":3,"total_tokens":9740},"last_token_usage":{"input_tokens":9709,"cached_input_tokens":6796,"output_tokens":31,"reasoning_output_tokens":3,"total_tokens":9740},"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":1.5,"window_minutes":300,"resets_at":1793520000},"secondary":null,"credits":{"has_credits":false,"unlimited":false,"balance":null},"plan_type":null}}}`,
	`{"timestamp":"2026-11-22T02:59:33.264Z","ordinal":19,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":19634,"cached_input_tokens":13743,"cache_write_input_tokens":0,"output_tokens":96,"reasoning_output_tokens":6,"total_tokens":19730},"last_token_usage":{"input_tokens":9925,"cached_input_tokens":6947,"cache_write_input_tokens":0,"output_tokens":65,"reasoning_output_tokens":3,"total_tokens":9990},"last_usage_includes_reasoning":false,"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}`,
	`{"timestamp":"2026-11-22T02:59:34.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}}}}`,
	`{"timestamp":"2026-11-22T02:59:35.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6},"total_token_usage":{"input_tokens":7,"output_tokens":2,"total_tokens":9},"model_context_window":1},"rate_limits":null}}` + "\r",
	`{"timestamp":"","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":0012,"output_tokens":999999999999},"model_context_window":0},"rate_limits":nul}}`,
}

// mutations are the edits a line gets in the tests, each a way a line may
// leave Codex's layout (or a writer other than Codex may write it).
var mutations = []func(string) string{
	func(l string) string { return strings.Replace(l, `":`, `": `, 3) },
	func(l string) string { return l[:len(l)-3] },
	func(l string) string { return l[:len(l)-1] },
	func(l string) string { return l + "}" },
	func(l string) string { return l + " x" },
	func(l string) string { return " " + l },
	func(l string) string { return strings.Replace(l, `"output_tokens":`, `"output_tokens":"1`, 1) },
	func(l string) string { return strings.Replace(l, `"output_tokens":`, `"output_tokens":-`, 1) },
	func(l string) string { return strings.Replace(l, `"output_tokens":`, `"output_tokens":1.`, 1) },
	func(l string) string { return strings.Replace(l, `"output_tokens":`, `"output_tokens":1e`, 1) },
	func(l string) string {
		return strings.Replace(l, `"output_tokens":`, `"output_tokens":99999999999999999999`, 1)
	},
	func(l string) string {
		return strings.Replace(l, `"output_tokens":`, `"output_tokens":100000000000`, 1)
	},
	func(l string) string { return strings.Replace(l, `"output_tokens":`, `"output_tokens":null,"x":`, 1) },
	func(l string) string { return strings.Replace(l, `"input_tokens":`, `"input_tokens" :`, 1) },
	func(l string) string { return strings.Replace(l, `"input_tokens":`, `"input_tokens":`+"\t", 1) },
	func(l string) string {
		return strings.Replace(l, `"total_token_usage":`, `"model":"gpt-x","total_token_usage":`, 1)
	},
	func(l string) string {
		return strings.Replace(l, `"total_token_usage":{`, `"total_token_usage":{}, "t":{`, 1)
	},
	func(l string) string {
		return strings.Replace(l, `"last_token_usage":`, `"last_token_usage":null,"x":`, 1)
	},
	func(l string) string {
		return strings.Replace(l, `"model_context_window":`, `"model_context_window":null,"y":`, 1)
	},
	func(l string) string {
		return strings.Replace(l, `"model_context_window":`, `"last_usage_includes_reasoning":truer,"model_context_window":`, 1)
	},
	func(l string) string { return strings.Replace(l, `"timestamp":"2`, `"timestamp":"\u0032`, 1) },
	func(l string) string { return strings.Replace(l, `"timestamp":"2`, `"timestamp":"\"2`, 1) },
	func(l string) string { return strings.Replace(l, `.239Z"`, `Z"`, 1) },
	func(l string) string { return strings.Replace(l, `"timestamp":"`, `"timestamp":"x`, 1) },
	func(l string) string { return strings.Replace(l, `"timestamp":"`, `"ordinal":3,"timestamp":"`, 1) },
	func(l string) string {
		return strings.Replace(l, `","type":"event_msg"`, `","ordinal":,"type":"event_msg"`, 1)
	},
	func(l string) string {
		return strings.Replace(l, `","type":"event_msg"`, `","ordinal":-1,"type":"event_msg"`, 1)
	},
	func(l string) string { return strings.Replace(l, `"event_msg"`, `"event_\u006dsg"`, 1) },
	func(l string) string {
		return strings.Replace(l, `"type":"token_count"`, `"type":"token_count","type":"token_count"`, 1)
	},
	func(l string) string { return strings.Replace(l, `"rate_limits":`, `"rate_limits":}`, 1) },
	func(l string) string {
		return strings.Replace(l, `"rate_limits":`, `"rate_limits":{"a":"}"},"info":null,"r":`, 1)
	},
	func(l string) string { return strings.Replace(l, `"rate_limits":`, `"rate_limits":"\"}}`, 1) },
	func(l string) string { return strings.Replace(l, `"info":{`, `"info":{}, "i":{`, 1) },
	func(l string) string { return strings.Replace(l, `"info":{`, `"info":null,"j":{`, 1) },
	func(l string) string { return strings.Replace(l, `{"timestamp"`, `{"timestamp":1,"timestamp"`, 1) },
	func(l string) string { return strings.Replace(l, `}}`, `},"payload":{}}`, 1) },
}

// variants are the lines, each mutation of them, and each line with one
// byte replaced by a byte that matters to JSON, at every place.
func variants(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l)
		for _, m := range mutations {
			out = append(out, m(l))
		}
		for i := 0; i < len(l); i++ {
			for _, c := range []byte(` "\},:{0-x`) {
				if l[i] != c {
					out = append(out, l[:i]+string(c)+l[i+1:])
				}
			}
		}
	}
	return out
}

// sameEvent says how two decodings of a line differ ("" when they do not).
func sameEvent(a, b *codexEv) string {
	raw := func(u *codexRaw) string {
		if u == nil {
			return "nil"
		}
		return fmt.Sprintf("%+v", *u)
	}
	ea := fmt.Sprintf("ts %q typ %q ptype %q model %q info %v total %s last %s resp %s id %q window %d",
		a.ts, a.typ, a.ptype, a.model, a.info, raw(a.total), raw(a.last), raw(a.resp), a.respID, a.window)
	eb := fmt.Sprintf("ts %q typ %q ptype %q model %q info %v total %s last %s resp %s id %q window %d",
		b.ts, b.typ, b.ptype, b.model, b.info, raw(b.total), raw(b.last), raw(b.resp), b.respID, b.window)
	if ea != eb {
		return "fast " + ea + "\nfull " + eb
	}
	return ""
}

// checkFast holds tokenCountFast to codexEvent on one line: a line it
// takes, codexEvent takes too, with the same event, and ccusage's
// prefilter sees it. It reports whether the fast path took the line.
func checkFast(t testing.TB, line []byte) bool {
	var f, s codexEv
	if !tokenCountFast(line, &f) {
		return false
	}
	if !codexEvent(line, &s) {
		t.Fatalf("%q: the fast path read a line the full decoder refuses", line)
	}
	if d := sameEvent(&f, &s); d != "" {
		t.Fatalf("%q:\n%s", line, d)
	}
	if !bytes.Contains(line, ccEventMsg) || !bytes.Contains(line, ccTokenCount) {
		t.Fatalf("%q: the fast path read a line ccusage's prefilter does not see", line)
	}
	return true
}

// rollouts lists the Codex rollouts of the test data and, when they are
// there, of the shared samples.
func rollouts(t *testing.T) []string {
	var files []string
	for _, root := range []string{"../../../testdata", "testdata", "../../../../shared/samples"} {
		filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasPrefix(e.Name(), "rollout-") && strings.Contains(e.Name(), ".jsonl") {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatal("no Codex rollouts in the test data")
	}
	return files
}

func TestTokenCountFastMatchesEvent(t *testing.T) {
	for _, l := range fastLines {
		if !checkFast(t, []byte(l)) {
			t.Errorf("%q: not taken by the fast path", l)
		}
	}
	taken, n := 0, 0
	for _, l := range variants(fastLines) {
		n++
		if checkFast(t, []byte(l)) {
			taken++
		}
	}
	t.Logf("%d of %d variants taken by the fast path", taken, n)
	// and every line of the rollouts we have
	taken, n = 0, 0
	for _, p := range rollouts(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			n++
			if checkFast(t, l) {
				taken++
			}
		}
	}
	t.Logf("%d of %d rollout lines taken by the fast path", taken, n)
	if taken == 0 {
		t.Error("the fast path took no line of the rollouts")
	}
}

// scanBoth reads one file with and without the fast path; the results
// must be the same in every field.
func scanBoth(t *testing.T, name string, data []byte) {
	t.Helper()
	read := func(fast bool) *usage.FileUsage {
		var rd usage.Reader
		fu, err := rd.Read(context.Background(), bytes.NewReader(data), name, scanner{fast: fast}, usage.Carries|usage.CCUsage|usage.Gauge)
		if err != nil {
			t.Fatal(err)
		}
		return fu
	}
	fast, slow := read(true), read(false)
	if !reflect.DeepEqual(fast, slow) {
		for i := range min(len(fast.Requests), len(slow.Requests)) {
			if fast.Requests[i] != slow.Requests[i] {
				t.Fatalf("%s: request %d differs:\nfast %+v\nfull %+v", name, i, fast.Requests[i], slow.Requests[i])
			}
		}
		t.Fatalf("%s: the fast path's scan differs:\nfast %+v\nfull %+v", name, *fast, *slow)
	}
}

// scanner is the Home's scanner with the fast path on or off.
type scanner struct {
	Home
	fast bool
}

func (s scanner) ScanUsage(lr *usage.LineReader, fu *usage.FileUsage) error {
	return scanUsage(lr, fu, s.fast)
}

func TestScanUsageFastSameAsFull(t *testing.T) {
	for _, p := range rollouts(t) {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(p, ".zst") {
			continue // compressed: its lines are read by the plain twin's test
		}
		scanBoth(t, p, data)
	}
	// every variant, in files of a few lines each, among the lines that
	// set a model and that a response record counts
	vs := variants(fastLines)
	var b strings.Builder
	for i, l := range vs {
		if i%7 == 0 {
			b.WriteString(`{"timestamp":"2026-11-22T02:59:30.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5"}}` + "\n")
		}
		if i%11 == 0 {
			fmt.Fprintf(&b, `{"timestamp":"2026-11-22T02:59:31.000Z","ordinal":%d,"type":"token_usage_record","payload":{"response_id":"r%d","usage":{"input_tokens":%d,"cached_input_tokens":3,"output_tokens":4,"reasoning_output_tokens":1,"total_tokens":9}}}`+"\n", i, i, 100+i)
		}
		b.WriteString(l + "\n")
		if i%40 == 39 {
			scanBoth(t, fmt.Sprintf("variants-%d", i), []byte(b.String()))
			b.Reset()
		}
	}
	scanBoth(t, "variants-last", []byte(b.String()))
	// each variant twice, the second time with another timestamp (or the
	// same), and runs of repeated turn_contexts: the repeats take the
	// remembered decoding of their predecessor (lineRest)
	b.Reset()
	turns := []string{
		`{"timestamp":"2026-11-22T02:59:30.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5"}}`,
		`{"timestamp":"2026-11-22T02:59:30.000Z","type":"turn_context","payload":{"cwd":"/w","model":""}}`,
		`{"timestamp":"2026-11-22T02:59:30.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.1"},"type":"turn_context"}`,
		`{"timestamp":"2026-11-22T02:59:30.000Z","type" :"turn_context","payload":{"cwd":"/w","model":"gpt-5.2"}}`,
		`{"timestamp":"2026-11-22T02:59:30.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.3"}`,
	}
	for i, l := range vs {
		if i%5 == 0 {
			tl := turns[(i/5)%len(turns)]
			b.WriteString(tl + "\n")
			b.WriteString(retime(tl, i) + "\n")
		}
		b.WriteString(l + "\n")
		b.WriteString(retime(l, i) + "\n")
		if i%40 == 39 {
			scanBoth(t, fmt.Sprintf("repeats-%d", i), []byte(b.String()))
			b.Reset()
		}
	}
	scanBoth(t, "repeats-last", []byte(b.String()))
}

// retime gives a line's timestamp other digits (every third line keeps
// it, and some get one of another length or with other RFC 3339 bytes).
func retime(l string, i int) string {
	const head = `{"timestamp":"2026-11-22T02:59:`
	if !strings.HasPrefix(l, head) {
		return l
	}
	switch i % 6 {
	case 0, 3:
		return l
	case 1:
		return strings.Replace(l, head, `{"timestamp":"2026-11-22T03:00:`, 1)
	case 2:
		return strings.Replace(l, head, `{"timestamp":"2026-11-22T03:00:01+01:00`+`","x":"`, 1)
	case 4:
		return strings.Replace(l, head, `{"timestamp":"2026-11-23T03:`, 1)
	}
	return strings.Replace(l, head, `{"timestamp":"2026-11-22 02:59:`, 1)
}

func TestResponseItemNeverFast(t *testing.T) {
	lines := variants(append(fastLines,
		`{"timestamp":"2026-11-22T02:59:33.239Z","type":"response_item","payload":{"type":"message"}}`))
	for _, p := range rollouts(t) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			lines = append(lines, string(l))
		}
	}
	seen := 0
	for _, l := range lines {
		var ev codexEv
		if isResponseItem([]byte(l)) {
			seen++
			if tokenCountFast([]byte(l), &ev) {
				t.Fatalf("%q: a response_item the fast path takes", l)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no response_item among the lines")
	}
}

// FuzzScanUsageFast holds a scan with the fast paths (tokenCountFast and
// the repeats of lineRest) to one without, over a fuzzed rollout.
func FuzzScanUsageFast(f *testing.F) {
	var b strings.Builder
	for i, l := range fastLines {
		b.WriteString(l + "\n" + retime(l, i+1) + "\n")
	}
	f.Add([]byte(b.String()))
	f.Add([]byte(`{"timestamp":"2026-11-22T02:59:30.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5"}}` + "\n" +
		`{"timestamp":"2026-11-22T02:59:31.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5"}}` + "\n" + fastLines[0] + "\n" +
		retime(fastLines[0], 1) + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		scanBoth(t, "fuzz", data)
	})
}

func FuzzTokenCountFast(f *testing.F) {
	for _, l := range fastLines {
		f.Add([]byte(l))
	}
	for _, m := range mutations[:8] {
		f.Add([]byte(m(fastLines[2])))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFast(t, line)
	})
}

// TestCodexTime holds codexTime to a byte-by-byte reading of the layout,
// with each byte of a time replaced by every other.
func TestCodexTime(t *testing.T) {
	ref := func(b []byte) bool {
		const layout = "dddd-dd-ddTdd:dd:dd.dddZ"
		if len(b) < len(layout) {
			return false
		}
		for i := range len(layout) {
			if c := layout[i]; c == 'd' && (b[i] < '0' || b[i] > '9') || c != 'd' && b[i] != c {
				return false
			}
		}
		return true
	}
	base := "2026-11-22T02:59:33.239Z\"x"
	if !codexTime([]byte(base)) {
		t.Fatal("a time of Codex's layout refused")
	}
	for i := range len(base) {
		for c := 0; c < 256; c++ {
			b := []byte(base)
			b[i] = byte(c)
			if got, want := codexTime(b), ref(b); got != want {
				t.Fatalf("%q: %v, byte by byte %v", b, got, want)
			}
		}
	}
	for n := range len(base) {
		if got, want := codexTime([]byte(base[:n])), ref([]byte(base[:n])); got != want {
			t.Fatalf("%q: %v, byte by byte %v", base[:n], got, want)
		}
	}
}
