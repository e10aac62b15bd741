package kimi

import (
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

// UTF8 implements repair.Mend: kimi-cli reads context.jsonl as text with
// errors="replace", so each maximal invalid subpart becomes U+FFFD; the
// line is written as it reads it. A line that is still not an object Kimi
// accepts leaves the file.
func (mend) UTF8(raw []byte) []byte {
	b, _ := jsonl.PythonReplace(raw)
	if pyLoadsObject(b) == nil {
		return nil
	}
	return b
}

// DuplicateKey implements repair.Mend: Kimi's records carry no identity,
// and the same message may legitimately be written twice.
func (mend) DuplicateKey(*session.Record) string { return "" }

// End implements repair.Mend.
func (mend) End() []repair.Fix { return nil }
