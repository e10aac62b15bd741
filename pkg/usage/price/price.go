// Package price turns recorded tokens into dollars. The table is embedded
// in the binary (prices.json, with its date and source) and can be
// replaced by a file of the same shape (--prices FILE); nothing is fetched.
//
// A price is per million tokens, for input, output, cache writes (5 min
// and 1 h) and cache reads. A tier raises the price of the tokens of one
// request above its threshold (Claude Sonnet 4 and 4.5 above 200k input
// tokens: LiteLLM's *_above_200k_tokens fields, which ccusage applies the
// same way: the tokens up to the threshold at the base price, the rest at
// the tier's).
//
// A model the table does not know is unpriced: Cost says so, and callers
// list it by name; it is never counted as 0.
package price

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Rates are dollars per million tokens.
type Rates struct {
	Input       float64 `json:"input"`
	Output      float64 `json:"output"`
	CacheWrite  float64 `json:"cache_write"`    // 5-minute cache writes (the default)
	CacheWrite1 float64 `json:"cache_write_1h"` // 1-hour cache writes
	CacheRead   float64 `json:"cache_read"`
}

// Model is the price of one model.
type Model struct {
	Rates
	// Tier applies to the tokens of a request above Threshold, per kind
	// (input, cache writes and cache reads by the request's input tokens,
	// output by its output tokens), when Threshold is set.
	Threshold int64  `json:"threshold,omitempty"`
	Tier      *Rates `json:"tier,omitempty"`
	// Whole prices all the tokens of a kind at the tier's price once they
	// pass the threshold (OpenAI's long-context prices: gpt-5.4 and 5.5
	// above 272k), instead of only those above it (Claude Sonnet 4.x).
	Whole bool `json:"whole,omitempty"`
}

// Table is a price list.
type Table struct {
	// Date and Source say where the prices come from.
	Date   string           `json:"date"`
	Source string           `json:"source"`
	Models map[string]Model `json:"models"`
}

//go:embed prices.json
var embedded []byte

// Default is the table embedded in the binary.
func Default() *Table {
	t, err := Read(strings.NewReader(string(embedded)))
	if err != nil {
		panic("price: the embedded table: " + err.Error())
	}
	return t
}

// Read reads a table (the shape of prices.json).
func Read(r io.Reader) (*Table, error) {
	var t Table
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("reading a price table: %w", err)
	}
	if len(t.Models) == 0 {
		return nil, fmt.Errorf("reading a price table: no models")
	}
	for name, m := range t.Models {
		if m.Input < 0 || m.Output < 0 || m.CacheWrite < 0 || m.CacheWrite1 < 0 || m.CacheRead < 0 {
			return nil, fmt.Errorf("price table: %s: a negative price", name)
		}
		if (m.Tier == nil) != (m.Threshold == 0) {
			return nil, fmt.Errorf("price table: %s: a tier needs a threshold and a threshold a tier", name)
		}
	}
	return &t, nil
}

// Usage is one request's tokens.
type Usage struct {
	Input, Output, CacheRead int64
	// CacheWrite are 5-minute cache writes, CacheWrite1h 1-hour ones (when
	// the record splits them; else all are counted at the 5-minute rate).
	CacheWrite, CacheWrite1h int64
}

// dated matches the date suffix of a model id (claude-sonnet-4-5-20250929).
var dated = regexp.MustCompile(`-(20\d{6})$`)

// Lookup finds a model's price: the id as written, then without a
// provider prefix (anthropic/, openai/, moonshot/) and a date suffix. A
// fast-mode id (<model>-fast, Claude's usage.speed "fast") without a fast
// price of its own costs what the model costs at standard speed, as
// ccusage counts it.
func (t *Table) Lookup(model string) (Model, bool) {
	if m, ok := t.Models[model]; ok {
		return m, true
	}
	base := model
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	core, fast := strings.CutSuffix(base, "-fast")
	core = dated.ReplaceAllString(core, "")
	if fast {
		if m, ok := t.Models[core+"-fast"]; ok {
			return m, true
		}
	}
	m, ok := t.Models[core]
	return m, ok
}

// Cost is the dollars one request of model cost; ok is false when the
// table has no price for the model.
func (t *Table) Cost(model string, u Usage) (usd float64, ok bool) {
	m, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	return m.Cost(u), true
}

// Cost is the dollars of one request.
func (m Model) Cost(u Usage) float64 {
	var tr Rates
	if m.Tier != nil {
		tr = *m.Tier
	}
	// each kind of token is held alone against the threshold, as
	// LiteLLM's *_above_200k_tokens prices are and ccusage applies them:
	// the tokens up to it at the base price, the rest at the tier's
	part := func(n int64, base, tier float64) float64 {
		switch {
		case m.Tier == nil || n <= m.Threshold:
			return float64(n) * base
		case m.Whole:
			return float64(n) * tier
		}
		return float64(m.Threshold)*base + float64(n-m.Threshold)*tier
	}
	d := part(u.Input, m.Input, tr.Input) +
		part(u.Output, m.Output, tr.Output) +
		part(u.CacheWrite, m.CacheWrite, tr.CacheWrite) +
		part(u.CacheWrite1h, m.CacheWrite1, tr.CacheWrite1) +
		part(u.CacheRead, m.CacheRead, tr.CacheRead)
	return d / 1e6
}
