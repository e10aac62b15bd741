package clawdcode

import (
	"encoding/json"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"github.com/sessctl/sessctl/pkg/repair"
	"github.com/sessctl/sessctl/pkg/session"
)

// NewMend implements repair.Mender.
func (Home) NewMend(time.Time) repair.Mend { return mend{} }

type mend struct{}

// Record implements repair.Mend.
func (mend) Record(*session.Record) []repair.Fix { return nil }

// UTF8 implements repair.Mend: clawdcode (Node) decodes its file as UTF-8
// with each maximal invalid subpart replaced by U+FFFD.
func (mend) UTF8(raw []byte) []byte {
	b, _ := jsonl.PythonReplace(raw)
	if !json.Valid(b) {
		return nil
	}
	return b
}

// DuplicateKey implements repair.Mend: clawdcode writes each uuid once.
func (mend) DuplicateKey(r *session.Record) string { return r.UUID }

// End implements repair.Mend.
func (mend) End() []repair.Fix { return nil }
