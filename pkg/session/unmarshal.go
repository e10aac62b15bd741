package session

import (
	"encoding/json"

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
func Unmarshal(b []byte, v any) error {
	if reference {
		return json.Unmarshal(b, v)
	}
	return gojson.Unmarshal(b, v)
}

// reference switches Unmarshal to encoding/json: for the differential
// tests only (export_test.go).
var reference bool
