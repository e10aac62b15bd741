package redact_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/sessctl/sessctl/pkg/redact"
	"github.com/sessctl/sessctl/pkg/session"
)

// BenchmarkFile redacts (to io.Discard) the session file named by
// $SESSCTL_REDACT_BENCH (a Claude session), e.g. the largest file of the
// generated corpus (make bench's corpus-claude-200MB-150).
func BenchmarkFile(b *testing.B) {
	path := os.Getenv("SESSCTL_REDACT_BENCH")
	if path == "" {
		b.Skip("set SESSCTL_REDACT_BENCH to a Claude session file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	d, err := redact.Default()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _ := os.Open(path)
		if _, err := redact.File(context.Background(), f, io.Discard, session.Claude, d); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
