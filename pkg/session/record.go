// Package session gives one model over the session files of four coding
// agents: Kimi CLI, Claude Code, Codex and clawdcode. It detects a file's
// format, decodes each line into a normalised Record (keeping the line's raw
// bytes so that rewrites can copy untouched lines byte for byte), and
// discovers sessions, each being the set of files that belong to it.
//
// It imports only pkg/jsonl.
package session

import (
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// Agent names a session format.
type Agent string

// The agents sessctl knows. Unknown is for files of no known format.
const (
	Kimi      Agent = "kimi"
	Claude    Agent = "claude"
	Codex     Agent = "codex"
	Clawdcode Agent = "clawdcode"
	// KimiCode is Kimi Code (npm @moonshot-ai/kimi-code), the successor
	// of Kimi CLI, with its own store (~/.kimi-code) and wire format.
	KimiCode Agent = "kimi-code"
	Unknown  Agent = "unknown"
)

// Agents lists the known agents in display order.
var Agents = []Agent{Kimi, KimiCode, Claude, Codex, Clawdcode}

// Kind is what a record is, across formats.
type Kind uint8

// Record kinds.
const (
	KindMessage      Kind = iota // a conversation message (user, assistant, tool call or result)
	KindCheckpoint               // Kimi _checkpoint
	KindUsage                    // a usage record (Kimi _usage gauge, Codex token_count)
	KindSystemPrompt             // Kimi _system_prompt
	KindCompaction               // a compaction boundary or summary
	KindMetadata                 // a known record that is not part of the conversation
	KindUnknown                  // valid JSON of a type this version of sessctl does not know
	KindCorrupt                  // a line that is not a usable JSON object
	KindBlank                    // an empty line
)

var kindNames = [...]string{
	KindMessage: "message", KindCheckpoint: "checkpoint", KindUsage: "usage",
	KindSystemPrompt: "system_prompt", KindCompaction: "compaction", KindMetadata: "metadata",
	KindUnknown: "unknown", KindCorrupt: "corrupt", KindBlank: "blank",
}

// String returns the stable name used in JSON output.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind?"
}

// Role of a message.
type Role string

// Roles, normalised across formats. Tool results have RoleTool.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
)

// ToolCall is a call of a tool by the model.
type ToolCall struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Input string `json:"input,omitempty"` // arguments as raw JSON or text
}

// ToolResult answers the tool call with CallID.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Output  string `json:"output,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
}

// Usage is token usage reported by a model API. Fields follow Anthropic's
// split: Input is input that was neither read from nor written to the cache.
// For OpenAI usage, Input = input_tokens − cached_input_tokens and CacheRead =
// cached_input_tokens; Reasoning is part of Output, never added to it.
type Usage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_tokens"`
	CacheCreation int64 `json:"cache_creation_tokens"`
	Reasoning     int64 `json:"reasoning_tokens,omitempty"`
	// CacheCreation1h is the part of CacheCreation written to the 1-hour
	// cache (Claude's cache_creation.ephemeral_1h_input_tokens), which
	// costs more than the 5-minute one.
	CacheCreation1h int64 `json:"cache_creation_1h_tokens,omitempty"`
}

// Total is input + output + cache read + cache creation (ccusage's total).
func (u Usage) Total() int64 { return u.Input + u.Output + u.CacheRead + u.CacheCreation }

// Add returns u + v field by field.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead,
		u.CacheCreation + v.CacheCreation, u.Reasoning + v.Reasoning, u.CacheCreation1h + v.CacheCreation1h}
}

// Record is one line of a session file, decoded.
type Record struct {
	Agent Agent
	Line  jsonl.Line // number, offset, raw bytes, terminator, status
	// Undecoded marks a line a home did not decode (History with Want):
	// only Line is set (Kind says nothing).
	Undecoded bool
	Kind      Kind
	Type      string // the format's own tag: "assistant", "_checkpoint", "event_msg/token_count", …
	Role      Role
	Text      string // the text a model sees (text parts joined with "\n"); thinking excluded
	// Thinking holds reasoning text, kept apart from Text.
	Thinking    string
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	Model       string
	Timestamp   time.Time
	// UserPrompt is set on a real user turn: typed by the user, not a tool
	// result, not meta or injected context, not a compaction summary.
	UserPrompt bool
	// Prompt is the user's own words on a UserPrompt record: Text without
	// the context blocks the client injected beside them.
	Prompt string
	// Synthetic is set on records the client invented (Claude's <synthetic>
	// replies, API error messages, Kimi's injected system messages).
	Synthetic bool

	// Conversation tree (Claude Code, clawdcode).
	UUID              string
	ParentUUID        string
	LogicalParentUUID string
	Sidechain         bool
	AgentID           string
	SessionID         string
	CWD               string
	Version           string

	// Usage as the format records it.
	Usage     *Usage // usage of one request (Claude message.usage, Codex last_token_usage / token_usage_record)
	MessageID string // Claude message.id, Codex response_id
	RequestID string // Claude requestId
	// CumulativeUsage is Codex's total_token_usage (thread running total).
	CumulativeUsage *Usage
	// ContextTokens is a gauge of the context size at this point (Kimi
	// _usage, Codex last_token_usage.total_tokens, compactMetadata.postTokens),
	// or -1 when the record carries none.
	ContextTokens int64
	ContextWindow int64 // the window recorded with the usage, when there is one

	CheckpointID int    // Kimi _checkpoint id (valid when Kind == KindCheckpoint)
	Title        string // a title this record sets (Claude custom-title/ai-title/summary, Codex thread name)
	// RollbackTurns is set on Codex thread_rolled_back events.
	RollbackTurns int
}

// Corrupt reports whether the line could not be used.
func (r *Record) Corrupt() bool { return r.Kind == KindCorrupt }
