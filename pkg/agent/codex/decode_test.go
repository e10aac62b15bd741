package codex

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

func TestCodexDecode(t *testing.T) {
	r := decodeLine(t, `{"timestamp":"2026-11-22T02:59:33.239Z","ordinal":15,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9709,"cached_input_tokens":6796,"output_tokens":31,"reasoning_output_tokens":3,"total_tokens":9740},"last_token_usage":{"input_tokens":9709,"cached_input_tokens":6796,"output_tokens":31,"reasoning_output_tokens":3,"total_tokens":9740},"model_context_window":258400}}}`)
	if r.Kind != session.KindUsage || r.ContextTokens != 9740 || r.ContextWindow != 258400 || r.Usage == nil ||
		r.Usage.Input != 9709-6796 || r.Usage.CacheRead != 6796 || r.Usage.Output != 31 || r.Usage.Reasoning != 3 ||
		r.Usage.Total() != 9740 || r.CumulativeUsage == nil {
		t.Errorf("token_count: %+v %+v", r, r.Usage)
	}
	r = decodeLine(t, `{"timestamp":"2026-11-22T02:59:33.139Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}`)
	if r.UserPrompt {
		t.Error("environment context is not a user turn")
	}
	r = decodeLine(t, `{"timestamp":"2026-11-22T02:59:33.139Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}}`)
	if len(r.ToolResults) != 1 || r.ToolResults[0].CallID != "c1" || r.ToolResults[0].Output != "a\nb" {
		t.Errorf("array output: %+v", r)
	}
	r = decodeLine(t, `{"timestamp":"x","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}`)
	if r.RollbackTurns != 2 {
		t.Errorf("rollback: %+v", r)
	}
	r = decodeLine(t, `{"type":"message","role":"user","content":[{"type":"input_text","text":"old format"}]}`)
	if r.Kind != session.KindMessage || !r.UserPrompt || r.Text != "old format" {
		t.Errorf("pre-envelope response item: %+v", r)
	}
	r = decodeLine(t, `{"record_type":"state"}`)
	if r.Kind != session.KindMetadata {
		t.Errorf("legacy state line: %v", r.Kind)
	}
	r = decodeLine(t, `{"timestamp":"x","type":"future_synthetic_record","payload":{}}`)
	if r.Kind != session.KindUnknown {
		t.Errorf("unknown envelope: %v", r.Kind)
	}
}
