package kimi

import (
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

func decodeLine(t *testing.T, line string) session.Record {
	t.Helper()
	l := jsonl.Line{Num: 1, Raw: []byte(line), Len: int64(len(line)), EOL: jsonl.LF,
		Status: jsonl.Classify([]byte(line), true)}
	l.RawControl = strings.ContainsAny(line, "\t\x01")
	return session.Decode(Home{}, &l)
}

func TestKimiDecode(t *testing.T) {
	r := decodeLine(t, `{"role": "_checkpoint", "id": true}`)
	if r.Kind != session.KindCheckpoint || r.CheckpointID != 1 {
		t.Errorf("checkpoint true: %+v (Python's isinstance(True, int) makes it id 1)", r)
	}
	r = decodeLine(t, `{"role": "_checkpoint", "id": "3"}`)
	if r.Kind != session.KindUnknown {
		t.Errorf("a string id is not a checkpoint for session.Kimi: %v", r.Kind)
	}
	r = decodeLine(t, `{"role": "_usage", "token_count": 9332}`)
	if r.Kind != session.KindUsage || r.ContextTokens != 9332 {
		t.Errorf("usage: %+v", r)
	}
	r = decodeLine(t, `{"role":"assistant","content":[{"type":"think","think":"hmm","encrypted":null},{"type":"text","text":"Hi"}],"tool_calls":[{"type":"function","id":"tool_1","function":{"name":"Shell","arguments":"{\"command\": \"ls\"}"}}]}`)
	if r.Role != session.RoleAssistant || r.Text != "Hi" || r.Thinking != "hmm" || len(r.ToolCalls) != 1 ||
		r.ToolCalls[0].Name != "Shell" || r.ToolCalls[0].Input != `{"command": "ls"}` {
		t.Errorf("assistant: %+v", r)
	}
	r = decodeLine(t, "{\"role\":\"user\",\"content\":\"raw\ttab\"}")
	if !r.UserPrompt || r.Text != "raw\ttab" {
		t.Errorf("raw control characters must decode: %+v", r)
	}
	r = decodeLine(t, `{"role":"user","content":"<system>CHECKPOINT 3</system>"}`)
	if r.UserPrompt || !r.Synthetic {
		t.Errorf("injected user message taken for a prompt: %+v", r)
	}
	r = decodeLine(t, `{"oops": 1}`)
	if r.Kind != session.KindUnknown {
		t.Errorf("object without role: %v", r.Kind)
	}
}
