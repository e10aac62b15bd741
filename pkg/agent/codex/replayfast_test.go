package codex

import (
	"bufio"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// liteSlow is replayHome without liteFast: the decoder it is held to.
type liteSlow struct{ Home }

func (liteSlow) Decode(obj []byte, r *session.Record) { decode(obj, r, true) }

// checkLiteFast decodes line both ways and reports whether liteFast took
// it.
func checkLiteFast(t *testing.T, line []byte) bool {
	t.Helper()
	l, err := jsonl.NewReader(strings.NewReader(string(line) + "\n")).Next()
	if err != nil {
		return false
	}
	got, want := session.Decode(replayHome{}, l), session.Decode(liteSlow{}, l)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s\nliteFast %+v\ndecode   %+v", line, got, want)
	}
	// read as the replay reads a file: replayHome's lines unvalidated, for
	// DecodeLazy to validate; with the newline and without
	for _, text := range []string{string(line) + "\n", string(line)} {
		got, want := readAll(t, text, replayHome{}), readAll(t, text, liteSlow{})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q\nread lazily %+v\nvalidated   %+v", text, got, want)
		}
	}
	if l.Status != jsonl.OK {
		return false
	}
	obj := l.Raw
	if l.RawControl {
		obj = jsonl.Strict(l.Raw)
	}
	var r session.Record
	return liteFast(obj, &r)
}

// readAll is every record session.ReadRecords makes of text with f.
func readAll(t *testing.T, text string, f session.Format) []session.Record {
	t.Helper()
	var rs []session.Record
	err := session.ReadRecords(strings.NewReader(text), f, func(r *session.Record) error {
		c := *r
		c.Line = r.Line.Clone()
		rs = append(rs, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// liteCases are lines at the edges of what liteFast takes.
var liteCases = []string{
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":"plain" }}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":null}}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"function_call","name":"exec","arguments":"{}","call_id":"c1"}}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + strings.Repeat("out ", 100) + `"}}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"event_msg","payload":{"type":"task_started","model_context_window":1000}}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"compacted","payload":{"message":"sum","replacement_history":[]}}`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"session_meta","payload":{"id":"x","cwd":"/p"}}`,
	`{"timestamp":null,"type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}`,
	`{"type":"response_item","payload":{"type":"reasoning","summary":[]}}`,
	`{"timestamp":"t","type":"response_item","payload":{"Type":"message","role":"user","content":"x"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"message","type":"reasoning"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"typ\u0065":"message"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"us\u0065r","content":"x"}}`,
	`{"timestamp":"t","type":"response_item","payload":[]}`,
	`{"timestamp":"t","type":"response_item","payload":null}`,
	`{"timestamp":"t","type":"response_item"}`,
	`{"timestamp":"t","type":"","payload":{}}`,
	`{"timestamp":"t","type":"x","payload":{"type":5}}`,
	`{"type":"message","role":"user","content":"legacy"}`,
	`{"record_type":"state"}`,
	`{"timestamp":"t","type":"response_item","role":"user","payload":{"type":"message"}}`,
	`{"timestamp":"t","type":"response_item","role":5,"payload":{"type":"message"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"message","name":[]}}`,
	`{ "timestamp" : "t" , "type" : "response_item" , "payload" : { "type" : "message" , "role" : "user" , "content" : "sp" } }`,
	`{"timestamp":"2026-11-01T10:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":"é"}}`,
	`[1]`,
	// what the strict lexer of DecodeLazy must judge as the validator does
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + "\xff" + `"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + "\x00" + `"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + "\x01" + `"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"\q"}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[01]}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[tru]}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"a":1,}}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + "\xc3" + `"}]}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"}} x`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"x"}}  `,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}}`,
	`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`,
}

// TestLiteFastAsDecode: on the edge cases and on every line of the
// rollouts the replay tests read (real ones where ../shared is there,
// generated ones otherwise), liteFast gives decode's record, and it takes
// most lines of the rollouts.
func TestLiteFastAsDecode(t *testing.T) {
	for _, c := range liteCases {
		checkLiteFast(t, []byte(c))
	}
	lines, taken := 0, 0
	for _, path := range mapRollouts(t) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			lines++
			if checkLiteFast(t, sc.Bytes()) {
				taken++
			}
		}
		f.Close()
	}
	t.Logf("liteFast took %d of %d lines", taken, lines)
	if taken*10 < lines*9 {
		t.Errorf("liteFast took only %d of %d lines", taken, lines)
	}
}

// FuzzReplayFast holds liteFast to the decoder it stands in for, on any
// line.
func FuzzReplayFast(f *testing.F) {
	for _, c := range liteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if strings.ContainsAny(string(line), "\n\r") {
			return
		}
		checkLiteFast(t, line)
	})
}
