package redact

import (
	"regexp"
	"strings"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// ownRules are the rules of sessctl's own, for secrets gitleaks' default
// rules (v8.30.1) leave out. They run after gitleaks' specific rules, and
// env-assignment after its generic-api-key, so a secret two rules find is
// named by the more specific one.
//
//   - env-assignment: a .env-style assignment (NAME=value, the value
//     quoted or not, no space around "=", on a line of a .env file, after
//     `export`, or before a command) whose upper-case name says it holds a
//     secret. gitleaks' generic-api-key finds such values only above an
//     entropy of 3.5, so DB_PASSWORD=correcthorsebattery stays; in a
//     transcript the name is the evidence. Lower-case names are left out:
//     they are code (password=request.form[...]) more often than not.
//     Values that are references ($X, ${X}), placeholders (xxxx, ****,
//     <your-key>, changeme) or true/false/null are left.
//   - aws-secret-access-key: the 40-character secret of an AWS key pair
//     after its usual name (aws_secret_access_key, AWS_SECRET_ACCESS_KEY,
//     SecretAccessKey); gitleaks only has the access key id
//     (aws-access-token).
//   - azure-storage-account-key: AccountKey=<88 characters of base64> in
//     an Azure storage connection string; gitleaks' azure rule is for AD
//     client secrets only.
func ownRules() []*Rule {
	return []*Rule{
		{
			ID:          "env-assignment",
			Description: ".env-style assignment of a secret",
			Regex: regexp.MustCompile(`\b[A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH)[A-Z0-9_]*=` +
				`(?:"([^"\r\n]{6,})"|'([^'\r\n]{6,})'|([^\s"'#;&|]{6,}))`),
			Keywords:   []string{"pass", "pwd", "secret", "token", "key", "credential", "auth"},
			Allowlists: []*Allowlist{placeholders()},
		},
		{
			ID:          "aws-secret-access-key",
			Description: "AWS secret access key",
			Regex:       regexp.MustCompile(`(?i)aws_?secret_?access_?key[\w."']{0,3}[ \t]*(?::|=|=>)[ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`),
			SecretGroup: 1,
			Entropy:     3,
			Keywords:    []string{"secret_access_key", "secretaccesskey"},
		},
		{
			ID:          "azure-storage-account-key",
			Description: "Azure storage account key",
			Regex:       regexp.MustCompile(`(?i)AccountKey=([A-Za-z0-9+/]{86}==)`),
			SecretGroup: 1,
			Entropy:     3,
			Keywords:    []string{"accountkey="},
		},
	}
}

// placeholders leaves values that are obviously not secrets: a word in angle
// brackets or a template, "changeme", "your_…", "example", and what redact
// itself wrote.
func placeholders() *Allowlist {
	words := []string{"your_", "your-", "example", "redacted"}
	return &Allowlist{
		Regexes: regexp.MustCompile(`^(?:<[^>]*>|\{\{.*\}\}|\[[^\]]*\])$|` +
			`^(?i:changeme|change_me|password|secret|redacted|none|undefined|placeholder)$|` +
			`^\[REDACTED:[a-z0-9-]+\]`),
		StopWords: words,
		stopTrie:  trieOf(words),
	}
}

func trieOf(words []string) *ahocorasick.Trie {
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	return ahocorasick.NewTrieBuilder().AddStrings(lower).Build()
}

// gitleaksTrailer is how several gitleaks rules end a key: a blank, a
// quote, a backtick, ";", an escaped newline, or the end of the text.
const gitleaksTrailer = `(?:[\x60'"\s;]|\\[nr]|$)`

// proseTrailer also accepts the punctuation that follows a key in prose:
// "my key is sk-ant-…, use it".
const proseTrailer = `(?:[\x60'"\s;,.:!?)\]}>]|\\[nr]|$)`

// proseRules are the gitleaks rules whose keys are self-delimiting (a fixed
// prefix, a fixed length or a checksum-like suffix) but whose pattern wants
// gitleaksTrailer after them, so that a key followed by a comma or a full
// stop in a prompt is missed.
var proseRules = map[string]bool{
	"anthropic-api-key": true, "anthropic-admin-api-key": true, "openai-api-key": true, "gcp-api-key": true, "jwt": true,
}

// proseVariant returns, for one of proseRules, the same rule (same id,
// keywords, entropy, allowlists) whose pattern ends with proseTrailer
// instead; nil for any other rule, or when gitleaks changed the pattern's
// end.
func proseVariant(r *Rule) *Rule {
	src := r.Regex.String()
	if !proseRules[r.ID] || !strings.HasSuffix(src, gitleaksTrailer) {
		return nil
	}
	re, err := regexp.Compile(strings.TrimSuffix(src, gitleaksTrailer) + proseTrailer)
	if err != nil {
		return nil
	}
	v := *r
	v.Regex = re
	return &v
}
