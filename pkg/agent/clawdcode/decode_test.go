package clawdcode

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

func TestClawdcodeDecode(t *testing.T) {
	r := decodeLine(t, `{"uuid":"WBH9BED4qntXYv7nXhaxV","parentUuid":"tI6ElijlouzPC_ikEARGc","sessionId":"N","timestamp":"2026-03-02T09:15:07.102Z","type":"tool_use","message":{"role":"assistant","content":""},"tool":{"id":"call_01","name":"Read","input":{"file_path":"src/utils.ts"}}}`)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "call_01" || r.ToolCalls[0].Name != "Read" {
		t.Errorf("tool_use: %+v", r)
	}
	r = decodeLine(t, `{"uuid":"r","type":"user","isCompactSummary":true,"message":{"role":"user","content":"## Summary"},"compactMetadata":{"trigger":"auto","preTokens":104233,"postTokens":9120}}`)
	if r.Kind != session.KindCompaction || r.UserPrompt || r.ContextTokens != 9120 {
		t.Errorf("summary: %+v", r)
	}
}
