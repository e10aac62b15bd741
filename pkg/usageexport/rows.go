// Package usageexport writes the recorded usage of many sessions as rows
// for engines a team already runs: NDJSON and Parquet files (DuckDB,
// ClickHouse, …) and OpenTelemetry metrics (OTLP). Each row is one request
// that `sessctl stats --all` counts, after its de-duplication, so that the
// sums of an export are the sums of stats by construction
// (docs/export.md).
package usageexport

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/sessctl/sessctl/pkg/stats"
	"github.com/sessctl/sessctl/pkg/usage"
)

// SchemaVersion is the version of the row schema (docs/export.md). It
// changes when a column changes meaning or the key is derived differently;
// adding a column keeps it.
const SchemaVersion = 1

// Row is one counted request. The struct tags name the columns of both
// formats; docs/export.md is their reference.
type Row struct {
	SchemaVersion int32  `parquet:"schema_version" json:"schema_version"`
	Key           string `parquet:"key" json:"key"`
	Agent         string `parquet:"agent,dict" json:"agent"`
	Machine       string `parquet:"machine,dict" json:"machine"`
	// Project is the session's real working directory, or what its path
	// names when the files hold none; nil when unknown.
	Project *string `parquet:"project,optional,dict" json:"project"`
	Session string  `parquet:"session,dict" json:"session"`
	Model   *string `parquet:"model,optional,dict" json:"model"`
	// Timestamp is in Unix milliseconds, UTC; nil when the record has none.
	Timestamp             *int64 `parquet:"timestamp,optional,timestamp(millisecond)" json:"-"`
	InputTokens           int64  `parquet:"input_tokens" json:"input_tokens"`
	OutputTokens          int64  `parquet:"output_tokens" json:"output_tokens"`
	CacheReadTokens       int64  `parquet:"cache_read_tokens" json:"cache_read_tokens"`
	CacheCreationTokens   int64  `parquet:"cache_creation_tokens" json:"cache_creation_tokens"`
	CacheCreation5mTokens int64  `parquet:"cache_creation_5m_tokens" json:"cache_creation_5m_tokens"`
	CacheCreation1hTokens int64  `parquet:"cache_creation_1h_tokens" json:"cache_creation_1h_tokens"`
	ReasoningTokens       int64  `parquet:"reasoning_tokens" json:"reasoning_tokens"`
	// CostUSD is nil for a request with tokens whose model the price table
	// does not know: stats counts those tokens as unpriced, never as free.
	CostUSD *float64 `parquet:"cost_usd,optional" json:"cost_usd"`
}

// Key derives the stable key of request r of session su (agent and
// session id as stats reports them). The key depends on what the files
// say of the request, never on the machine, the path of the store or the
// time of the export:
//
//   - a request the client names (Claude Code: message.id + requestId;
//     Kimi: the StatusUpdate's message_id) is keyed by agent and that
//     name. The name is unique across sessions, and stats counts it once
//     across all of them, in whichever session holds the winning line; the
//     key does not name the session, so it stays the same when a later
//     export finds the request in another session's file (a fork).
//   - a request the client does not name (Codex's token_usage_record and
//     token_count changes, clawdcode) is keyed by agent, session id and
//     its line: the hash of the line's bytes and of how many identical
//     lines came before it in its file (usage.Request.LineID). A rotated
//     copy repeats the line, and so the key.
//
// The key is the first 16 bytes of a SHA-256 over those parts, in hex.
func Key(agent, session string, r *usage.Request) string {
	h := sha256.New()
	var n [8]byte
	part := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	num := func(v uint64) {
		binary.BigEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	part("sessctl usage key 1")
	part(agent)
	switch {
	case r.Key != 0:
		part("id")
		num(r.Key)
	case r.LineID() != 0:
		part("line")
		part(session)
		num(r.LineID())
	default:
		// not reached for counted requests (every scanner gives its line);
		// the line number and time are the best identity left
		part("at")
		part(session)
		num(uint64(r.Line))
		num(uint64(r.Time))
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// Each calls fn with a row for every counted request of rq, session by
// session in their order, each session's requests by time; the requests
// stream from rq, so nothing holds them all. The row is reused between
// calls: fn copies what it keeps. machine names this machine in every row.
func Each(rq *stats.Requests, machine string, fn func(*Row) error) error {
	var row Row
	var ts int64
	var cost float64
	var last *stats.SessionRef
	var agent string
	var project *string
	return rq.Each(func(s *stats.SessionRef, r *usage.Request) error {
		if s != last {
			last, agent, project = s, string(s.Agent), nil
			switch {
			case s.CWD != "":
				project = &s.CWD
			case s.Project != "":
				project = &s.Project
			}
		}
		m := rq.Model(r)
		row = Row{SchemaVersion: SchemaVersion, Key: Key(agent, s.ID, r), Agent: agent,
			Machine: machine, Project: project, Session: s.ID,
			InputTokens: r.Usage.Input, OutputTokens: r.Usage.Output,
			CacheReadTokens: r.Usage.CacheRead, CacheCreationTokens: r.Usage.CacheCreation,
			CacheCreation5mTokens: r.Usage.CacheCreation - r.Usage.CacheCreation1h,
			CacheCreation1hTokens: r.Usage.CacheCreation1h, ReasoningTokens: r.Usage.Reasoning}
		if m != "" {
			row.Model = &m
		}
		if r.Time > 0 {
			ts = r.Time
			row.Timestamp = &ts
		}
		if c, ok := r.Cost(m); ok {
			cost = c
			row.CostUSD = &cost
		}
		return fn(&row)
	})
}

// Time returns the row's timestamp, and false when it has none.
func (r *Row) Time() (time.Time, bool) {
	if r.Timestamp == nil {
		return time.Time{}, false
	}
	return time.UnixMilli(*r.Timestamp).UTC(), true
}
