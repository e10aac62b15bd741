package clawdcode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessctl/sessctl/pkg/compact"
)

// TestCompactPair: clawdcode's boundary + summary pair as clawdcode writes
// it, then copies of the kept tail with their own times and zero usage.
func TestCompactPair(t *testing.T) {
	line := func(uuid, parent, typ, ts, rest string) string {
		return fmt.Sprintf(`{"uuid":"%s","parentUuid":"%s","sessionId":"N-jKgMMEsFVxfvZ5q6lVM","timestamp":"%s","type":"%s","cwd":"/home/alice/app","gitBranch":"main","version":"0.1.0",%s}`, uuid, parent, ts, typ, rest)
	}
	long := strings.Repeat("Reading the helpers one by one. ", 30)
	path := filepath.Join(t.TempDir(), "N-jKgMMEsFVxfvZ5q6lVM.jsonl")
	orig := []byte(strings.Join([]string{
		line("lJX70lSUAJYPC_67hb51F", "", "user", "2026-03-02T09:15:04.512Z", `"message":{"role":"user","content":"重构 src/utils.ts"}`),
		line("tI6ElijlouzPC_ikEARGc", "lJX70lSUAJYPC_67hb51F", "assistant", "2026-03-02T09:15:07.031Z", `"message":{"role":"assistant","content":"Let me read it. `+long+`","model":"glm-4.6","usage":{"input_tokens":1820,"output_tokens":42}}`),
		line("WBH9BED4qntXYv7nXhaxV", "tI6ElijlouzPC_ikEARGc", "tool_use", "2026-03-02T09:15:08.000Z", `"message":{"role":"assistant","content":""},"tool":{"id":"call_01","name":"Edit","input":{"file_path":"src/utils.ts"}}`),
		line("HKlon8XM2_uuKfP3-jS7S", "WBH9BED4qntXYv7nXhaxV", "tool_result", "2026-03-02T09:15:09.000Z", `"message":{"role":"assistant","content":""},"toolResult":{"id":"call_01","output":"ok"}`),
		line("aaaaaaaaaaaaaaaaaaaa1", "HKlon8XM2_uuKfP3-jS7S", "user", "2026-03-02T09:16:00.000Z", `"message":{"role":"user","content":"now the tests"}`),
		line("aaaaaaaaaaaaaaaaaaaa2", "aaaaaaaaaaaaaaaaaaaa1", "assistant", "2026-03-02T09:16:01.000Z", `"message":{"role":"assistant","content":"Running them.","model":"glm-4.6","usage":{"input_tokens":2000,"output_tokens":10}}`),
		line("aaaaaaaaaaaaaaaaaaaa3", "aaaaaaaaaaaaaaaaaaaa2", "tool_use", "2026-03-02T09:16:02.000Z", `"message":{"role":"assistant","content":""},"tool":{"id":"call_02","name":"Bash","input":{"command":"npm test"}}`),
	}, "\n") + "\n")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	res, err := compact.Compact(context.Background(), path, Agent, compact.Options{Force: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	added := bytes.Split(bytes.TrimSuffix(b[len(orig):], []byte("\n")), []byte("\n"))
	// boundary, summary, copies of u(now the tests), a, tool_use, aborted result
	if len(added) != 6 {
		t.Fatalf("%d lines appended:\n%s", len(added), bytes.Join(added, []byte("\n")))
	}
	meta := fmt.Sprintf(`"compactMetadata":{"trigger":"manual","preTokens":%d,"postTokens":%d,"filesIncluded":["src/utils.ts"]}}`, *res.Tokens.RecordedBefore, res.Tokens.After)
	if bs := string(added[0]); !strings.HasPrefix(bs, `{"uuid":"`) || !strings.Contains(bs, `","parentUuid":null,"sessionId":"N-jKgMMEsFVxfvZ5q6lVM","timestamp":"2026-11-22T05:00:00.000Z","type":"system","subtype":"compact_boundary","cwd":"/home/alice/app","gitBranch":"main","version":"0.1.0","message":{"role":"system","content":"=== 上下文压缩边界 ==="},`+meta) {
		t.Errorf("boundary %s", bs)
	}
	if s := string(added[1]); !strings.Contains(s, `","sessionId":"N-jKgMMEsFVxfvZ5q6lVM","timestamp":"2026-11-22T05:00:00.000Z","type":"user","isCompactSummary":true,"cwd":"/home/alice/app","version":"0.1.0","message":{"role":"user","content":"Offline summary`) ||
		!strings.HasSuffix(s, meta) {
		t.Errorf("summary %s", s)
	}
	var bm, sm, first, a map[string]any
	json.Unmarshal(added[0], &bm)
	json.Unmarshal(added[1], &sm)
	json.Unmarshal(added[2], &first)
	json.Unmarshal(added[3], &a)
	if sm["parentUuid"] != bm["uuid"] || first["parentUuid"] != sm["uuid"] || len(first["uuid"].(string)) != 21 {
		t.Errorf("chain: %v → %v → %v", bm["uuid"], sm["parentUuid"], first["parentUuid"])
	}
	if first["timestamp"] != "2026-03-02T09:16:00.000Z" || a["timestamp"] != "2026-03-02T09:16:01.000Z" {
		t.Errorf("copies' times %v, %v", first["timestamp"], a["timestamp"])
	}
	if !strings.Contains(string(added[3]), `"usage":{"input_tokens":0,"output_tokens":0}`) {
		t.Errorf("assistant copy %s", added[3])
	}
	if ab := string(added[5]); !strings.Contains(ab, `"timestamp":"2026-03-02T09:16:02.000Z","type":"tool_result"`) || !strings.Contains(ab, `"toolResult":{"id":"call_02","output":"aborted","error":"aborted"}`) {
		t.Errorf("aborted result %s", ab)
	}
}
