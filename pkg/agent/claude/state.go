package claude

import (
	"encoding/json"
	"math"
	"strings"
	"unicode"

	"github.com/sessctl/sessctl/pkg/session"
)

// Claude Code 2.1.330's new records (docs/formats/claude-code.md, "Claude
// Code 2.1.330"). All are top-level records with a type and the sessionId,
// outside the conversation chain (no uuid, no parentUuid):
//
//   - api-request, api-request-shape, api-request-blob: the request journal.
//     Each API call is an api-request (params, shapeHash, tail: the hashes
//     of the blobs it sent last); its shape (system prompt, tools) and
//     blobs are written once, just before the first request that needs
//     them. On load the client notes the hashes of the shapes and blobs
//     in the file and writes again any that a request needs and the file
//     lacks; a compact_boundary makes it forget them all.
//   - cost-state: the session's spend ledger (running totals per model),
//     last one wins; the client restores its totals from it on resume.
//   - tools-used, atis-latch: conversation latches (the tools the
//     conversation has used, which the next compaction summary names; a
//     latched request setting), last one wins, restored on resume.

// costState is the part of a cost-state record sessctl reads.
type costState struct {
	Type       string                     `json:"type"`
	ModelUsage map[string]json.RawMessage `json:"modelUsage"`
}

type costModel struct {
	Input         *float64 `json:"inputTokens"`
	Output        *float64 `json:"outputTokens"`
	CacheRead     *float64 `json:"cacheReadInputTokens"`
	CacheCreation *float64 `json:"cacheCreationInputTokens"`
	Thinking      *float64 `json:"thinkingTokens"`
}

// maxCount is the largest count the client's own schema accepts (10^15).
const maxCount = 1e15

func count(p *float64, optional bool) (int64, bool) {
	if p == nil {
		return 0, optional
	}
	v := *p
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxCount || v != math.Trunc(v) {
		return 0, false
	}
	return int64(v), true
}

// ClientTotals implements stats.ClientTotals: the per-model token totals
// of a cost-state record. Like the client, which skips a cost-state its
// schema rejects and restores the newest one it accepts, a record with a
// missing or invalid count (negative, not finite, above 10^15, a
// fraction) or a model name with control characters is not used.
func (Home) ClientTotals(r *session.Record) (map[string]session.Usage, string, bool) {
	if r.Type != "cost-state" {
		return nil, "", false
	}
	var cs costState
	if json.Unmarshal(r.Line.Raw, &cs) != nil || cs.ModelUsage == nil {
		return nil, "", false
	}
	out := make(map[string]session.Usage, len(cs.ModelUsage))
	for name, raw := range cs.ModelUsage {
		if name == "" || strings.IndexFunc(name, func(c rune) bool { return unicode.IsControl(c) || unicode.Is(unicode.Cf, c) }) >= 0 {
			return nil, "", false
		}
		var m costModel
		if json.Unmarshal(raw, &m) != nil {
			return nil, "", false
		}
		var u session.Usage
		var ok [5]bool
		u.Input, ok[0] = count(m.Input, false)
		u.Output, ok[1] = count(m.Output, false)
		u.CacheRead, ok[2] = count(m.CacheRead, false)
		u.CacheCreation, ok[3] = count(m.CacheCreation, false)
		u.Reasoning, ok[4] = count(m.Thinking, true)
		if ok != [5]bool{true, true, true, true, true} {
			return nil, "", false
		}
		out[name] = u
	}
	return out, "cost-state", true
}

// ClientCostUSD implements stats.ClientCost: a cost-state's totalCostUSD,
// the client's own running cost of the session (by its own prices).
func (Home) ClientCostUSD(r *session.Record) (float64, bool) {
	if r.Type != "cost-state" {
		return 0, false
	}
	var cs struct {
		Total *float64 `json:"totalCostUSD"`
	}
	if json.Unmarshal(r.Line.Raw, &cs) != nil || cs.Total == nil || math.IsNaN(*cs.Total) || math.IsInf(*cs.Total, 0) || *cs.Total < 0 {
		return 0, false
	}
	return *cs.Total, true
}
