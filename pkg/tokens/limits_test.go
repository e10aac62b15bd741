package tokens_test

import (
	"testing"

	_ "github.com/sessctl/sessctl/pkg/agent/all"
	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/tokens"
)

func TestCompactionThreshold(t *testing.T) {
	tests := []struct {
		agent  string
		window int
		want   int
	}{
		// Kimi, 262,144: the reserve rule fires first, at 212,144 (the
		// ratio rule would need 222,823).
		{"kimi", 262_144, 212_144},
		// The rules cross at 333,333⅓: below it the reserve fires first,
		// above it the ratio (rounded up: tokens are whole).
		{"kimi", 300_000, 250_000},
		{"kimi", 333_333, 283_333},
		{"kimi", 333_334, 283_334},
		{"kimi", 400_000, 340_000},
		{"kimi", 1_000_000, 850_000},
		{"kimi", 1_000_001, 850_001},
		// At or below 50,000 Kimi compacts before every step.
		{"kimi", 40_000, 0},
		{"clawdcode", 128_000, 102_400},
		{"claude", 200_000, 160_000},
		{"codex", 258_400, 206_720},
		{"", 99, 79},
	}
	for _, tt := range tests {
		if got := tokens.LimitsFor(session.Agent(tt.agent), "", 0, tt.window).CompactAt; got != tt.want {
			t.Errorf("LimitsFor(%q, window %d).CompactAt = %d, want %d", tt.agent, tt.window, got, tt.want)
		}
	}
}
