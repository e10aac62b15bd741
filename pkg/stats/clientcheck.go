package stats

import (
	"sort"

	"github.com/sessctl/sessctl/pkg/session"
)

// ClientCheck holds the client's own running token totals (the newest
// record that carries them, ClientTotals) against the usage sessctl counts
// for the session (Consumption.Totals: every file, rotations and subagents
// included, each request once).
type ClientCheck struct {
	// Source is the record type and Line its line in the main transcript.
	Source string `json:"source"`
	Line   int    `json:"line"`
	// Client and Counted are the two totals, per model.
	Client  map[string]session.Usage `json:"client"`
	Counted map[string]session.Usage `json:"counted"`
	// Agree is set when every model's four counts are equal.
	Agree bool `json:"agree"`
	// Differences lists each model and count where they are not.
	Differences []ClientDiff `json:"differences"`
	// CostUSD is the client's own running cost, when its record has one
	// (shown beside sessctl's cost_usd; its prices are the client's).
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// ClientDiff is one count of one model on which the client and sessctl
// disagree. Difference is Client − Counted.
type ClientDiff struct {
	Model      string `json:"model"`
	Field      string `json:"field"`
	Client     int64  `json:"client"`
	Counted    int64  `json:"counted"`
	Difference int64  `json:"difference"`
}

// newClientCheck compares the client's totals with counted.
func newClientCheck(source string, line int, client, counted map[string]session.Usage) *ClientCheck {
	cc := &ClientCheck{Source: source, Line: line, Client: client, Counted: map[string]session.Usage{}, Differences: []ClientDiff{}}
	if cc.Client == nil {
		cc.Client = map[string]session.Usage{}
	}
	models := map[string]bool{}
	for m := range client {
		models[m] = true
	}
	for m, u := range counted {
		if u.Total() == 0 && client[m].Total() == 0 {
			continue
		}
		cc.Counted[m] = u
		models[m] = true
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		c, o := client[m], counted[m]
		for _, f := range []struct {
			name string
			c, o int64
		}{
			{"input_tokens", c.Input, o.Input},
			{"output_tokens", c.Output, o.Output},
			{"cache_read_tokens", c.CacheRead, o.CacheRead},
			{"cache_creation_tokens", c.CacheCreation, o.CacheCreation},
		} {
			if f.c != f.o {
				cc.Differences = append(cc.Differences, ClientDiff{Model: m, Field: f.name, Client: f.c, Counted: f.o, Difference: f.c - f.o})
			}
		}
	}
	cc.Agree = len(cc.Differences) == 0
	return cc
}
