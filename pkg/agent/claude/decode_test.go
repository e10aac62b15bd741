package claude

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

func TestClaudeDecode(t *testing.T) {
	r := decodeLine(t, `{"parentUuid":"a","isSidechain":false,"message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":"40"}},"requestId":"req_1","type":"assistant","uuid":"b","timestamp":"2026-11-22T02:58:38.406Z"}`)
	if r.Kind != session.KindMessage || r.MessageID != "msg_1" || r.RequestID != "req_1" || r.Usage == nil ||
		r.Usage.Total() != 100 || len(r.ToolCalls) != 1 || r.ToolCalls[0].Input != `{"command":"ls"}` || r.ParentUUID != "a" {
		t.Errorf("assistant: %+v usage %+v", r, r.Usage)
	}
	r = decodeLine(t, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"out"}]},"uuid":"c"}`)
	if r.UserPrompt || r.Role != session.RoleTool || len(r.ToolResults) != 1 || r.ToolResults[0].Output != "out" {
		t.Errorf("tool result: %+v", r)
	}
	r = decodeLine(t, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<ide_opened_file>x</ide_opened_file>"},{"type":"text","text":"fix it"}]},"uuid":"d"}`)
	if !r.UserPrompt || r.Prompt != "fix it" {
		t.Errorf("prompt beside injected IDE context: %+v", r)
	}
	r = decodeLine(t, `{"type":"user","isMeta":true,"message":{"role":"user","content":"Continue from where you left off."},"uuid":"e"}`)
	if r.UserPrompt {
		t.Error("a meta message is not a prompt")
	}
	r = decodeLine(t, `{"parentUuid":null,"logicalParentUuid":"f","type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"manual","preTokens":20067,"postTokens":686},"uuid":"g"}`)
	if r.Kind != session.KindCompaction || r.ContextTokens != 686 || r.LogicalParentUUID != "f" {
		t.Errorf("boundary: %+v", r)
	}
	r = decodeLine(t, `{"type":"custom-title","customTitle":"My title","sessionId":"s"}`)
	if r.Title != "My title" || r.Kind != session.KindMetadata {
		t.Errorf("title: %+v", r)
	}
	r = decodeLine(t, `{"type":"brand-new-thing","sessionId":"s"}`)
	if r.Kind != session.KindUnknown || r.Type != "brand-new-thing" {
		t.Errorf("unknown type: %+v", r)
	}
}
