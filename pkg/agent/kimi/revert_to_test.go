package kimi

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/checkpoint"
)

// samplesDir is ../shared/samples seen from the repository root.
func samplesDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join("..", "..", "..", "shared", "samples")
	if _, err := os.Stat(d); err != nil {
		t.Skip("shared samples not present")
	}
	return d
}

func revert(t *testing.T, in string, n int64) (string, checkpoint.CopyRevertStats, error) {
	t.Helper()
	var out bytes.Buffer
	st, err := RevertTo(strings.NewReader(in), &out, n)
	return out.String(), st, err
}

// TestKimiRevertEx1 checks every checkpoint of the real ex1 file: the
// expected file is, by kimi.md §4.4, every line before the checkpoint line
// (all of ex1's lines are valid records ending in \n).
func TestKimiRevertEx1(t *testing.T) {
	for _, name := range []string{"ex1_basic_session/context.jsonl", "ex2_compacted_session/context.jsonl", "ex2_compacted_session/context_1.jsonl"} {
		data, err := os.ReadFile(filepath.Join(samplesDir(t), "kimi", name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		found := 0
		for i, l := range lines {
			var id int64
			if !strings.HasPrefix(l, `{"role": "_checkpoint", "id": `) {
				continue
			}
			if _, err := fmtSscan(l, &id); err != nil {
				t.Fatal(err)
			}
			found++
			want := strings.Join(lines[:i], "")
			got, st, err := revert(t, string(data), id)
			if err != nil {
				t.Fatalf("%s revert_to(%d): %v", name, id, err)
			}
			if got != want {
				t.Errorf("%s revert_to(%d): output differs from the lines before line %d", name, id, i+1)
			}
			if st.CutLine != i+1 || st.Kept != i || st.Dropped != 0 || st.Blank != 0 {
				t.Errorf("%s revert_to(%d): stats %+v", name, id, st)
			}
			if st.Removed != len(lines)-1-i { // the last element of SplitAfter is ""
				t.Errorf("%s revert_to(%d): removed %d, want %d", name, id, st.Removed, len(lines)-1-i)
			}
		}
		if found < 3 {
			t.Errorf("%s: only %d checkpoints", name, found)
		}
	}
}

func fmtSscan(line string, id *int64) (int, error) {
	s := strings.TrimPrefix(strings.TrimSpace(line), `{"role": "_checkpoint", "id": `)
	s = strings.TrimSuffix(s, "}")
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("bad checkpoint line " + line)
		}
		n = n*10 + int64(c-'0')
	}
	*id = n
	return 1, nil
}

// TestKimiRevertEdgeCases: the shared edge-case files with the outcomes
// samples/README.md lists, expected bytes written out by hand.
func TestKimiRevertEdgeCases(t *testing.T) {
	dir := filepath.Join(samplesDir(t), "kimi", "edge-cases")
	const sp = `{"role": "_system_prompt", "content": "Recovered prompt"}` + "\n"
	const user = `{"role": "user", "content": "Before bad line"}` + "\n"
	cases := []struct {
		file    string
		n       int64
		want    string
		dropped int
	}{
		{"revert_malformed_line_before_checkpoint.jsonl", 0, sp + user, 1},
		{"revert_structurally_invalid_object_before_checkpoint.jsonl", 0, sp + user, 1},
		{"revert_truncated_utf8_line_before_checkpoint.jsonl", 0, sp + user, 1},
		{"revert_preserves_system_prompt.jsonl", 1,
			`{"role": "_system_prompt", "content": "Preserved prompt"}` + "\n" +
				`{"role": "user", "content": "Before checkpoint"}` + "\n" +
				`{"role": "_checkpoint", "id": 0}` + "\n" +
				`{"role": "user", "content": "After checkpoint"}` + "\n", 0},
		{"revert_preserves_system_prompt.jsonl", 0,
			`{"role": "_system_prompt", "content": "Preserved prompt"}` + "\n" +
				`{"role": "user", "content": "Before checkpoint"}` + "\n", 0},
		{"restore_all_record_types.jsonl", 1,
			`{"role": "_system_prompt", "content": "The system prompt"}` + "\n" +
				`{"role": "user", "content": "Hello"}` + "\n" +
				`{"role": "_usage", "token_count": 42}` + "\n" +
				`{"role": "_checkpoint", "id": 0}` + "\n" +
				`{"role": "assistant", "content": "World"}` + "\n", 0},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		got, st, err := revert(t, string(data), c.n)
		if err != nil {
			t.Errorf("%s revert_to(%d): %v", c.file, c.n, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s revert_to(%d):\n got %q\nwant %q", c.file, c.n, got, c.want)
		}
		if st.Dropped != c.dropped {
			t.Errorf("%s revert_to(%d): dropped %d, want %d", c.file, c.n, st.Dropped, c.dropped)
		}
	}
	// restore_all_record_types: token count at checkpoint 1 is 42
	data, _ := os.ReadFile(filepath.Join(dir, "restore_all_record_types.jsonl"))
	if _, st, _ := revert(t, string(data), 1); st.Tokens != 42 || st.NextID != 2 {
		t.Errorf("tokens %d next id %d, want 42 and 2", st.Tokens, st.NextID)
	}
	// files without the checkpoint are refused
	for _, f := range []string{"legacy_no_system_prompt.jsonl", "restore_malformed_trailing_line.jsonl"} {
		data, _ := os.ReadFile(filepath.Join(dir, f))
		if _, _, err := revert(t, string(data), 0); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
			t.Errorf("%s: err %v, want checkpoint.ErrNoCheckpoint", f, err)
		}
	}
}

// TestKimiRevertPythonSemantics covers the details of §4.1/§4.4 one by one;
// each expectation follows from the Python code path described there.
func TestKimiRevertPythonSemantics(t *testing.T) {
	const sp = `{"role": "_system_prompt", "content": "p"}`
	cases := []struct {
		name string
		in   string
		n    int64
		want string
	}{
		{"crlf normalised", sp + "\r\n" + `{"role":"user","content":"a"}` + "\r\n" + `{"role": "_checkpoint", "id": 0}` + "\r\n",
			0, sp + "\n" + `{"role":"user","content":"a"}` + "\n"},
		{"lone cr ends a line", sp + "\r" + `{"role":"user","content":"a"}` + "\r" + `{"role": "_checkpoint", "id": 0}` + "\n",
			0, sp + "\n" + `{"role":"user","content":"a"}` + "\n"},
		{"invalid utf-8 inside a string becomes U+FFFD", sp + "\n" + "{\"role\":\"user\",\"content\":\"a\xff\xe4\xb8b\"}\n" + `{"role": "_checkpoint", "id": 0}` + "\n",
			0, sp + "\n" + "{\"role\":\"user\",\"content\":\"a\uFFFD\uFFFDb\"}\n"},
		{"blank and form-feed lines dropped", sp + "\n\n \x0c\t\n" + `{"role": "_checkpoint", "id": 0}` + "\n",
			0, sp + "\n"},
		{"true equals 1", sp + "\n" + `{"role": "_checkpoint", "id": 0}` + "\n" + `{"role":"user","content":"x"}` + "\n" + `{"role": "_checkpoint", "id": true}` + "\n",
			1, sp + "\n" + `{"role": "_checkpoint", "id": 0}` + "\n" + `{"role":"user","content":"x"}` + "\n"},
		{"1.0 equals 1 but is not an accepted checkpoint", sp + "\n" + `{"role": "_checkpoint", "id": 0}` + "\n" + `{"role": "_checkpoint", "id": 0.5}` + "\n" + `{"role": "_checkpoint", "id": 1}` + "\n" + `{"role": "_checkpoint", "id": 1.0}` + "\n",
			1, sp + "\n" + `{"role": "_checkpoint", "id": 0}` + "\n"},
		{"tool call without arguments fails validation", sp + "\n" +
			`{"role":"assistant","content":[],"tool_calls":[{"type":"function","id":"t","function":{"name":"Shell"}}]}` + "\n" +
			`{"role":"assistant","content":[],"tool_calls":[{"type":"function","id":"t","function":{"name":"Shell","arguments":null}}]}` + "\n" +
			`{"role": "_checkpoint", "id": 0}` + "\n",
			0, sp + "\n" + `{"role":"assistant","content":[],"tool_calls":[{"type":"function","id":"t","function":{"name":"Shell","arguments":null}}]}` + "\n"},
		{"invalid records dropped", sp + "\n" +
			`{"role":"user"}` + "\n" + // content is required
			`{"role":"user","content":null}` + "\n" + // null becomes []
			`{"role":"user","content":[{"type":"mystery"}]}` + "\n" +
			`{"role":"robot","content":"x"}` + "\n" +
			`{"role":"user","content":"x","name":3}` + "\n" +
			`{"role": "_usage", "token_count": "9"}` + "\n" +
			`{"role": "_usage", "token_count": 9}` + "\n" +
			`{"role": "_frobnicate"}` + "\n" +
			`[1,2]` + "\n" +
			`{"role":"user","content":"raw` + "\x01" + `control"}` + "\n" +
			`{"role":"user","content":"x","partial":"yes"}` + "\n" +
			`{"role":"user","content":NaN}` + "\n" +
			`{"role": "_checkpoint", "id": 0}` + "\n",
			0, sp + "\n" + `{"role":"user","content":null}` + "\n" + `{"role": "_usage", "token_count": 9}` + "\n" +
				`{"role":"user","content":"raw` + "\x01" + `control"}` + "\n" + `{"role":"user","content":"x","partial":"yes"}` + "\n"},
	}
	for _, c := range cases {
		got, _, err := revert(t, c.in, c.n)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestKimiRevertLongLinesAndCR: lines longer than the read buffer, and
// a lone \r before the end of file.
func TestKimiRevertLongLinesAndCR(t *testing.T) {
	long := `{"role":"user","content":"` + strings.Repeat("x", 200<<10) + `"}`
	in := long + "\r\n" + `{"role":"user","content":"a"}` + "\r" + `{"role": "_checkpoint", "id": 0}` + "\r"
	got, st, err := revert(t, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := long + "\n" + `{"role":"user","content":"a"}` + "\n"; got != want {
		t.Errorf("got %d bytes, want %d", len(got), len(want))
	}
	if st.Normalised != 2 || st.CutLine != 3 || st.CutOffset != int64(len(long)+2+len(`{"role":"user","content":"a"}`)+1) {
		t.Errorf("stats %+v", st)
	}
}

func TestKimiRevertRefusals(t *testing.T) {
	const sp = `{"role": "_system_prompt", "content": "p"}` + "\n"
	// checkpoint 5 exists, but the last checkpoint is 1, so Kimi's next id is 2
	in := sp + `{"role": "_checkpoint", "id": 5}` + "\n" + `{"role": "_checkpoint", "id": 1}` + "\n"
	if _, _, err := revert(t, in, 5); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Errorf("n >= next id: err %v", err)
	}
	// a gap: 0 < next id, but no line with id 0 (kimi-cli would rotate only)
	in = sp + `{"role": "_checkpoint", "id": 1}` + "\n"
	if _, _, err := revert(t, in, 0); !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Errorf("missing line: err %v", err)
	}
	if _, st, err := revert(t, in, 1); err != nil || st.NextID != 2 || st.Kept != 1 {
		t.Errorf("revert 1: %+v %v", st, err)
	}
}

func TestMaximalSubpart(t *testing.T) {
	// Python: b'\xed\xa0\x80'.decode('utf-8', 'replace') == '\ufffd\ufffd\ufffd'
	// and b'\xf0\x9f\x98'.decode('utf-8', 'replace') == '\ufffd'
	for in, want := range map[string]string{
		"\xed\xa0\x80": "\uFFFD\uFFFD\uFFFD",
		"\xf0\x9f\x98": "\uFFFD",
		"a\xc3":        "a\uFFFD",
		"\xe0\x80\xaf": "\uFFFD\uFFFD\uFFFD",
		"\xf4\x90\x80": "\uFFFD\uFFFD\uFFFD",
		"\xe4\xb8":     "\uFFFD",
	} {
		got, _ := pyDecode([]byte(in))
		if string(got) != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

var _ = io.Discard
