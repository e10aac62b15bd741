package session_test

import (
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// IsUUID is the regular expression it replaced.
func FuzzIsUUID(f *testing.F) {
	for _, s := range []string{"", "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f", "5B0C1F4E-2D3A-4C5B-8E6F-7A8B9C0D1E2F",
		"5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2", "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f\n", "5b0c1f4e_2d3a-4c5b-8e6f-7a8b9c0d1e2f",
		"5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2g", "01a20136-c9aa-7652-9079-994813191fca.jsonl", "agent-a1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := session.IsUUID(s), session.UUIDRe.MatchString(s); got != want {
			t.Fatalf("IsUUID(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
