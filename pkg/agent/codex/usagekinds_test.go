package codex

import (
	"bytes"
	"testing"
)

// usageKindsByContains is the rule usageKinds keeps: bytes.Contains for
// each word in turn.
func usageKindsByContains(line []byte) (bool, bool, bool) {
	tc := bytes.Contains(line, []byte("token_count"))
	rec := !tc && bytes.Contains(line, []byte("token_usage_record"))
	turn := !tc && !rec && bytes.Contains(line, []byte("turn_context"))
	return tc, rec, turn
}

func TestUsageKinds(t *testing.T) {
	for _, s := range []string{"", "k", "x", "token_count", "token_usage_record", "turn_context", "tokentoken_count",
		"turn_contextturn_context", "token_usage_record token_count", "token_usage_recor", "urn_context", "oken_count",
		`{"type":"event_msg","payload":{"type":"token_count","info":null}}`, "kkkxxx token_usage_record turn_context"} {
		a1, b1, c1 := usageKinds([]byte(s))
		a2, b2, c2 := usageKindsByContains([]byte(s))
		if a1 != a2 || b1 != b2 || c1 != c2 {
			t.Errorf("%q: %v %v %v, want %v %v %v", s, a1, b1, c1, a2, b2, c2)
		}
	}
}

func FuzzUsageKinds(f *testing.F) {
	f.Add([]byte("token_usage_record turn_context"))
	f.Add([]byte("xx token_count k"))
	f.Fuzz(func(t *testing.T, line []byte) {
		a1, b1, c1 := usageKinds(line)
		a2, b2, c2 := usageKindsByContains(line)
		if a1 != a2 || b1 != b2 || c1 != c2 {
			t.Fatalf("%q: %v %v %v, want %v %v %v", line, a1, b1, c1, a2, b2, c2)
		}
	})
}
