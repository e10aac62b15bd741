package compact

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/sessctl/sessctl/pkg/session"
)

// writer knows one client's compaction layout.
type writer interface {
	// observe sees every record in the first pass.
	observe(r *session.Record)
	// seeCompacted sees every record of the compacted part (second pass).
	seeCompacted(r *session.Record)
	// tailItem turns a conversational record of the tail into an item, or
	// nil to leave it out of the tail.
	tailItem(r *session.Record) *titem
	// truncate shortens the tool outputs of an item with f and returns how
	// many it shortened.
	truncate(it *titem, f func(string) (string, bool)) int
	// aborted makes a result for a call that has none.
	aborted(call session.ToolCall, from *titem) *titem
	// summaryText is the summary message as the model will see it.
	summaryText(c *compaction) string
	// lines are the lines to write (after the original bytes when
	// appends), and the context size recorded in them (-1 if none).
	lines(c *compaction) ([][]byte, int64, error)
	// appends reports whether the new lines follow the original bytes
	// (Claude Code, Codex, clawdcode) or make a new file (Kimi).
	appends() bool
	eol() string
}

func newWriter(agent session.Agent, path string) writer {
	switch agent {
	case session.Kimi:
		return &kimiWriter{}
	case session.Claude:
		return &claudeWriter{path: path}
	case session.Codex:
		return &codexWriter{}
	default:
		return &clawdWriter{}
	}
}

// parseItem parses a record's line into a tail item that owns its bytes.
func parseItem(r *session.Record) *titem {
	raw := append([]byte(nil), r.Line.Raw...)
	v, err := parseJSON(raw)
	if err != nil || v.kind != kindObject {
		return nil
	}
	return &titem{val: v, raw: raw}
}

// shortenContent applies f to a content value that is a string or an array
// of parts with "text" strings; it returns how many texts it shortened.
func shortenContent(v *value, f func(string) (string, bool)) (*value, int) {
	if v == nil {
		return v, 0
	}
	switch v.kind {
	case kindString:
		if s, ok := f(v.str); ok {
			return jstr(s), 1
		}
	case kindArray:
		n := 0
		for i, part := range v.arr {
			if part.kind != kindObject {
				continue
			}
			if t := part.get("text"); t != nil && t.kind == kindString {
				if s, ok := f(t.str); ok {
					part.set("text", jstr(s))
					n++
				}
			}
			v.arr[i] = part
		}
		if n > 0 {
			v.raw = nil
		}
		return v, n
	}
	return v, 0
}

// newUUID returns a random UUID (version 4).
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

const nanoidAlphabet = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict"

// newNanoid returns a 21-character nanoid, like clawdcode's ids.
func newNanoid() string {
	var b [21]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = nanoidAlphabet[b[i]&63]
	}
	return string(b[:])
}

// stamp is a JavaScript/Rust-style UTC timestamp with milliseconds.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
