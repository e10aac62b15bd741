package fakemodel

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Plan is the scripted reply to one model request. It is decided from the
// request body alone (Reason says which rule applied), so the same request
// always gets the same reply; only the ids also depend on the request's
// arrival number.
//
// Rules, first match wins, applied to the last meaningful input (Claude's
// role "system" entries and <system-reminder> blocks, and Codex's developer
// messages and injected context, are skipped):
//
//   - ReasonCompaction: the prompt asks for a compaction summary (Claude
//     "create a detailed summary of the conversation", Codex "CONTEXT
//     CHECKPOINT COMPACTION") → "<analysis>…</analysis>\n<summary>…</summary>"
//     listing the earlier user texts;
//   - ReasonToolResult: the last input is a tool result → "Done. The tool
//     returned: <first 200 characters, whitespace collapsed>";
//   - ReasonBridge: Codex's post-compaction "Another language model started
//     to solve this problem…" message → text only (a tool call here would
//     make Codex compact again forever);
//   - ReasonAssistantLast: the history ends with the assistant → text only;
//   - ReasonNoTools: the request offers no tools → text only;
//   - ReasonNoTool: the prompt contains NOTOOL → "ACK: <first 40 characters
//     of the prompt>";
//   - ReasonRead (Claude): READ:<absolute path> → a Read tool call;
//   - ReasonAgent (Claude): AGENT → an Agent tool call (general-purpose);
//   - ReasonDefault: "Let me list the files." plus a shell tool call (Claude
//     Bash {"command":"ls"}, Codex exec_command {"cmd":"ls"}; with SLOWTOOL
//     in the prompt the command is "echo waiting && sleep 60", for a test that kills the
//     client during the tool).
//
// THINK in the prompt puts a thinking block (Claude, with a signature) or a
// reasoning item (Codex) before the answer, except for compaction replies.
// BIGUSAGE in the prompt makes the first request of the turn (not the one
// answering a tool result) report large usage: Claude
// cache_read_input_tokens 185000, Codex input_tokens 200000 with 150000
// cached.
type Plan struct {
	API      string    `json:"api"` // KindMessages, KindResponses or KindChat
	Reason   string    `json:"reason"`
	Prompt   string    `json:"prompt,omitempty"` // the prompt the reply was chosen from (first 200 characters)
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	ID       string    `json:"id"`                 // msg_… (Anthropic) or resp_… (Responses)
	Thinking string    `json:"thinking,omitempty"` // thinking / reasoning summary text
	ThinkID  string    `json:"think_id,omitempty"` // Responses: rs_…
	Sig      string    `json:"signature,omitempty"`
	Text     string    `json:"text,omitempty"`
	TextID   string    `json:"text_id,omitempty"` // Responses: msg_…
	Tool     *ToolCall `json:"tool,omitempty"`
	Usage    Usage     `json:"usage"`
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	ID     string          `json:"id"`                // toolu_… (Anthropic) or call_… (Responses call_id)
	ItemID string          `json:"item_id,omitempty"` // Responses: fc_…
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"` // a JSON object; the Responses "arguments" string is its text
}

// Usage is the usage reported for one reply. The Anthropic fields follow
// the Messages API (input_tokens excludes the cache); the Responses fields
// follow the Responses API (input_tokens includes cached_tokens,
// output_tokens includes reasoning_tokens, total = input + output).
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
	CachedTokens             int `json:"cached_tokens,omitempty"`
	OutputTokens             int `json:"output_tokens"`
	ReasoningTokens          int `json:"reasoning_tokens,omitempty"`
	TotalTokens              int `json:"total_tokens,omitempty"`
}

// Reasons a Plan was chosen.
const (
	ReasonCompaction    = "compaction"
	ReasonToolResult    = "tool_result"
	ReasonBridge        = "bridge"
	ReasonAssistantLast = "assistant_last"
	ReasonNoTools       = "no_tools"
	ReasonNoTool        = "notool"
	ReasonRead          = "read"
	ReasonAgent         = "agent"
	ReasonDefault       = "default"
)

// Keywords recognised in prompts.
const (
	KeywordNoTool   = "NOTOOL"
	KeywordThink    = "THINK"
	KeywordBigUsage = "BIGUSAGE"
	KeywordRead     = "READ:"
	KeywordAgent    = "AGENT"
	KeywordSlowTool = "SLOWTOOL"
)

// slowCommand is the shell command of the default tool call when the
// prompt holds SLOWTOOL: a tool the test can kill the client during.
// Claude Code 2.1.330 refuses a command that starts with a long sleep
// ("Blocked: standalone sleep 60"), so the sleep comes second.
const slowCommand = "echo waiting && sleep 60"

const (
	claudeCompactMarker = "create a detailed summary of the conversation"
	codexCompactMarker  = "CONTEXT CHECKPOINT COMPACTION"
	codexBridgePrefix   = "Another language model started to solve this problem"
	thinkingText        = "The user wants me to look at the project. I should list the files first."
	defaultModelClaude  = "claude-opus-4-8"
	defaultModelOpenAI  = "gpt-5"
)

// PlanAnthropic decides the reply to a Messages API request body.
func PlanAnthropic(body []byte) (Plan, error) {
	req, err := decodeAnthropic(body)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{API: KindMessages, Model: req.Model, Stream: req.Stream}
	if p.Model == "" {
		p.Model = defaultModelClaude
	}

	// The prompt: the newest user text, wherever it is.
	var prompt string
	for i := len(req.Messages) - 1; i >= 0 && prompt == ""; i-- {
		if m := req.Messages[i]; m.Role == "user" {
			prompt = strings.Join(m.texts(), "\n")
		}
	}
	p.Prompt = clip(prompt, 200)

	// The last meaningful message decides between tool result and prompt.
	var last *anthropicMessage
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "system" {
			last = &req.Messages[i]
			break
		}
	}
	var toolOutput string
	toolResult := false
	if last != nil && last.Role == "user" {
		for _, b := range last.blocks() {
			if b.Type == "tool_result" {
				toolResult = true
				toolOutput = toolResultText(b.Content)
				break
			}
		}
	}

	switch {
	case strings.Contains(strings.ToLower(prompt), claudeCompactMarker):
		p.Reason = ReasonCompaction
		p.Text = summaryText(req.userTexts(), claudeCompactMarker)
	case toolResult:
		p.Reason = ReasonToolResult
		p.Text = "Done. The tool returned: " + clip(collapse(toolOutput), 200)
	case last != nil && last.Role == "assistant":
		p.Reason = ReasonAssistantLast
		p.Text = ack(prompt)
	case len(req.Tools) == 0:
		p.Reason = ReasonNoTools
		p.Text = ack(prompt)
	case strings.Contains(prompt, KeywordNoTool):
		p.Reason = ReasonNoTool
		p.Text = ack(prompt)
	case readPath(prompt) != "":
		p.Reason = ReasonRead
		p.Text = "Let me read the file."
		p.Tool = &ToolCall{Name: "Read", Input: mustJSON(map[string]string{"file_path": readPath(prompt)})}
	case strings.Contains(prompt, KeywordAgent):
		p.Reason = ReasonAgent
		p.Text = "I'll delegate this to a subagent."
		in := map[string]any{
			"description":   "List project files",
			"subagent_type": "general-purpose",
			"prompt":        "List the files in the current directory using ls, then report them.",
		}
		if toolHasParam(req.Tools, "Agent", "run_in_background") {
			// Claude Code 2.1.330 runs agents in the background unless
			// told otherwise, and a -p run then did not end
			in["run_in_background"] = false
		}
		p.Tool = &ToolCall{Name: "Agent", Input: mustJSON(in)}
	default:
		p.Reason = ReasonDefault
		p.Text = "Let me list the files."
		p.Tool = &ToolCall{Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}
		if strings.Contains(prompt, KeywordSlowTool) {
			p.Tool.Input = mustJSON(map[string]string{"command": slowCommand})
		}
	}
	if p.Reason != ReasonCompaction && strings.Contains(prompt, KeywordThink) {
		p.Thinking = thinkingText
	}

	est := estimateTokens(body)
	p.Usage.CacheReadInputTokens = est * 85 / 100
	p.Usage.CacheCreationInputTokens = est / 10
	p.Usage.InputTokens = max(est-p.Usage.CacheReadInputTokens-p.Usage.CacheCreationInputTokens, 1)
	if !toolResult && strings.Contains(prompt, KeywordBigUsage) {
		p.Usage.CacheReadInputTokens = 185000
	}
	p.Usage.OutputTokens = p.outputTokens()
	return p, nil
}

// PlanResponses decides the reply to a Responses API request body.
func PlanResponses(body []byte) (Plan, error) {
	req, err := decodeResponses(body)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{API: KindResponses, Model: req.Model, Stream: req.Stream}
	if p.Model == "" {
		p.Model = defaultModelOpenAI
	}

	var prompt string
	for i := len(req.Input) - 1; i >= 0 && prompt == ""; i-- {
		if it := req.Input[i]; isMessage(it) && it.Role == "user" {
			prompt = strings.Join(it.userTexts(), "\n")
		}
	}
	p.Prompt = clip(prompt, 200)

	// The last meaningful item: skip developer/system messages and injected
	// user context.
	var last *responsesItem
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := &req.Input[i]
		if isMessage(*it) && (it.Role == "developer" || it.Role == "system" ||
			(it.Role == "user" && len(it.userTexts()) == 0)) {
			continue
		}
		last = it
		break
	}
	toolResult := last != nil && (last.Type == "function_call_output" || last.Type == "custom_tool_call_output")

	switch {
	case strings.Contains(prompt, codexCompactMarker) && !toolResult:
		p.Reason = ReasonCompaction
		p.Text = summaryText(req.userTexts(), codexCompactMarker)
	case toolResult:
		p.Reason = ReasonToolResult
		p.Text = "Done. The command output was: " + clip(collapse(strings.Join(partsText(last.Output), "\n")), 200)
	case strings.HasPrefix(strings.TrimSpace(prompt), codexBridgePrefix):
		p.Reason = ReasonBridge
		p.Text = "ACK: continuing after compaction."
	case last != nil && !(isMessage(*last) && last.Role == "user"):
		p.Reason = ReasonAssistantLast
		p.Text = ack(prompt)
	case len(req.Tools) == 0:
		p.Reason = ReasonNoTools
		p.Text = ack(prompt)
	case strings.Contains(prompt, KeywordNoTool):
		p.Reason = ReasonNoTool
		p.Text = ack(prompt)
	default:
		p.Reason = ReasonDefault
		p.Text = "Let me list the files."
		p.Tool = &ToolCall{Name: "exec_command", Input: json.RawMessage(`{"cmd":"ls"}`)}
		if strings.Contains(prompt, KeywordSlowTool) {
			p.Tool.Input = mustJSON(map[string]string{"cmd": slowCommand})
		}
	}
	if p.Reason != ReasonCompaction && p.Reason != ReasonBridge && strings.Contains(prompt, KeywordThink) {
		p.Thinking = thinkingText
	}

	p.openAIUsage(body, !toolResult && p.Reason != ReasonCompaction && p.Reason != ReasonBridge &&
		strings.Contains(prompt, KeywordBigUsage))
	return p, nil
}

// openAIUsage sets the usage of a Responses or Chat Completions reply: the
// input (which includes the cached part) estimated from the body, 70 % of
// it cached; with big, 200,000 input tokens of which 150,000 cached (the
// BIGUSAGE keyword); reasoning tokens for the thinking, which the output
// includes.
func (p *Plan) openAIUsage(body []byte, big bool) {
	est := estimateTokens(body)
	p.Usage.InputTokens = est
	p.Usage.CachedTokens = est * 70 / 100
	if big {
		p.Usage.InputTokens = 200000
		p.Usage.CachedTokens = 150000
	}
	if p.Thinking != "" {
		p.Usage.ReasoningTokens = tokensOf(p.Thinking)
	}
	p.Usage.OutputTokens = p.outputTokens()
	p.Usage.TotalTokens = p.Usage.InputTokens + p.Usage.OutputTokens
}

func isMessage(it responsesItem) bool {
	return it.Type == "message" || (it.Type == "" && it.Role != "")
}

// outputTokens is a deterministic output size: a quarter of the reply's
// bytes plus 10.
func (p *Plan) outputTokens() int {
	n := tokensOf(p.Thinking) + tokensOf(p.Text) + 10
	if p.Tool != nil {
		n += tokensOf(p.Tool.Name) + tokensOf(string(p.Tool.Input))
	}
	return n
}

// assignIDs sets the ids, derived from the body and the arrival number n.
func (p *Plan) assignIDs(body []byte, n int) {
	sum := sha256.Sum256(append([]byte(fmt.Sprintf("%d\x00", n)), body...))
	seed := hex.EncodeToString(sum[:])
	id := func(prefix string, salt int) string {
		s := sha256.Sum256([]byte(fmt.Sprintf("%s/%s/%d", seed, prefix, salt)))
		return prefix + hex.EncodeToString(s[:12])
	}
	switch p.API {
	case KindMessages:
		p.ID = id("msg_", 0)
		if p.Thinking != "" {
			p.Sig = base64.StdEncoding.EncodeToString([]byte("fake-signature-" + seed[:32]))
		}
		if p.Tool != nil {
			p.Tool.ID = id("toolu_", 1)
		}
	case KindChat:
		p.ID = id("chatcmpl-", 0)
		if p.Tool != nil {
			p.Tool.ID = id("call_", 3)
		}
	case KindResponses:
		p.ID = id("resp_", 0)
		p.TextID = id("msg_", 1)
		if p.Thinking != "" {
			p.ThinkID = id("rs_", 2)
			p.Sig = base64.StdEncoding.EncodeToString([]byte("fake-encrypted-reasoning-" + seed[:32]))
		}
		if p.Tool != nil {
			p.Tool.ID = id("call_", 3)
			p.Tool.ItemID = id("fc_", 4)
		}
	}
}

// summaryText is the compaction summary: it names the earlier user texts so
// a test can see what the summary covered.
func summaryText(userTexts []string, marker string) string {
	var b strings.Builder
	b.WriteString("<analysis>\nFake analysis of the conversation.\n</analysis>\n<summary>\nFAKE SUMMARY. Earlier user messages:\n")
	for _, t := range userTexts {
		if strings.Contains(t, marker) || strings.Contains(strings.ToLower(t), strings.ToLower(marker)) {
			continue
		}
		fmt.Fprintf(&b, "- %s\n", clip(collapse(t), 40))
	}
	b.WriteString("</summary>")
	return b.String()
}

func ack(prompt string) string { return "ACK: " + clip(collapse(prompt), 40) }

// readPath returns the absolute path after READ: in the prompt, if any.
func readPath(prompt string) string {
	i := strings.Index(prompt, KeywordRead)
	if i < 0 {
		return ""
	}
	rest := prompt[i+len(KeywordRead):]
	if j := strings.IndexAny(rest, " \t\r\n"); j >= 0 {
		rest = rest[:j]
	}
	if !strings.HasPrefix(rest, "/") {
		return ""
	}
	return rest
}

// clip returns the first n runes of s.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

// collapse replaces runs of white space with one space and trims.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// estimateTokens is the usual (bytes + 3) / 4 estimate.
func estimateTokens(b []byte) int { return (len(b) + 3) / 4 }

func tokensOf(s string) int { return (len(s) + 3) / 4 }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// toolHasParam reports whether the request offers the tool name with the
// input parameter param.
func toolHasParam(tools []json.RawMessage, name, param string) bool {
	for _, raw := range tools {
		var t struct {
			Name   string `json:"name"`
			Schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"input_schema"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Name == name {
			_, ok := t.Schema.Properties[param]
			return ok
		}
	}
	return false
}
