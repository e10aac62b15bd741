package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/sessctl/sessctl/pkg/index"
	"github.com/sessctl/sessctl/pkg/session"
)

// ls runs under the warm limit while the index serves it, under the cold
// one once loosened or without an index (never without a limit), and puts
// back what was set before; a limit set by the user is kept throughout.
func TestBoundLsMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	ss := make([]*session.Session, 100000)
	for i := range ss {
		ss[i] = &session.Session{Files: []session.File{{Role: session.FileMain, Size: 4 << 20}}}
	}
	ss[7].Files = append(ss[7].Files, session.File{Role: session.FileSubagent, Size: 30 << 20}, session.File{Role: session.FileRotation, Size: 90 << 20})
	const warm, cold = 64<<20 + 256*100000, 32<<20 + 700*100000 + 2*30<<20 // the longest file Summarize reads: the subagent's
	limit := func() int64 { return debug.SetMemoryLimit(-1) }

	loosen, restore := boundLsMemory(&index.Index{}, ss)
	if got := limit(); got != warm {
		t.Errorf("served by the index: limit %d, want %d", got, warm)
	}
	loosen()
	if got := limit(); got != cold {
		t.Errorf("loosened: limit %d, want %d", got, cold)
	}
	restore()
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("restored: limit %d, want none", got)
	}

	_, restore = boundLsMemory(nil, ss)
	if got := limit(); got != cold {
		t.Errorf("without an index: limit %d, want %d", got, cold)
	}
	restore()
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("restored: limit %d, want none", got)
	}

	// a small store: at least 64 MiB
	_, restore = boundLsMemory(nil, ss[:5])
	if got := limit(); got != 64<<20+2*4<<20 {
		t.Errorf("5 sessions without an index: limit %d, want %d", got, 64<<20+2*4<<20)
	}
	restore()

	debug.SetMemoryLimit(123 << 20) // GOMEMLIMIT
	loosen, restore = boundLsMemory(nil, ss)
	loosen()
	restore()
	if got := limit(); got != 123<<20 {
		t.Errorf("the user's limit became %d", got)
	}
}
