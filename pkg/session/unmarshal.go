package session

import (
	"encoding/json"
	"strings"

	gojson "github.com/goccy/go-json"
)

// Unmarshal is the JSON decoder of the homes' Decode and of the decoding
// helpers here (FlexInt, TextOf, RawText): goccy/go-json, several times
// faster than encoding/json on session lines (STYLE.md's measures; decoding
// was most of the time of every command that reads a whole session).
//
// It is only ever given bytes of a line that jsonl's validator accepted
// (syntax, UTF-8, no NUL; raw control characters made strict), so its
// leniency on broken input never shows. The differential tests and the fuzz
// target in this package hold every home's Decode with it to Decode with
// encoding/json (reference), record by record.
//
// A value of bigValue bytes or more goes to encoding/json too: goccy copies
// its whole input first, which on a line of many megabytes costs more
// memory than its speed is worth (the two are held equal anyway).
func Unmarshal(b []byte, v any) error {
	if reference || len(b) >= bigValue {
		return json.Unmarshal(b, v)
	}
	return gojson.Unmarshal(b, v)
}

// bigValue is the size from which Unmarshal uses encoding/json.
const bigValue = 1 << 20

// reference switches Unmarshal to encoding/json: for the differential
// tests only (export_test.go).
var reference bool

// detach gives the record's strings memory of their own where they are a
// small part of the line. goccy/go-json makes strings that point into its
// copy of the whole line, so one uuid kept by a caller (check keeps every
// parentUuid) would keep the whole line alive: a 1 GB check grew to 2 GB.
// A string that is most of the line (the text of a long message) may keep
// pointing there: it costs at most about its own size again.
func detach(r *Record, lineLen int) {
	small := func(s *string) {
		if len(*s) > 0 && len(*s) <= lineLen/2 {
			*s = strings.Clone(*s)
		}
	}
	for _, s := range []*string{&r.Type, &r.Text, &r.Thinking, &r.Model, &r.Prompt, &r.UUID, &r.ParentUUID,
		&r.LogicalParentUUID, &r.AgentID, &r.SessionID, &r.CWD, &r.Version, &r.MessageID, &r.RequestID, &r.Title,
		(*string)(&r.Role)} {
		small(s)
	}
	for i := range r.ToolCalls {
		small(&r.ToolCalls[i].ID)
		small(&r.ToolCalls[i].Name)
		small(&r.ToolCalls[i].Input)
	}
	for i := range r.ToolResults {
		small(&r.ToolResults[i].CallID)
		small(&r.ToolResults[i].Output)
	}
}
