package compact

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// Claude Code's compaction summary text around the summary itself
// (claude-code.md §6, the 2.1.197 example).
const (
	claudeSummaryHead = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
	claudeSummaryTail = "\n\nIf you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: %s\nContinue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface with \"I'll continue\" or similar. Pick up the last task as if the break never happened."
)

// claudeEnvKeys are the envelope fields copied from a neighbouring line.
var claudeEnvKeys = map[string]bool{
	"userType": true, "entrypoint": true, "cwd": true, "sessionId": true, "version": true, "gitBranch": true, "slug": true,
}

// claudeWriter appends a compact_boundary system line and an
// isCompactSummary user line, then copies of the kept tail chained from the
// summary (new uuids), so the resumed chain is boundary → summary → tail.
type claudeWriter struct {
	path     string
	template []byte // the last main-chain user/assistant line
	leaf     string // the uuid of the last main-chain line
}

func (w *claudeWriter) observe(r *session.Record) {
	if r.Sidechain || r.Line.Status != jsonl.OK {
		return
	}
	if r.UUID != "" {
		w.leaf = r.UUID
	}
	if (r.Type == "user" || r.Type == "assistant") && r.UUID != "" {
		w.template = append(w.template[:0], r.Line.Raw...)
	}
}

func (w *claudeWriter) seeCompacted(*session.Record) {}

func (w *claudeWriter) tailItem(r *session.Record) *titem {
	if r.Type != "user" && r.Type != "assistant" {
		return nil
	}
	return parseItem(r)
}

func (w *claudeWriter) truncate(it *titem, f func(string) (string, bool)) int {
	msg := it.val.get("message")
	content := msg.get("content")
	if content == nil || content.kind != kindArray {
		return 0
	}
	n := 0
	for _, b := range content.arr {
		if b.getStr("type") != "tool_result" {
			continue
		}
		c, k := shortenContent(b.get("content"), f)
		if k > 0 {
			b.set("content", c)
			n += k
		}
	}
	if n > 0 {
		content.raw, msg.raw = nil, nil
		it.val.raw = nil
		// the tool's own record of its output repeats it in full
		it.val.del("toolUseResult")
	}
	return n
}

// claudeShape is the key layout of a file's lines: where the envelope goes
// (after isSidechain in ≤ 2.1.39, at the end in 2.1.1xx) and its fields.
type claudeShape struct {
	newStyle bool
	env      []member
	prompt   bool // lines carry promptId
}

func claudeShapeOf(v *value) claudeShape {
	s := claudeShape{newStyle: true}
	if v == nil {
		return s
	}
	typeAt, userTypeAt := -1, -1
	for i, m := range v.obj {
		switch {
		case m.key == "type":
			typeAt = i
		case m.key == "userType":
			userTypeAt = i
		}
		if claudeEnvKeys[m.key] {
			s.env = append(s.env, m)
		}
		if m.key == "entrypoint" {
			s.prompt = true // 2.1.1xx lines; their user lines carry promptId
		}
	}
	if userTypeAt >= 0 && typeAt >= 0 && userTypeAt < typeAt {
		s.newStyle = false
	}
	return s
}

// build lays out head, envelope and body in the file's order.
func (s claudeShape) build(head, body []member) *value {
	var ms []member
	ms = append(ms, head...)
	if s.newStyle {
		ms = append(ms, body...)
		ms = append(ms, s.env...)
	} else {
		ms = append(ms, s.env...)
		ms = append(ms, body...)
	}
	return jobj(ms...)
}

func (w *claudeWriter) aborted(call session.ToolCall, from *titem) *titem {
	shape := claudeShapeOf(from.val)
	block := jobj(kv("tool_use_id", jstr(call.ID)), kv("type", jstr("tool_result")), kv("content", jstr("aborted")), kv("is_error", jbool(true)))
	v := shape.build(
		[]member{kv("parentUuid", jnull()), kv("isSidechain", jbool(false))},
		[]member{kv("type", jstr("user")), kv("message", jobj(kv("role", jstr("user")), kv("content", jarr(block)))),
			kv("uuid", jnull()), kv("timestamp", jnull()), kv("sourceToolAssistantUUID", jstr(from.val.getStr("uuid")))},
	)
	return &titem{val: v, role: session.RoleTool, aborted: true,
		results: []session.ToolResult{{CallID: call.ID, Output: "aborted", IsError: true}}}
}

func (w *claudeWriter) summaryText(c *compaction) string {
	return claudeSummaryHead + c.summary + fmt.Sprintf(claudeSummaryTail, c.path)
}

func (w *claudeWriter) lines(c *compaction) ([][]byte, int64, error) {
	if w.template == nil {
		return nil, -1, errors.New("no Claude Code conversation line to copy the envelope from")
	}
	tv, err := parseJSON(w.template)
	if err != nil {
		return nil, -1, err
	}
	shape := claudeShapeOf(tv)
	at := func(i int) *value { return jstr(stamp(c.now.Add(time.Duration(i) * time.Millisecond))) }
	meta := jobj(kv("trigger", jstr("manual")), kv("preTokens", jint(c.preTokens)), kv("postTokens", jint(c.postTokens)))
	boundaryID, summaryID := newUUID(), newUUID()
	logical := jnull()
	if w.leaf != "" {
		logical = jstr(w.leaf)
	}
	boundary := shape.build(
		[]member{kv("parentUuid", jnull()), kv("logicalParentUuid", logical), kv("isSidechain", jbool(false))},
		[]member{kv("type", jstr("system")), kv("subtype", jstr("compact_boundary")), kv("content", jstr("Conversation compacted")),
			kv("isMeta", jbool(false)), kv("timestamp", at(0)), kv("uuid", jstr(boundaryID)), kv("level", jstr("info")),
			kv("compactMetadata", meta)},
	)
	head := []member{kv("parentUuid", jstr(boundaryID)), kv("isSidechain", jbool(false))}
	if shape.newStyle && shape.prompt {
		head = append(head, kv("promptId", jstr(newUUID())))
	}
	summary := shape.build(head,
		[]member{kv("type", jstr("user")), kv("message", jobj(kv("role", jstr("user")), kv("content", jstr(w.summaryText(c))))),
			kv("isVisibleInTranscriptOnly", jbool(true)), kv("isCompactSummary", jbool(true)),
			kv("uuid", jstr(summaryID)), kv("timestamp", at(1))},
	)
	out := [][]byte{compactStyle.encode(nil, boundary), compactStyle.encode(nil, summary)}

	// copies of the tail, chained from the summary. Claude Code merges
	// every line of one message.id and keeps the first result of a tool_use
	// id it meets in the file, so the copies get their own message and tool
	// ids (and zero usage, so that nothing is counted twice).
	ids := map[string]string{}
	msgIDs, toolIDs := map[string]string{}, map[string]string{}
	renew := func(m map[string]string, old, prefix string) string {
		if n, ok := m[old]; ok {
			return n
		}
		n := prefix + strings.ReplaceAll(newUUID(), "-", "")[:24]
		m[old] = n
		return n
	}
	parent := summaryID
	for i, it := range c.tail {
		v := it.val
		if msg := v.get("message"); msg != nil && msg.kind == kindObject {
			if old := msg.getStr("id"); old != "" {
				msg.set("id", jstr(renew(msgIDs, old, "msg_")))
			}
			if u := msg.get("usage"); u != nil && u.kind == kindObject {
				msg.set("usage", zeroNumbers(u))
			}
			if content := msg.get("content"); content != nil && content.kind == kindArray {
				for _, b := range content.arr {
					switch b.getStr("type") {
					case "tool_use", "server_tool_use":
						if old := b.getStr("id"); old != "" {
							b.set("id", jstr(renew(toolIDs, old, "toolu_")))
						}
					case "tool_result":
						if old := b.getStr("tool_use_id"); old != "" {
							if n, ok := toolIDs[old]; ok {
								b.set("tool_use_id", jstr(n))
							}
						}
					}
				}
				content.raw = nil
			}
			msg.raw = nil
		}
		id := newUUID()
		if old := v.getStr("uuid"); old != "" {
			ids[old] = id
		}
		v.set("parentUuid", jstr(parent))
		v.set("uuid", jstr(id))
		v.set("timestamp", at(2+i))
		if src := v.getStr("sourceToolAssistantUUID"); src != "" {
			if nid, ok := ids[src]; ok {
				v.set("sourceToolAssistantUUID", jstr(nid))
			}
		}
		out = append(out, compactStyle.encode(nil, v))
		parent = id
	}
	return out, c.postTokens, nil
}

func (w *claudeWriter) appends() bool { return true }
func (w *claudeWriter) eol() string   { return "\n" }

// zeroNumbers returns v with every number in it set to 0 (usage objects of
// the copies: the original lines keep the counts).
func zeroNumbers(v *value) *value {
	switch v.kind {
	case kindNumber:
		return jint(0)
	case kindObject:
		out := &value{kind: kindObject}
		for _, m := range v.obj {
			out.obj = append(out.obj, member{m.key, zeroNumbers(m.val)})
		}
		return out
	case kindArray:
		out := &value{kind: kindArray}
		for _, e := range v.arr {
			out.arr = append(out.arr, zeroNumbers(e))
		}
		return out
	}
	return v
}
