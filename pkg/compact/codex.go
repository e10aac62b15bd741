package compact

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// CodexSummaryPrefix starts the message of Codex's local compaction
// (codex.md §6); the summary follows after a newline.
const CodexSummaryPrefix = "Another language model started to solve this problem and produced a summary of its thinking process. You also have access to the state of the tools that were used by that language model. Use this to build on the work that has already been done and avoid duplicating work. Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:"

// codexWriter appends a compacted record whose replacement_history is the
// new history (summary, injected context, kept tail), then a synthetic
// token_count with the new context size, as Codex does after its own
// compaction. On resume Codex starts from the newest replacement_history.
type codexWriter struct {
	ordinal    int64 // of the last record, -1 when the file has no ordinals
	hasOrdinal bool
	tokenCount []byte // the last token_count event with info
	ctx        [][]byte
	ctxOpen    bool
	sawMeta    bool // a session_meta envelope: not a legacy rollout
}

var ordinalKey = []byte(`"ordinal":`)

func (w *codexWriter) observe(r *session.Record) {
	if r.Line.Status != jsonl.OK {
		return
	}
	head := r.Line.Raw[:min(len(r.Line.Raw), 96)]
	if i := bytes.Index(head, ordinalKey); i >= 0 {
		j := i + len(ordinalKey)
		k := j
		for k < len(head) && head[k] >= '0' && head[k] <= '9' {
			k++
		}
		if n, err := strconv.ParseInt(string(head[j:k]), 10, 64); err == nil {
			w.ordinal, w.hasOrdinal = n, true
		}
	}
	if r.Type == "session_meta" {
		w.sawMeta = true
	}
	if r.Type == "event_msg/token_count" && r.ContextTokens >= 0 {
		w.tokenCount = append(w.tokenCount[:0], r.Line.Raw...)
	}
}

func isCodexContext(r *session.Record) bool {
	return r.Type == "response_item/message" && (r.Role == session.RoleDeveloper || r.Role == session.RoleSystem ||
		(r.Role == session.RoleUser && r.Synthetic))
}

// seeCompacted keeps the most recent group of injected context messages
// (permissions, environment, skills): the new history needs them.
func (w *codexWriter) seeCompacted(r *session.Record) {
	if r.Type == "compacted" {
		// an earlier compaction: its replacement history holds the context
		w.ctx, w.ctxOpen = nil, false
		for _, it := range codexReplacement(r.Line.Raw) {
			if it.context {
				w.ctx = append(w.ctx, it.raw)
			}
		}
		return
	}
	if isCodexContext(r) {
		if !w.ctxOpen {
			w.ctx, w.ctxOpen = nil, true
		}
		if v, err := parseJSON(r.Line.Raw); err == nil {
			if p := v.get("payload"); p != nil {
				w.ctx = append(w.ctx, append([]byte(nil), p.raw...))
			}
		}
		return
	}
	if conversational(r) {
		w.ctxOpen = false
	}
}

func (w *codexWriter) tailItem(r *session.Record) *titem {
	if len(r.Type) < len("response_item/") || r.Type[:len("response_item/")] != "response_item/" {
		return nil
	}
	it := parseItem(r)
	if it != nil && isCodexContext(r) {
		it.context = true
	}
	return it
}

func (w *codexWriter) truncate(it *titem, f func(string) (string, bool)) int {
	p := it.val.get("payload")
	switch p.getStr("type") {
	case "function_call_output", "custom_tool_call_output":
	default:
		return 0
	}
	o, n := shortenContent(p.get("output"), f)
	if n > 0 {
		p.set("output", o)
		it.val.raw = nil
	}
	return n
}

func (w *codexWriter) aborted(call session.ToolCall, from *titem) *titem {
	typ := "function_call_output"
	if from.val.get("payload").getStr("type") == "custom_tool_call" {
		typ = "custom_tool_call_output"
	}
	p := jobj(kv("type", jstr(typ)), kv("call_id", jstr(call.ID)), kv("output", jstr("aborted")))
	return &titem{val: jobj(kv("type", jstr("response_item")), kv("payload", p)), role: session.RoleTool, aborted: true,
		results: []session.ToolResult{{CallID: call.ID, Output: "aborted"}}}
}

func (w *codexWriter) summaryText(c *compaction) string {
	return CodexSummaryPrefix + "\n" + c.summary
}

func (w *codexWriter) envelope(t time.Time, typ string, payload *value) *value {
	ms := []member{kv("timestamp", jstr(stamp(t)))}
	if w.hasOrdinal {
		w.ordinal++
		ms = append(ms, kv("ordinal", jint(w.ordinal)))
	}
	return jobj(append(ms, kv("type", jstr(typ)), kv("payload", payload))...)
}

// usable refuses rollouts Codex itself cannot resume.
func (w *codexWriter) usable() error {
	if !w.sawMeta {
		return errors.New("a rollout without session_meta (written before September 2025, or damaged): current Codex cannot resume it, so sessctl does not compact it")
	}
	return nil
}

func (w *codexWriter) lines(c *compaction) ([][]byte, int64, error) {
	msg := w.summaryText(c)
	summary := jobj(kv("type", jstr("message")), kv("role", jstr("user")),
		kv("content", jarr(jobj(kv("type", jstr("input_text")), kv("text", jstr(msg))))))
	var tail []*value
	lastUser, hasCtx := -1, false
	for _, it := range c.tail {
		p := it.val.get("payload")
		if p == nil {
			return nil, -1, errors.New("a kept record has no payload")
		}
		if it.context {
			hasCtx = true
		}
		if it.role == session.RoleUser && it.msgStart {
			lastUser = len(tail)
		}
		tail = append(tail, p)
	}
	var ctx []*value
	if !hasCtx {
		for _, b := range w.ctx {
			ctx = append(ctx, jraw(b))
		}
	}
	// Codex puts the injected context just before the last real user
	// message, or before the summary when there is none
	var hist []*value
	if lastUser >= 0 {
		hist = append(hist, summary)
		hist = append(hist, tail[:lastUser]...)
		hist = append(hist, ctx...)
		hist = append(hist, tail[lastUser:]...)
	} else {
		hist = append(hist, ctx...)
		hist = append(hist, summary)
		hist = append(hist, tail...)
	}
	compacted := w.envelope(c.now, "compacted", jobj(kv("message", jstr(msg)), kv("replacement_history", jarr(hist...))))
	out := [][]byte{compactStyle.encode(nil, compacted)}
	recorded := int64(-1)
	if w.tokenCount != nil {
		if tc, err := parseJSON(w.tokenCount); err == nil {
			p := tc.get("payload")
			if last := p.get("info").get("last_token_usage"); last != nil && last.kind == kindObject {
				for i := range last.obj {
					if last.obj[i].key == "total_tokens" {
						last.obj[i].val = jint(c.postTokens)
					} else if last.obj[i].val.kind == kindNumber {
						last.obj[i].val = jint(0)
					}
				}
				last.raw, p.get("info").raw, p.raw = nil, nil, nil
				tc.set("timestamp", jstr(stamp(c.now.Add(time.Millisecond))))
				if w.hasOrdinal {
					w.ordinal++
					tc.set("ordinal", jint(w.ordinal))
				}
				out = append(out, compactStyle.encode(nil, tc))
				recorded = c.postTokens
			}
		}
	}
	return out, recorded, nil
}

func (w *codexWriter) appends() bool { return true }
func (w *codexWriter) eol() string   { return "\n" }

// replItem is one message of a compacted record's replacement history.
type replItem struct {
	role    string
	text    string
	context bool // injected context, not a conversation message
	summary bool // the compaction's own summary message
	raw     []byte
}

var codexContextPrefixes = []string{
	"<environment_context>", "<user_instructions>", "<permissions instructions>", "<skills_instructions>",
	"# AGENTS.md instructions", "<INSTRUCTIONS>",
}

// codexReplacement lists the messages of a compacted line's
// replacement_history.
func codexReplacement(line []byte) []replItem {
	v, err := parseJSON(line)
	if err != nil {
		return nil
	}
	h := v.get("payload").get("replacement_history")
	if h == nil || h.kind != kindArray {
		return nil
	}
	var out []replItem
	for _, it := range h.arr {
		if it.getStr("type") != "message" {
			continue
		}
		var text []string
		if c := it.get("content"); c != nil && c.kind == kindArray {
			for _, part := range c.arr {
				if t := part.getStr("text"); t != "" {
					text = append(text, t)
				}
			}
		}
		ri := replItem{role: it.getStr("role"), text: strings.Join(text, "\n"), raw: append([]byte(nil), it.raw...)}
		trimmed := strings.TrimLeft(ri.text, " \t\r\n")
		for _, p := range codexContextPrefixes {
			if strings.HasPrefix(trimmed, p) {
				ri.context = true
			}
		}
		if ri.role == "developer" || ri.role == "system" {
			ri.context = true
		}
		ri.summary = strings.HasPrefix(ri.text, CodexSummaryPrefix)
		out = append(out, ri)
	}
	return out
}
