package redact

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessctl/sessctl/internal/fakesecret"
	"github.com/sessctl/sessctl/pkg/ojson"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// gitleaks is linked into this test only: the binary carries the copy of
// its rules, not its packages (see the package comment).

// TestRulesAreGitleaks: gitleaks.toml is the file the gitleaks version in
// go.mod embeds, byte for byte (scripts/update-gitleaks-rules.sh copies it).
func TestRulesAreGitleaks(t *testing.T) {
	if GitleaksRules != config.DefaultConfig {
		t.Fatalf("pkg/redact/gitleaks.toml differs from gitleaks %s's config/gitleaks.toml: run scripts/update-gitleaks-rules.sh", GitleaksVersion)
	}
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	// every gitleaks rule with a regexp and no path is ours too
	n := strings.Count(GitleaksRules, "\n[[rules]]")
	got := 0
	for _, r := range d.Rules() {
		if strings.Contains(GitleaksRules, "\nid = \""+r.ID+"\"\n") {
			got++
		}
	}
	if got < n-6 || got > n {
		t.Errorf("%d of gitleaks' %d rules loaded", got, n)
	}
}

// corpus is the text the differential test compares on: the fake secrets,
// the texts without secrets, and the strings of the real sample sessions.
func corpus(t *testing.T, limit int) []string {
	var texts []string
	for _, c := range append(fakesecret.Cases(), fakesecret.ProseCases()...) {
		texts = append(texts, c.Line())
	}
	texts = append(texts, notSecrets...)
	root := "../../../shared/samples"
	if _, err := os.Stat(root); err != nil {
		t.Logf("no %s: the differential test runs on the hand-written texts only", root)
		return texts
	}
	size := 0
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".jsonl") || size > limit {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			v, err := ojson.Parse(sc.Bytes())
			if err != nil {
				continue
			}
			walk(v, "", func(s *ojson.Value, _ string, _ func(*ojson.Value)) {
				if len(s.Text()) > 20 && size < limit {
					texts = append(texts, s.Text())
					size += len(s.Text())
				}
			})
		}
		return nil
	})
	return texts
}

// TestSameAsGitleaks: on the corpus, every secret gitleaks' own detector
// finds is inside a secret this package finds, and every secret this
// package finds with one of gitleaks' rules, gitleaks finds with that rule.
func TestSameAsGitleaks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: gitleaks' detector is slow")
	}
	d, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	gl, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{}
	for _, r := range ownRules() {
		own[r.ID] = true
	}
	limit := 768 << 10
	if raceEnabled {
		limit = 128 << 10
	}
	texts := corpus(t, limit)
	compared := 0
	for _, text := range texts {
		theirs := gl.DetectString(text)
		ours := d.Find(text)
		for _, f := range theirs {
			covered := false
			for _, o := range ours {
				if strings.Contains(text[o.Start:o.End], f.Secret) {
					covered = true
				}
			}
			if !covered {
				t.Errorf("gitleaks finds %s %q that is not redacted in %q", f.RuleID, Mask(f.Secret), cut(text))
			}
			compared++
		}
		for _, o := range ours {
			if own[o.Rule] {
				continue
			}
			found := false
			for _, f := range theirs {
				if f.RuleID == o.Rule && strings.Contains(text[o.Start:o.End], f.Secret) {
					found = true
				}
			}
			// proseVariant's: gitleaks' pattern, punctuation after the key
			if !found && o.End < len(text) && strings.IndexByte(",.:!?)]}>", text[o.End]) >= 0 {
				found = true
			}
			if !found {
				t.Errorf("%s finds %q that gitleaks does not find in %q", o.Rule, Mask(text[o.Start:o.End]), cut(text))
			}
		}
	}
	t.Logf("%d texts, %d gitleaks findings compared", len(texts), compared)
	if compared < len(fakesecret.Cases())-4 {
		t.Errorf("only %d gitleaks findings: the corpus lost its secrets", compared)
	}
}

func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
