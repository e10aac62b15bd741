package compact

import (
	"errors"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/session"
)

// ClawdBoundaryText is the content of clawdcode's compaction boundary.
const ClawdBoundaryText = "=== 上下文压缩边界 ==="

// clawdWriter appends clawdcode's compact_boundary + isCompactSummary pair
// (the code's convention: the same compactMetadata on both lines, a null
// parent on the boundary, no gitBranch on the summary), then copies of the
// kept tail: clawdcode loads only what follows the last boundary.
type clawdWriter struct {
	template []byte
}

func (w *clawdWriter) observe(r *session.Record) {
	if r.Line.Status != jsonl.OK {
		return
	}
	switch r.Type {
	case "user", "assistant", "tool_use", "tool_result":
		w.template = append(w.template[:0], r.Line.Raw...)
	}
}

func (w *clawdWriter) seeCompacted(*session.Record) {}

func (w *clawdWriter) tailItem(r *session.Record) *titem {
	switch r.Type {
	case "user", "assistant", "tool_use", "tool_result":
		return parseItem(r)
	}
	return nil
}

func (w *clawdWriter) truncate(it *titem, f func(string) (string, bool)) int {
	tr := it.val.get("toolResult")
	if tr == nil {
		return 0
	}
	o, n := shortenContent(tr.get("output"), f)
	if n > 0 {
		tr.set("output", o)
		it.val.raw = nil
	}
	return n
}

// envelope returns the template's sessionId, cwd, gitBranch and version.
func (w *clawdWriter) envelope() (session, cwd, branch, version *value) {
	v, _ := parseJSON(w.template)
	get := func(k string) *value {
		if m := v.get(k); m != nil {
			return m
		}
		return nil
	}
	return get("sessionId"), get("cwd"), get("gitBranch"), get("version")
}

// put appends k: v when v is set (JSON.stringify leaves out undefined).
func put(ms []member, k string, v *value) []member {
	if v == nil {
		return ms
	}
	return append(ms, kv(k, v))
}

func (w *clawdWriter) aborted(call session.ToolCall, from *titem) *titem {
	sid, cwd, branch, ver := from.val.get("sessionId"), from.val.get("cwd"), from.val.get("gitBranch"), from.val.get("version")
	ms := []member{kv("uuid", jnull()), kv("parentUuid", jnull())}
	ms = put(ms, "sessionId", sid)
	ms = append(ms, kv("timestamp", jnull()), kv("type", jstr("tool_result")))
	ms = put(ms, "cwd", cwd)
	ms = put(ms, "gitBranch", branch)
	ms = put(ms, "version", ver)
	ms = append(ms, kv("message", jobj(kv("role", jstr("assistant")), kv("content", jstr("")))),
		kv("toolResult", jobj(kv("id", jstr(call.ID)), kv("output", jstr("aborted")), kv("error", jstr("aborted")))))
	return &titem{val: jobj(ms...), role: session.RoleTool, aborted: true,
		results: []session.ToolResult{{CallID: call.ID, Output: "aborted", IsError: true}}}
}

func (w *clawdWriter) summaryText(c *compaction) string { return c.summary }

func (w *clawdWriter) lines(c *compaction) ([][]byte, int64, error) {
	if w.template == nil {
		return nil, -1, errors.New("no clawdcode message line to copy the session fields from")
	}
	sid, cwd, branch, ver := w.envelope()
	at := func(i int) *value { return jstr(stamp(c.now.Add(time.Duration(i) * time.Millisecond))) }
	files := make([]*value, 0, len(c.files))
	for _, f := range c.files {
		files = append(files, jstr(f))
	}
	meta := func() *value {
		return jobj(kv("trigger", jstr("manual")), kv("preTokens", jint(c.preTokens)), kv("postTokens", jint(c.postTokens)),
			kv("filesIncluded", jarr(files...)))
	}
	boundaryID, summaryID := newNanoid(), newNanoid()
	b := []member{kv("uuid", jstr(boundaryID)), kv("parentUuid", jnull())}
	b = put(b, "sessionId", sid)
	b = append(b, kv("timestamp", at(0)), kv("type", jstr("system")), kv("subtype", jstr("compact_boundary")))
	b = put(b, "cwd", cwd)
	b = put(b, "gitBranch", branch)
	b = put(b, "version", ver)
	b = append(b, kv("message", jobj(kv("role", jstr("system")), kv("content", jstr(ClawdBoundaryText)))), kv("compactMetadata", meta()))

	s := []member{kv("uuid", jstr(summaryID)), kv("parentUuid", jstr(boundaryID))}
	s = put(s, "sessionId", sid)
	s = append(s, kv("timestamp", at(1)), kv("type", jstr("user")), kv("isCompactSummary", jbool(true)))
	s = put(s, "cwd", cwd)
	s = put(s, "version", ver)
	s = append(s, kv("message", jobj(kv("role", jstr("user")), kv("content", jstr(c.summary)))), kv("compactMetadata", meta()))

	out := [][]byte{compactStyle.encode(nil, jobj(b...)), compactStyle.encode(nil, jobj(s...))}
	parent := summaryID
	for i, it := range c.tail {
		id := newNanoid()
		it.val.set("uuid", jstr(id))
		it.val.set("parentUuid", jstr(parent))
		it.val.set("timestamp", at(2+i))
		out = append(out, compactStyle.encode(nil, it.val))
		parent = id
	}
	return out, c.postTokens, nil
}

func (w *clawdWriter) appends() bool { return true }
func (w *clawdWriter) eol() string   { return "\n" }
