package clawdcode

import (
	"encoding/json"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

// NewMend implements repair.Mender.
func (Home) NewMend(time.Time) repair.Mend {
	return &mend{links: repair.Links{SetParent: func(raw []byte, parent string) ([]byte, error) {
		p := ojson.NullValue()
		if parent != "" {
			p = ojson.Str(parent)
		}
		return ojson.SetMember(raw, "parentUuid", p)
	}}}
}

type mend struct{ links repair.Links }

// Record implements repair.Mend: a tool_result line whose call is not in
// the file leaves it, and parent links to records that are not in it are
// relinked (repair.Links).
func (m *mend) Record(r *session.Record) []repair.Fix {
	m.links.Record(r, true, r.Type == "tool_result")
	return nil
}

// UTF8 implements repair.Mend: clawdcode (Node) decodes its file as UTF-8
// with each maximal invalid subpart replaced by U+FFFD.
func (*mend) UTF8(raw []byte) []byte {
	b, _ := jsonl.PythonReplace(raw)
	if !json.Valid(b) {
		return nil
	}
	return b
}

// DuplicateKey implements repair.Mend: clawdcode writes each uuid once.
func (*mend) DuplicateKey(r *session.Record) string { return r.UUID }

// End implements repair.Mend.
func (m *mend) End() []repair.Fix {
	fixes, _ := m.links.End()
	return fixes
}
