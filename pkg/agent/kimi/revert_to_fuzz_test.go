package kimi

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// FuzzKimiRevert: on any input the revert never panics, writes only whole
// lines ending in "\n" that parse as JSON objects (raw control characters
// allowed) and are accepted records, and never writes a _checkpoint with
// the target id.
func FuzzRevertTo(f *testing.F) {
	f.Add([]byte(`{"role": "_system_prompt", "content": "p"}`+"\n"+`{"role":"user","content":"a"}`+"\r\n"+`{"role": "_checkpoint", "id": 0}`+"\n"), int64(0))
	f.Add([]byte("{\"role\":\"user\",\"content\":\"\xe4\xb8\"}\r{\"role\": \"_checkpoint\", \"id\": true}\n"), int64(1))
	f.Add([]byte(`{"role":"assistant","content":[],"tool_calls":[{"id":"t","function":{"name":"x","arguments":null}}]}`+"\n\n"), int64(3))
	f.Fuzz(func(t *testing.T, in []byte, n int64) {
		var out bytes.Buffer
		st, err := RevertTo(bytes.NewReader(in), &out, n)
		if err == nil && !st.Found {
			t.Fatalf("no error without the checkpoint")
		}
		if out.Len() == 0 {
			return
		}
		lines := bytes.SplitAfter(out.Bytes(), []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		} else if err == nil {
			t.Fatalf("kept part ends without a newline: %q", out.Bytes())
		}
		if len(lines) != st.Kept {
			t.Fatalf("%d lines written, stats say %d", len(lines), st.Kept)
		}
		for _, l := range lines {
			var obj map[string]json.RawMessage
			if json.Unmarshal(jsonl.Strict(bytes.TrimRight(l, "\n")), &obj) != nil && pyLoadsObject(bytes.TrimRight(l, "\n")) == nil {
				t.Fatalf("wrote a line that is not a JSON object: %q", l)
			}
			if obj == nil {
				obj = pyLoadsObject(bytes.TrimRight(l, "\n"))
			}
			if !kimiAccepts(obj) {
				t.Fatalf("wrote a record Kimi rejects: %q", l)
			}
			if role, _ := jsonString(obj["role"]); role == "_checkpoint" && pyEqualsInt(obj["id"], n) {
				t.Fatalf("wrote the target checkpoint: %q", l)
			}
		}
	})
}
