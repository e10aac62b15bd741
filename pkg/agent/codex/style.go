package codex

import "github.com/sessctl/sessctl/pkg/ojson"

// LineStyle implements redact.Styler: Codex writes every line with serde_json
// (compact, raw UTF-8), so a changed line is written compactly and what did
// not change in it is copied as it was.
func (Home) LineStyle(*ojson.Value) ojson.Style { return ojson.Compact }
