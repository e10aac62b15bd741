package redact

import "strings"

// Go's regexp runs a long pattern over a long text with its NFA, slowly:
// gitleaks' generic-api-key alone scanned session text at about 1 MB/s, and
// it runs on most strings (its keywords are words like "key" and "token").
// Both it and our env-assignment can only match around one of their
// keywords, within a reach the pattern bounds, so they are run on those
// windows of the text only (where the backtracker is fast). A window
// function returns the windows in order, disjoint, each holding every
// match that can start in it whole, so the matches are the same as over
// the whole text (TestWindowsFindTheSameMatches); ok false means: scan the
// whole text.

// genericAPIKeyRegex is the generic-api-key pattern genericWindows was
// worked out for; another pattern (a newer gitleaks) is scanned whole.
const genericAPIKeyRegex = `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`

// foldRisk reports text holding a character that (?i) matches to an ASCII
// letter of a keyword while the ASCII search does not: the Kelvin sign
// (k) and the long s (s). Such text is scanned whole.
func foldRisk(s string) bool {
	return strings.Contains(s, "\u212a") || strings.Contains(s, "\u017f")
}

// asciiLower lowercases A-Z only, so offsets stay those of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// hits are the offsets of every occurrence of every keyword in lower.
func hits(lower string, kws []string) [][2]int {
	var out [][2]int
	for _, k := range kws {
		for i := 0; ; {
			j := strings.Index(lower[i:], k)
			if j < 0 {
				break
			}
			out = append(out, [2]int{i + j, i + j + len(k)})
			i += j + 1
		}
	}
	return out
}

// spans sorts and joins overlapping or touching windows.
func spans(ws [][2]int) [][2]int {
	if len(ws) == 0 {
		return nil
	}
	sortSpans(ws)
	out := [][2]int{ws[0]}
	for _, w := range ws[1:] {
		last := &out[len(out)-1]
		if w[0] <= last[1] {
			last[1] = max(last[1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

func sortSpans(ws [][2]int) {
	// insertion sort: the lists are short
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && ws[j][0] < ws[j-1][0]; j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

func isWord(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// genericWindows: a match starts at most 50 characters before its keyword
// ([\w.-]{0,50}?) and its value starts at most 32 after it (20 of name, 3
// quotes, a 4-character operator, 5 quotes or blanks); the value runs over
// [\w.=+/-] (a superset of both its forms) and is followed by at most 2
// characters (\\n). The window ends 2 characters after that run, so "$"
// cannot match at a window end that is not the text's. A keyword with no
// operator character (=>:|?,) in the 23 characters after it (20 of name,
// 3 quotes) cannot be part of a match and opens no window: that keeps a
// "key" inside a long base64 run from opening a window over all of it.
func genericWindows(s string, kws []string) ([][2]int, bool) {
	if foldRisk(s) {
		return nil, false
	}
	var ws [][2]int
	for _, h := range hits(asciiLower(s), kws) {
		if !strings.ContainsAny(s[h[1]:min(len(s), h[1]+24)], "=>:|?,") {
			continue
		}
		lo := max(0, h[0]-50)
		hi := min(len(s), h[1]+32)
		for hi < len(s) && (isWord(s[hi]) || strings.IndexByte(".=+/-", s[hi]) >= 0) {
			hi++
		}
		ws = append(ws, [2]int{lo, min(len(s), hi+2)})
	}
	return spans(ws), true
}

// envWindows: an env-assignment match is a run of word characters that
// holds the keyword (its start is the run's start: \b), then "=", then a
// value that ends at the latest at the end of the line.
func envWindows(s string, kws []string) ([][2]int, bool) {
	if foldRisk(s) {
		return nil, false
	}
	var ws [][2]int
	for _, h := range hits(asciiLower(s), kws) {
		lo, e := h[0], h[1]
		for lo > 0 && isWord(s[lo-1]) {
			lo--
		}
		for e < len(s) && isWord(s[e]) {
			e++
		}
		if e >= len(s) || s[e] != '=' {
			continue
		}
		hi := e + 1
		for hi < len(s) && s[hi] != '\n' && s[hi] != '\r' {
			hi++
		}
		ws = append(ws, [2]int{lo, hi})
	}
	return spans(ws), true
}

// matches are r's regexp matches in s, as FindAllStringSubmatchIndex gives
// them, found in r's windows when it has them.
func (r *Rule) matches(s string) [][]int {
	if r.window != nil {
		if ws, ok := r.window(s, r.Keywords); ok {
			var out [][]int
			for _, w := range ws {
				for _, m := range r.Regex.FindAllStringSubmatchIndex(s[w[0]:w[1]], -1) {
					for i := range m {
						if m[i] >= 0 {
							m[i] += w[0]
						}
					}
					out = append(out, m)
				}
			}
			return out
		}
	}
	return r.Regex.FindAllStringSubmatchIndex(s, -1)
}
