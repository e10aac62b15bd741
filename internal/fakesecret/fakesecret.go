// Package fakesecret makes fake credentials for tests: strings shaped like
// real secrets (the prefix, length and alphabet each secret scanner looks
// for) that never were real ones.
//
// They are assembled when a test runs, from split prefixes and characters
// drawn from a fixed-seed generator, so that no file of the repository holds
// a string that looks like a credential to a scanner (GitHub's push
// protection included). Test data refers to them by name: Expand replaces
// @FAKE:<name>@ with the secret.
package fakesecret

import (
	"regexp"
	"strings"
)

// Alphabets the secrets are drawn from.
const (
	UpperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	Alnum       = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	Base64      = Alnum + "+/"
	URLSafe     = Alnum + "_-"
)

// Draw returns n characters of alphabet from a small LCG seeded by seed:
// the same string on every run.
func Draw(alphabet string, n int, seed uint32) string {
	var b strings.Builder
	x := seed*2654435761 + 12345
	for i := 0; i < n; i++ {
		x = x*1664525 + 1013904223
		b.WriteByte(alphabet[(x>>16)%uint32(len(alphabet))])
	}
	return b.String()
}

func cat(parts ...string) string { return strings.Join(parts, "") }

// Case is one fake secret, the rule of pkg/redact that must find it, and a
// line of text that holds it (%s is the secret).
type Case struct {
	Name   string
	Rule   string
	Secret string
	Text   string
}

// Line is the case's text with its secret.
func (c Case) Line() string { return strings.Replace(c.Text, "%s", c.Secret, 1) }

// Cases are one fake secret of every kind redaction must find.
func Cases() []Case {
	pem := cat("-----BEGIN ", "RSA PRIVATE", " KEY-----\n", Draw(Base64, 64, 1), "\n", Draw(Base64, 64, 2), "\n", Draw(Base64, 40, 3), "=\n-----END RSA ", "PRIVATE KEY-----")
	jwt := cat("ey", "J", Draw(Alnum, 30, 4), ".ey", "J", Draw(Alnum, 40, 5), ".", Draw(URLSafe, 43, 6))
	return []Case{
		{"aws-key-id", "aws-access-token", cat("AK", "IA", Draw(UpperDigits, 16, 7)), "aws configure set aws_access_key_id %s"},
		{"aws-secret", "aws-secret-access-key", Draw(Base64, 40, 8), "aws_secret_access_key = %s\n"},
		{"gcp-api-key", "gcp-api-key", cat("AI", "za", Draw(URLSafe, 35, 9)), `curl "https://maps.example/api?key=%s"`},
		{"azure-client-secret", "azure-ad-client-secret", cat(Draw(Alnum, 3, 10), "8Q~", Draw(Alnum, 34, 11)), "client_secret: %s\n"},
		{"azure-storage-key", "azure-storage-account-key", cat(Draw(Base64, 86, 12), "=="), "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=%s;EndpointSuffix=core.windows.net"},
		{"github-pat", "github-pat", cat("gh", "p_", Draw(Alnum, 36, 13)), "git remote set-url origin https://%s@github.com/a/b"},
		{"github-fine-grained-pat", "github-fine-grained-pat", cat("github", "_pat_", Draw(Alnum+"_", 82, 14)), "token %s"},
		{"gitlab-pat", "gitlab-pat", cat("gl", "pat-", Draw(URLSafe, 20, 15)), "export GITLAB_TOKEN=%s"},
		{"slack-bot-token", "slack-bot-token", cat("xo", "xb-", "1234567890", "-", "9876543210", "-", Draw(Alnum, 24, 16)), "SLACK: %s"},
		{"openai-key", "openai-api-key", cat("sk-", "proj-", Draw(URLSafe, 74, 17), "T3Blbk", "FJ", Draw(URLSafe, 74, 18)), "OPENAI_API_KEY is %s ok"},
		{"anthropic-key", "anthropic-api-key", cat("sk-", "ant-", "api03-", Draw(URLSafe, 93, 19), "AA"), "use %s for the call"},
		{"private-key", "private-key", pem, "here is the key:\n%s\nkeep it safe"},
		{"jwt", "jwt", jwt, "Authorization: Bearer %s"},
		{"env-password", "env-assignment", "correcthorsebattery", "DB_PASSWORD=%s\n"},
		{"env-exported", "env-assignment", "hunter2hunter2", `export STRIPE_SECRET="%s"`},
		{"generic-api-key", "generic-api-key", Draw(Alnum, 32, 20), `"api_key": "%s"`},
	}
}

// Get returns the secret of the case called name, or "".
func Get(name string) string {
	for _, c := range Cases() {
		if c.Name == name {
			return c.Secret
		}
	}
	return ""
}

var ref = regexp.MustCompile(`@FAKE:([a-z0-9-]+)(?::(json))?@`)

// Expand replaces every @FAKE:<name>@ in s with that case's secret, and
// @FAKE:<name>:json@ with the secret escaped for the inside of a JSON
// string (the private key's newlines as \n). An unknown name is left as it
// is.
func Expand(s string) string {
	return ref.ReplaceAllStringFunc(s, func(m string) string {
		sub := ref.FindStringSubmatch(m)
		v := Get(sub[1])
		if v == "" {
			return m
		}
		if sub[2] == "json" {
			v = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
		}
		return v
	})
}

// ProseCases are keys followed by punctuation in a sentence, which
// gitleaks' own patterns for them miss.
func ProseCases() []Case {
	var out []Case
	for _, c := range Cases() {
		switch c.Rule {
		case "anthropic-api-key", "openai-api-key", "gcp-api-key", "jwt":
			out = append(out, Case{c.Name + "-prose", c.Rule, c.Secret, "my key is %s, use it."}, Case{c.Name + "-prose-end", c.Rule, c.Secret, "(it was %s)."})
		}
	}
	return out
}
