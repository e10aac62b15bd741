package export

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakesecret"
	"github.com/sessctl/sessctl/pkg/redact"
)

// With Redact, no text of the transcript keeps a secret: not the title,
// the prompt, the tool call or its result; in every format.
func TestRedactEveryText(t *testing.T) {
	d, err := redact.Default()
	if err != nil {
		t.Fatal(err)
	}
	key := fakesecret.Get("aws-key-id")
	s := hostile(t)
	// the tool call runs with the key, the result prints it, the title holds it
	raw := strings.Replace(readFile(t, s.Main), `"command":"ls"`, `"command":"AWS_ACCESS_KEY_ID=`+key+` aws s3 ls"`, 1)
	raw = strings.Replace(raw, `line\nline\n`, `line\n`+key+`\n`, 1)
	writeFile(t, s.Main, raw)
	for _, format := range []string{Markdown, HTML, JSON} {
		var plain, red bytes.Buffer
		if err := Write(context.Background(), &plain, s, Options{Format: format, Title: "key " + key}); err != nil {
			t.Fatal(err)
		}
		n := strings.Count(plain.String(), key)
		if n < 2 {
			t.Fatalf("%s: the unredacted transcript holds the key %d times, want 2 or more", format, n)
		}
		opt := Options{Format: format, Title: "key " + key, Redact: func(s string) string { r, _ := d.Redact(s); return r }}
		if err := Write(context.Background(), &red, s, opt); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(red.String(), key) {
			t.Errorf("%s: the redacted transcript holds the key", format)
		}
		// (Markdown escapes the title's punctuation: count the word)
		if got := strings.Count(red.String(), "REDACTED"); got != n {
			t.Errorf("%s: %d placeholders, want %d", format, got, n)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
