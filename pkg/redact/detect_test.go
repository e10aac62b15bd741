package redact

import (
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakesecret"
)

// The fake secrets come from internal/fakesecret: assembled when the tests
// run, never written whole in the repository.

func cat(parts ...string) string { return strings.Join(parts, "") }

func TestFindEachKind(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(fakesecret.Cases(), fakesecret.ProseCases()...) {
		t.Run(c.Name, func(t *testing.T) {
			text := c.Line()
			fs := d.Find(text)
			if len(fs) != 1 {
				t.Fatalf("found %d secrets in %q, want 1: %+v", len(fs), text, fs)
			}
			f := fs[0]
			if f.Rule != c.Rule {
				t.Errorf("rule %s, want %s", f.Rule, c.Rule)
			}
			got := text[f.Start:f.End]
			if !strings.Contains(got, c.Secret) && got != c.Secret {
				t.Errorf("finding %q does not cover the secret %q", got, c.Secret)
			}
			red, _ := d.Redact(text)
			if strings.Contains(red, c.Secret) {
				t.Errorf("redacted text still holds the secret: %q", red)
			}
			if !strings.Contains(red, Placeholder(c.Rule)) {
				t.Errorf("redacted text %q lacks %s", red, Placeholder(c.Rule))
			}
			// redacting again finds nothing more
			if again := d.Find(red); len(again) != 0 {
				t.Errorf("redacted text still has findings: %+v in %q", again, red)
			}
			p := Preview(text, fs, f)
			if strings.Contains(p, c.Secret) || (len(c.Secret) > 12 && strings.Contains(p, c.Secret[4:12])) {
				t.Errorf("preview %q shows the secret", p)
			}
		})
	}
}

// notSecrets hold no secret.
var notSecrets = []string{
	"The quick brown fox jumps over the lazy dog.",
	"func (d *Detector) Find(s string) []Finding {",
	"DB_PASSWORD=${DB_PASSWORD}",
	"export API_TOKEN=$API_TOKEN",
	"SECRET_KEY=<your-secret-key>",
	"PASSWORD=changeme",
	"the token counter says 12345 tokens used",
	"go test ./pkg/redact/... -run TestFind",
	"API_KEY=" + Placeholder("generic-api-key"),
}

func TestNotSecrets(t *testing.T) {
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range notSecrets {
		if fs := d.Find(text); len(fs) != 0 {
			t.Errorf("%q: found %+v, want nothing", text, fs)
		}
	}
}

func TestMask(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abcdefghijklmnopqrst", "abcd…(20 chars)"},
		{"abcdefgh", "ab…(8 chars)"},
		{"abc", "…(3 chars)"},
	} {
		if got := Mask(c.in); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPreviewMasksNeighbours(t *testing.T) {
	d, _ := Default()
	a := cat("AK", "IA", fakesecret.Draw(fakesecret.UpperDigits, 16, 30))
	b := cat("gh", "p_", fakesecret.Draw(fakesecret.Alnum, 36, 31))
	text := "keys " + a + " and " + b + " end"
	fs := d.Find(text)
	if len(fs) != 2 {
		t.Fatalf("found %+v", fs)
	}
	for _, f := range fs {
		p := Preview(text, fs, f)
		if strings.Contains(p, a[4:]) || strings.Contains(p, b[4:]) {
			t.Errorf("preview %q shows a secret", p)
		}
	}
	if p := Preview(text, fs, fs[1]); p != "…s AKIA…(20 chars) and ghp_…(40 chars) end" {
		t.Errorf("preview = %q", p)
	}
}
