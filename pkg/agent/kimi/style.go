package kimi

import (
	"strings"

	"github.com/sessctl/sessctl/pkg/ojson"
)

// LineStyle implements redact.Styler: kimi-cli writes its message lines with
// pydantic's model_dump_json (compact, raw UTF-8) and its own records
// (_checkpoint, _usage, _system_prompt: a role starting with "_") with
// Python's json.dumps (", " and ": ", every non-ASCII character escaped).
func (Home) LineStyle(v *ojson.Value) ojson.Style {
	if strings.HasPrefix(v.GetString("role"), "_") {
		return ojson.Python
	}
	return ojson.Compact
}
