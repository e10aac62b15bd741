// Package redact finds secrets in session text and replaces them.
//
// What counts as a secret is gitleaks' default rule set: gitleaks.toml, a
// copy of the file gitleaks v8.30.1 embeds in its config package (about 220
// rules with their keywords, entropy thresholds and allowlists; MIT,
// GITLEAKS-LICENSE), plus the few rules of our own in ownRules for what
// gitleaks leaves out. A test holds the copy to the file of the gitleaks
// version go.mod requires, and holds this package's findings to those of
// gitleaks' own detector; scripts/update-gitleaks-rules.sh refreshes it.
//
// The scanning loop is ours but follows gitleaks' detectRule step by step
// (keyword prefilter, regexp, secret group, entropy, allowlists). Linking
// gitleaks' config or detect package instead would cost 5 to 10 MB of
// binary and a few milliseconds of every sessctl start-up (viper, zerolog,
// archive readers), and its detector scans about 0.5 MB/s of session text
// (docs/redact.md has the measurements).
//
// A session is redacted one JSON string at a time (File): only string values
// change, each line keeps its structure, its keys in order and its ids, and
// a line without a secret is copied byte for byte.
package redact

import (
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/BurntSushi/toml"
)

// GitleaksVersion is the gitleaks release gitleaks.toml was copied from.
const GitleaksVersion = "v8.30.1"

// GitleaksRules is gitleaks' default configuration (gitleaks.toml).
//
//go:embed gitleaks.toml
var GitleaksRules string

// Finding is one secret in a text.
type Finding struct {
	Rule  string // the rule's id (gitleaks' id, or one of ownRules)
	Start int    // byte offsets of the secret in the text
	End   int
}

// Detector finds secrets. It is safe for concurrent use.
type Detector struct {
	rules  []*Rule
	global []*Allowlist
	trie   *ahocorasick.Trie
	always []*Rule // rules without keywords
	byKw   map[string][]*Rule
}

// Rule is one detection rule, as gitleaks defines it.
type Rule struct {
	ID          string
	Description string
	Regex       *regexp.Regexp
	// SecretGroup is the regexp group that holds the secret; 0: the first
	// non-empty group, or the whole match.
	SecretGroup int
	// Entropy is the Shannon entropy the secret must exceed (0: none).
	Entropy    float64
	Keywords   []string // lowercase; the rule runs only on text holding one
	Allowlists []*Allowlist
	prio       int // lower first: specific rules before the generic ones
	// window, when set, names the parts of a text the rule can match in
	// (window.go).
	window func(s string, kws []string) ([][2]int, bool)
}

// Allowlist is a gitleaks allowlist without its commit and path parts (a
// session's text has neither): a finding is allowed when its target matches
// one of Regexes or its secret holds one of StopWords; with And, when every
// check it has passes (one on commits or paths never does).
type Allowlist struct {
	And bool
	// Target is what the regexes are tried on: "" the secret, "match" the
	// rule's whole match, "line" the line.
	Target         string
	Regexes        *regexp.Regexp // gitleaks' joinRegexOr of the list
	StopWords      []string       // lowercase
	stopTrie       *ahocorasick.Trie
	pathsOrCommits bool
}

var (
	defOnce sync.Once
	def     *Detector
	defErr  error
)

// Default returns the detector with gitleaks' default rules and ours. The
// rules are parsed and compiled once, on first use (about 0.1 s), never at
// start-up.
func Default() (*Detector, error) {
	defOnce.Do(func() { def, defErr = load() })
	return def, defErr
}

// tomlConfig is the part of gitleaks' configuration format the default
// rules use.
type tomlConfig struct {
	Allowlist  *tomlAllowlist
	Allowlists []*tomlAllowlist
	Rules      []struct {
		ID          string
		Description string
		Regex       string
		Path        string
		SecretGroup int
		Entropy     float64
		Keywords    []string
		Allowlist   *tomlAllowlist
		Allowlists  []*tomlAllowlist
		Required    []toml.Primitive
	}
}

type tomlAllowlist struct {
	Description string
	Condition   string
	RegexTarget string
	Regexes     []string
	StopWords   []string
	Paths       []string
	Commits     []string
	TargetRules []string
}

func load() (*Detector, error) {
	var c tomlConfig
	if _, err := toml.Decode(GitleaksRules, &c); err != nil {
		return nil, fmt.Errorf("gitleaks.toml: %w", err)
	}
	d := &Detector{byKw: map[string][]*Rule{}}
	var global []*tomlAllowlist
	if c.Allowlist != nil {
		global = append(global, c.Allowlist)
	}
	global = append(global, c.Allowlists...)
	perRule := map[string][]*Allowlist{}
	for _, ta := range global {
		a, err := newAllowlist(ta)
		if err != nil {
			return nil, fmt.Errorf("gitleaks.toml: global allowlist: %w", err)
		}
		if len(ta.TargetRules) == 0 {
			d.global = append(d.global, a)
		}
		for _, id := range ta.TargetRules {
			perRule[id] = append(perRule[id], a)
		}
	}
	var prose []*Rule // proseVariant's rules, tried after all of gitleaks'
	for _, tr := range c.Rules {
		if tr.Regex == "" || tr.Path != "" || len(tr.Required) > 0 {
			// a rule on file paths (pkcs12-file), or on text in files of
			// one kind only (*.tf, *.php, ...): session text has no path.
			// Composite rules are not in the default set.
			continue
		}
		re, err := regexp.Compile(tr.Regex)
		if err != nil {
			return nil, fmt.Errorf("gitleaks.toml: rule %s: %w", tr.ID, err)
		}
		r := &Rule{ID: tr.ID, Description: tr.Description, Regex: re, SecretGroup: tr.SecretGroup, Entropy: tr.Entropy}
		for _, k := range tr.Keywords {
			r.Keywords = append(r.Keywords, strings.ToLower(k))
		}
		tas := tr.Allowlists
		if tr.Allowlist != nil {
			tas = append(tas, tr.Allowlist)
		}
		for _, ta := range tas {
			a, err := newAllowlist(ta)
			if err != nil {
				return nil, fmt.Errorf("gitleaks.toml: rule %s: %w", tr.ID, err)
			}
			r.Allowlists = append(r.Allowlists, a)
		}
		r.Allowlists = append(r.Allowlists, perRule[tr.ID]...)
		if pr := proseVariant(r); pr != nil {
			prose = append(prose, pr)
		}
		if tr.ID == "generic-api-key" {
			r.prio = 1
			if tr.Regex == genericAPIKeyRegex {
				r.window = genericWindows
			}
		}
		d.add(r)
	}
	for _, r := range prose {
		d.add(r)
	}
	for _, r := range ownRules() {
		if r.ID == "env-assignment" {
			r.prio = 2
			r.window = envWindows
		}
		d.add(r)
	}
	sort.SliceStable(d.rules, func(i, j int) bool { return d.rules[i].prio < d.rules[j].prio })
	var kws []string
	for k := range d.byKw {
		kws = append(kws, k)
	}
	sort.Strings(kws)
	d.trie = ahocorasick.NewTrieBuilder().AddStrings(kws).Build()
	return d, nil
}

// newAllowlist is gitleaks' parseAllowlist and Allowlist.Validate.
func newAllowlist(ta *tomlAllowlist) (*Allowlist, error) {
	a := &Allowlist{Target: ta.RegexTarget, pathsOrCommits: len(ta.Paths) > 0 || len(ta.Commits) > 0}
	switch strings.ToUpper(ta.Condition) {
	case "AND", "&&":
		a.And = true
	case "", "OR", "||":
	default:
		return nil, fmt.Errorf("unknown allowlist condition %q", ta.Condition)
	}
	switch ta.RegexTarget {
	case "", "secret", "match", "line":
	default:
		return nil, fmt.Errorf("unknown allowlist regexTarget %q", ta.RegexTarget)
	}
	if len(ta.Regexes) > 0 {
		var parts []string
		for _, s := range ta.Regexes {
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, err
			}
			parts = append(parts, re.String())
		}
		// joined as gitleaks joins them: a flag group inside one
		// alternative reaches into the next ones, there as here
		re, err := regexp.Compile("(?:" + strings.Join(parts, "|") + ")")
		if err != nil {
			return nil, err
		}
		a.Regexes = re
	}
	seen := map[string]bool{}
	for _, w := range ta.StopWords {
		w = strings.ToLower(w)
		if !seen[w] {
			seen[w] = true
			a.StopWords = append(a.StopWords, w)
		}
	}
	if len(a.StopWords) > 0 {
		a.stopTrie = ahocorasick.NewTrieBuilder().AddStrings(a.StopWords).Build()
	}
	return a, nil
}

func (d *Detector) add(r *Rule) {
	d.rules = append(d.rules, r)
	if len(r.Keywords) == 0 {
		d.always = append(d.always, r)
		return
	}
	for _, k := range r.Keywords {
		d.byKw[k] = append(d.byKw[k], r)
	}
}

// Rules are the detector's rules, in the order they are tried.
func (d *Detector) Rules() []*Rule { return d.rules }

// candidates are the rules whose keywords occur in s (lowercased), in
// priority order, and whether there are any.
func (d *Detector) candidates(lower string) []*Rule {
	seen := map[*Rule]bool{}
	var out []*Rule
	for _, r := range d.always {
		seen[r] = true
		out = append(out, r)
	}
	for _, m := range d.trie.MatchString(lower) {
		for _, r := range d.byKw[m.MatchString()] {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].prio < out[j].prio })
	return out
}

// Maybe reports whether s could hold a secret: a keyword of some rule occurs
// in it (every rule that can match text has keywords). A line of JSON for
// which Maybe is false holds no secret in any of its strings, as long as the
// keywords are not escaped in it (the clients escape no ASCII letter).
func (d *Detector) Maybe(s string) bool {
	if len(d.always) > 0 {
		return true
	}
	return len(d.trie.MatchString(strings.ToLower(s))) > 0
}

// Find returns the secrets in s, in order, none overlapping: where two
// rules' secrets overlap they are one finding, named by the more specific
// rule (gitleaks' own rules and ours before gitleaks' generic-api-key, and
// that before our env-assignment).
func (d *Detector) Find(s string) []Finding {
	if s == "" {
		return nil
	}
	rules := d.candidates(strings.ToLower(s))
	var out []Finding
	for _, r := range rules {
		for _, f := range d.match(r, s) {
			out = merge(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// merge adds f to fs, joining it with every finding it overlaps (the
// earlier finding's rule names the whole).
func merge(fs []Finding, f Finding) []Finding {
	for i := 0; i < len(fs); i++ {
		g := fs[i]
		if f.Start < g.End && g.Start < f.End {
			g.Start, g.End = min(g.Start, f.Start), max(g.End, f.End)
			fs = append(fs[:i], fs[i+1:]...)
			return merge(fs, g)
		}
	}
	return append(fs, f)
}

// match is gitleaks' detectRule for one text: every match of the rule's
// regexp, its secret group (or first non-empty group), the entropy
// threshold, the global and the rule's allowlists, and the "gitleaks:allow"
// marker on the line.
func (d *Detector) match(r *Rule, s string) []Finding {
	var out []Finding
	for _, m := range r.matches(s) {
		mStart, mEnd := m[0], m[1]
		// gitleaks trims newlines off the match (issue 1352)
		for mEnd > mStart && s[mEnd-1] == '\n' {
			mEnd--
		}
		for mStart < mEnd && s[mStart] == '\n' {
			mStart++
		}
		start, end := mStart, mEnd
		if len(m) >= 4 {
			if r.SecretGroup > 0 {
				if 2*r.SecretGroup+1 >= len(m) || m[2*r.SecretGroup] < 0 {
					continue
				}
				start, end = m[2*r.SecretGroup], m[2*r.SecretGroup+1]
			} else {
				for g := 1; 2*g+1 < len(m); g++ {
					if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
						start, end = m[2*g], m[2*g+1]
						break
					}
				}
			}
		}
		if start >= end {
			continue
		}
		secret := s[start:end]
		if r.Entropy != 0 && entropy(secret) <= r.Entropy {
			continue
		}
		line := lineAround(s, mStart, mEnd)
		if strings.Contains(line, "gitleaks:allow") {
			continue
		}
		match := s[mStart:mEnd]
		if allowed(d.global, secret, match, line) || allowed(r.Allowlists, secret, match, line) {
			continue
		}
		out = append(out, Finding{Rule: r.ID, Start: start, End: end})
	}
	return out
}

// allowed is gitleaks' checkFindingAllowed for text without a commit or a
// path: an AND allowlist that needs a commit or a path to match cannot
// allow.
func allowed(lists []*Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.Target {
		case "match":
			target = match
		case "line":
			target = line
		}
		regexOK := a.Regexes != nil && target != "" && a.Regexes.MatchString(target)
		stopOK := a.stopTrie != nil && secret != "" && a.stopTrie.MatchFirstString(strings.ToLower(secret)) != nil
		if a.And {
			if a.pathsOrCommits {
				continue
			}
			ok := a.Regexes != nil || a.stopTrie != nil
			if a.Regexes != nil && !regexOK {
				ok = false
			}
			if a.stopTrie != nil && !stopOK {
				ok = false
			}
			if ok {
				return true
			}
			continue
		}
		if regexOK || stopOK {
			return true
		}
	}
	return false
}

// lineAround is the line of s that holds s[start:end] (all the lines it
// spans).
func lineAround(s string, start, end int) string {
	i := strings.LastIndexByte(s[:start], '\n') + 1
	j := strings.IndexByte(s[end:], '\n')
	if j < 0 {
		return s[i:]
	}
	return s[i : end+j]
}

// entropy is gitleaks' shannonEntropy: bits per character over the runes.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	inv := 1 / float64(len(s))
	e := 0.0
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// Placeholder is what a secret found by rule becomes.
func Placeholder(rule string) string { return "[REDACTED:" + rule + "]" }

// Redact returns s with every secret replaced by its Placeholder, and the
// findings (offsets in s).
func (d *Detector) Redact(s string) (string, []Finding) {
	fs := d.Find(s)
	if len(fs) == 0 {
		return s, nil
	}
	return Replace(s, fs, func(f Finding) string { return Placeholder(f.Rule) }), fs
}

// Replace returns s with each finding replaced by with(f). fs must be in
// order and not overlap (as Find returns them).
func Replace(s string, fs []Finding, with func(Finding) string) string {
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, f := range fs {
		b.WriteString(s[last:f.Start])
		b.WriteString(with(f))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// Mask shows the start of a secret and hides the rest: at most 4
// characters, and never more than a quarter of it, then "…" and its length.
func Mask(secret string) string {
	n := utf8.RuneCountInString(secret)
	keep := min(4, n/4)
	r := []rune(secret)
	return string(r[:keep]) + "…(" + itoa(n) + " chars)"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// previewSide is how many characters of context a preview shows on each
// side of the secret.
const previewSide = 24

// Preview is the finding f of s in context: up to previewSide characters on
// each side, every secret in that window masked (never shown whole).
func Preview(s string, fs []Finding, f Finding) string {
	masked := Replace(s, fs, func(g Finding) string { return "\x00" + Mask(s[g.Start:g.End]) + "\x01" })
	// find f's masked span: the k-th \x00
	k := 0
	for _, g := range fs {
		if g.Start < f.Start {
			k++
		}
	}
	at := 0
	for i := 0; i <= k; i++ {
		j := strings.IndexByte(masked[at:], 0)
		if j < 0 {
			break
		}
		at += j + 1
	}
	end := at + strings.IndexByte(masked[at:], 1)
	before := []rune(masked[:at-1])
	after := []rune(masked[end+1:])
	pre, post := "", ""
	if len(before) > previewSide {
		before, pre = before[len(before)-previewSide:], "…"
	}
	if len(after) > previewSide {
		after, post = after[:previewSide], "…"
	}
	out := pre + string(before) + masked[at:end] + string(after) + post
	return strings.NewReplacer("\x00", "", "\x01", "", "\n", "⏎", "\r", "", "\t", " ").Replace(out)
}
