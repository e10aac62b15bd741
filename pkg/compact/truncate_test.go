package compact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/pkg/tokens"
)

func mustCounter(t *testing.T) *tokens.Counter {
	t.Helper()
	c, err := tokens.NewCounter(tokens.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTruncator(t *testing.T) {
	c := mustCounter(t)
	tr := &truncator{count: c, max: 100}
	s := strings.Repeat("alpha beta gamma delta ", 200) + "THE END"
	out, ok := tr.shorten(s)
	if !ok || !strings.HasPrefix(out, "alpha") || !strings.HasSuffix(out, "THE END") || !strings.Contains(out, " tokens truncated…") {
		t.Fatalf("shorten: %q", out)
	}
	if n := c.Count(out); n > 115 {
		t.Errorf("shortened text has %d tokens", n)
	}
	if _, ok := tr.shorten("short"); ok {
		t.Error("short text shortened")
	}
	// multi-byte text is cut on rune boundaries
	out, _ = tr.shorten(strings.Repeat("上下文压缩边界", 300))
	if !json.Valid([]byte(fmt.Sprintf("%q", out))) || strings.ContainsRune(out, '\uFFFD') {
		t.Errorf("bad cut: %q", out)
	}
}
