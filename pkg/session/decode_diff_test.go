package session_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/session"
)

// fieldNames are the JSON names the homes' decoders read (their struct
// tags), read from their source.
var fieldNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	re := regexp.MustCompile("json:\"([^\",]+)")
	files, _ := filepath.Glob(filepath.Join("..", "agent", "*", "*.go"))
	files = append(files, "format.go")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		for _, m := range re.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
	}
	return names
})

// caseOnlyKey reports whether an object of the line has a key that is one
// of fieldNames in another case ("TYPE", "Message"). encoding/json matches
// such a key to the field; the fast decoder does not, as the clients do
// not (JSON.parse, serde and Python's json are all case-sensitive), so
// these lines are left out of the comparison (TestDecodeIsCaseSensitive
// says what the fast decoder does with them).
func caseOnlyKey(line []byte) bool {
	if jsonl.Classify(line, true) != jsonl.OK {
		return false
	}
	v, err := ojson.Parse(jsonl.Strict(line))
	if err != nil {
		return false
	}
	names := fieldNames()
	var walk func(v *ojson.Value) bool
	walk = func(v *ojson.Value) bool {
		for _, m := range v.Members() {
			if !names[m.Key] {
				for n := range names {
					if strings.EqualFold(n, m.Key) {
						return true
					}
				}
			}
			if walk(m.Val) {
				return true
			}
		}
		for _, e := range v.Elems() {
			if walk(e) {
				return true
			}
		}
		return false
	}
	return walk(v)
}

// edgeLines are lines written by hand to find where a fast decoder and
// encoding/json part: wrong types in every field the homes read, nulls,
// duplicate and differently cased keys, escapes and surrogates, odd
// numbers, raw control characters, deep nesting, and corrupt lines (which
// must stay corrupt).
var edgeLines = []string{
	`{}`, `{"type":null}`, `{"type":1}`, `{"type":"user","message":null}`,
	`{"type":"user","message":"text"}`, `{"type":"user","message":[1,2]}`,
	`{"type":"user","message":{"role":"user","content":null}}`,
	`{"type":"user","message":{"role":"user","content":12}}`,
	`{"type":"user","message":{"role":"user","content":{"a":1}}}`,
	`{"type":"user","message":{"role":"user","content":[1,"x",null,{"type":"text","text":5}]}}`,
	`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r"},{"content":"deep"}]}]}}`,
	`{"type":"assistant","message":{"id":"m","model":"x","content":[{"type":"tool_use","id":"t","name":"n","input":{"a":[1,2,{"b":null}]}}],"usage":{"input_tokens":"12","output_tokens":1.0,"cache_read_input_tokens":-3,"cache_creation_input_tokens":1e3,"cache_creation":{"ephemeral_1h_input_tokens":"x"}}}}`,
	`{"type":"assistant","message":{"usage":{"input_tokens":99999999999999999999}}}`,
	`{"type":"assistant","message":{"usage":{"input_tokens":true,"output_tokens":[1]}}}`,
	`{"type":"assistant","message":{"usage":null}}`,
	`{"TYPE":"user","Message":{"ROLE":"user","Content":"cased keys"}}`,
	`{"type":"user","type":"assistant","message":{"content":"dup"},"message":{"content":"dup2"}}`,
	`{"type":"user","message":{"content":"\u0000\u001f\ud800\udc00\ud800 x \udfff \u00e9 \/ \b\f\n\r\t \\ \""}}`,
	"{\"type\":\"user\",\"message\":{\"content\":\"raw\tcontrol\x01chars\"}}",
	`{"type":"system","subtype":"compact_boundary","content":[{"text":"a"},{"content":[{"text":"b"}]}],"compactMetadata":{"preTokens":1,"postTokens":"686"}}`,
	`{"type":"system","subtype":5}`,
	`{"type":"summary","summary":{"x":1}}`,
	`{"type":"custom-title","customTitle":"","aiTitle":null,"title":"t"}`,
	`{"type":"api-request","params":{"model":["x"]}}`,
	`{"type":"api-request","params":"x"}`,
	`{"timestamp":"2026-11-01T10:00:00.123456789+02:00","type":"user"}`,
	`{"timestamp":12,"type":"user"}`,
	`{"parentUuid":12,"type":"user"}`,
	`{"isSidechain":"true","type":"user"}`,
	`{"role":"_checkpoint","id":"3"}`, `{"role":"_checkpoint","id":3.5}`, `{"role":"_checkpoint","id":-1}`,
	`{"role":"_usage","token_count":"12"}`, `{"role":"user","content":[{"type":"text","text":"k"}]}`,
	`{"role":"assistant","content":"a","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]}`,
	`{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"r"}]}`,
	`{"type":"session_meta","payload":{"id":"x","cwd":"/p","timestamp":"2026-11-01T10:00:00Z"}}`,
	`{"type":"response_item","payload":null}`, `{"type":"response_item","payload":[]}`,
	`{"type":"context.apply_compaction","summary":"s","count":1}`,
	`{"type":"context.apply_compaction","contextSummary":null,"summary":{"role":"user","content":[{"type":"text","text":"p"}]}}`,
	`{"type":"context.apply_compaction","contextSummary":7,"summary":[1]}`,
	`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
	`{"type":"response_item","payload":{"type":"function_call","name":"f","arguments":{"a":1},"call_id":"c"}}`,
	`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":{"content":"x","success":"no"}}}`,
	`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":"1","output_tokens":2},"last_token_usage":null,"model_context_window":"x"}}}`,
	`{"type":"turn_context","payload":{"model":7}}`, `{"type":"compacted","payload":{"message":"s","replacement_history":[1]}}`,
	`{"a":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`,
	`{"type":"user","message":{"content":"` + strings.Repeat("long text é 日本 ", 2000) + `"}}`,
	// corrupt: they must stay corrupt whatever the decoder
	`{"type":"user"`, `[1,2]`, `"x"`, "{\"type\":\"user\xff\"}", "{\"a\":\"\x00\"}", `{"a":"\x"}`, ``, `   `,
}

// corpusLines are the lines of every session file in the repository's
// test data (real clients' output and hand-written files).
func corpusLines(t testing.TB) [][]byte {
	var lines [][]byte
	for _, dir := range []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "agent")} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(filepath.Base(p), ".jsonl") || strings.HasSuffix(p, ".zst") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, bytes.Split(b, []byte("\n"))...)
			return nil
		})
	}
	if len(lines) < 500 {
		t.Fatalf("only %d lines of test data found", len(lines))
	}
	return lines
}

// decodeBoth decodes every line of data with every home, with the fast
// decoder and with encoding/json, and reports the first record where they
// differ.
func decodeBoth(data []byte) error {
	type rec struct {
		line int
		r    session.Record
	}
	read := func(ref bool) [][]rec {
		session.UseReference(ref)
		defer session.UseReference(false)
		var out [][]rec
		for _, a := range session.Agents {
			f := session.FormatFor(a)
			if f == nil {
				continue
			}
			var rs []rec
			session.ReadRecords(bytes.NewReader(data), f, func(r *session.Record) error {
				c := *r
				c.Line = r.Line.Clone()
				rs = append(rs, rec{r.Line.Num, c})
				return nil
			})
			out = append(out, rs)
		}
		return out
	}
	var kept [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if !caseOnlyKey(bytes.TrimSuffix(l, []byte("\r"))) {
			kept = append(kept, l)
		}
	}
	data = bytes.Join(kept, []byte("\n"))
	fast, full := read(false), read(true)
	for i := range full {
		if len(fast[i]) != len(full[i]) {
			return fmt.Errorf("home %d: %d records, encoding/json %d", i, len(fast[i]), len(full[i]))
		}
		for j := range full[i] {
			if !reflect.DeepEqual(fast[i][j], full[i][j]) {
				return fmt.Errorf("home %d, line %d %q:\nfast %+v\nfull %+v", i, full[i][j].line,
					full[i][j].r.Line.Raw, fast[i][j].r, full[i][j].r)
			}
		}
	}
	return nil
}

// TestDecodeIsCaseSensitive: a key in another case than the client writes
// it is not the field (as in the clients), where encoding/json would take
// it.
func TestDecodeIsCaseSensitive(t *testing.T) {
	l := jsonl.Line{Num: 1, Raw: []byte(`{"TYPE":"user","Message":{"role":"user","content":"x"}}`)}
	r := session.Decode(session.FormatFor(session.Claude), &l)
	if r.Kind != session.KindUnknown || r.Text != "" {
		t.Errorf("kind %v text %q: a key in another case was read as the field", r.Kind, r.Text)
	}
	if !caseOnlyKey(l.Raw) || caseOnlyKey([]byte(`{"type":"user","message":{"content":"x"}}`)) {
		t.Error("caseOnlyKey is wrong")
	}
}

// FuzzDecodeDifferential: the fast decoder and encoding/json give the same
// record for every line, whatever the bytes.
func FuzzDecodeDifferential(f *testing.F) {
	for _, l := range edgeLines {
		f.Add([]byte(l))
	}
	for i, l := range corpusLines(f) {
		if i%7 == 0 && len(l) < 8<<10 {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := decodeBoth(data); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDetachKnowsEveryString: detach must see every string field of a
// Record (a new one would keep whole lines alive).
func TestDetachKnowsEveryString(t *testing.T) {
	known := map[string]bool{"Agent": true, "Type": true, "Role": true, "Text": true, "Thinking": true, "Model": true,
		"Prompt": true, "UUID": true, "ParentUUID": true, "LogicalParentUUID": true, "AgentID": true, "SessionID": true,
		"CWD": true, "Version": true, "MessageID": true, "RequestID": true, "Title": true,
		"ToolCalls.ID": true, "ToolCalls.Name": true, "ToolCalls.Input": true, "ToolResults.CallID": true, "ToolResults.Output": true}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			fd := typ.Field(i)
			name := prefix + fd.Name
			switch {
			case fd.Type.Kind() == reflect.String && !known[name]:
				t.Errorf("Record.%s is a string that detach does not know", name)
			case fd.Type.Kind() == reflect.Slice && fd.Type.Elem().Kind() == reflect.Struct:
				walk(name+".", fd.Type.Elem())
			case fd.Type.Kind() == reflect.Slice && fd.Type.Elem().Kind() == reflect.String:
				t.Errorf("Record.%s holds strings that detach does not know", name)
			}
		}
	}
	walk("", reflect.TypeOf(session.Record{}))
}
