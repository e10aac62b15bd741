package compact

import (
	"strconv"
	"unicode/utf8"

	"github.com/sessctl/sessctl/pkg/tokens"
)

// truncator shortens texts longer than max tokens to a head and a tail of
// about max/2 tokens each, with "…N tokens truncated…" between them (the
// marker Codex uses for its own truncation).
type truncator struct {
	count *tokens.Counter
	max   int
}

// shorten returns s shortened, and whether it was.
func (t *truncator) shorten(s string) (string, bool) {
	// a token is at least one byte: a short text cannot be over the limit
	if t.max <= 0 || len(s) <= t.max {
		return s, false
	}
	total := t.count.Count(s)
	if total <= t.max {
		return s, false
	}
	half := t.max / 2
	head := prefixWithin(t.count, s, half)
	tail := suffixWithin(t.count, s[len(head):], t.max-half)
	cut := total - t.count.Count(head) - t.count.Count(tail)
	if cut < 1 {
		cut = 1
	}
	return head + "…" + strconv.Itoa(cut) + " tokens truncated…" + tail, true
}

// prefixWithin returns the longest prefix of s (cut at a rune boundary)
// that counts at most n tokens.
func prefixWithin(c *tokens.Counter, s string, n int) string {
	hi := min(len(s), n*32+4)
	lo := 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		m := mid
		for m > 0 && m < len(s) && !utf8.RuneStart(s[m]) {
			m--
		}
		if c.Count(s[:m]) <= n {
			if m <= lo {
				break
			}
			lo = m
		} else {
			hi = mid - 1
		}
	}
	for lo > 0 && lo < len(s) && !utf8.RuneStart(s[lo]) {
		lo--
	}
	return s[:lo]
}

// suffixWithin returns the longest suffix of s (starting at a rune
// boundary) that counts at most n tokens.
func suffixWithin(c *tokens.Counter, s string, n int) string {
	hi := min(len(s), n*32+4) // length of the suffix
	lo := 0
	for lo < hi {
		mid := (lo + hi + 1) / 2
		start := len(s) - mid
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
		m := len(s) - start
		if c.Count(s[start:]) <= n {
			if m <= lo {
				break
			}
			lo = m
		} else {
			hi = mid - 1
		}
	}
	start := len(s) - lo
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}
