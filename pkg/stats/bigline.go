package stats

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Huge lines. A decoder copies a line's long strings several times over
// (the message, its content, the text), and a text given whole to the
// tokenizer costs it several times its size again, so a 20 MB line used to
// cost stats over a gigabyte. Before a line longer than bigLine is decoded,
// every string value in it longer than bigString is cut to its first
// keepBytes, which the decoders still see (the start of a text is what they
// test: injected-context prefixes, command echoes) and previews show; the
// rest is counted apart, a chunk at a time, and its count is added back
// where the marker left in its place turns up in the decoded texts. Memory
// then holds the line once, plus a few chunks.
const (
	bigLine   = 1 << 20
	bigString = 64 << 10
	keepBytes = 1 << 10
	// countChunk is how much of a long string is decoded and counted at a
	// time, and countBatch how much is counted at once (on all cores).
	countChunk = 256 << 10
	countBatch = 4 * countChunk
)

// The marker of the n-th cut string of a line: private-use code points,
// which JSON decoding keeps as they are, around n.
const (
	markOpen  = "\ue000"
	markClose = "\ue001"
)

// bigCount is what the cut part of a long string adds to the estimates.
type bigCount struct {
	tokens, pending int64
}

// shorten returns line with every string value longer than bigString cut
// to its first keepBytes (at an escape and UTF-8 boundary), followed, when
// mark is set, by the marker of its index; cut is called with the raw
// JSON of each part cut away, in order. line must be valid JSON.
func shorten(line []byte, mark bool, cut func(rest []byte)) []byte {
	var out []byte
	done, n := 0, 0 // bytes of line already in out; strings cut
	for i := 0; i < len(line); {
		q := bytes.IndexByte(line[i:], '"')
		if q < 0 {
			break
		}
		start := i + q + 1
		end := stringEnd(line, start)
		if end < 0 {
			break
		}
		i = end + 1
		if end-start <= bigString || isKey(line, i) {
			continue
		}
		keep := start + safeCut(line[start:end], 0, keepBytes)
		if out == nil {
			out = make([]byte, 0, min(len(line), 64<<10))
		}
		out = append(out, line[done:keep]...)
		if mark {
			out = append(out, markOpen+strconv.Itoa(n)+markClose...)
		}
		cut(line[keep:end])
		done, n = end, n+1
	}
	if out == nil {
		return line
	}
	return append(out, line[done:]...)
}

// stringEnd returns the index of the quote that ends the JSON string whose
// body starts at start, or -1.
func stringEnd(b []byte, start int) int {
	for j := start; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		end := j + k
		n := 0 // backslashes before the quote
		for p := end - 1; p >= start && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return end
		}
		j = end + 1
	}
}

// isKey reports whether the string that ended just before i is an object key.
func isKey(b []byte, i int) bool {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b[i] == ':'
	}
	return false
}

// safeCut returns the largest position at or before want (and after from,
// itself such a position) in the JSON string body b that splits no escape
// sequence, surrogate pair or UTF-8 sequence.
func safeCut(b []byte, from, want int) int {
	if want >= len(b) {
		return len(b)
	}
	for i := from; ; {
		k := bytes.IndexByte(b[i:want], '\\')
		if k < 0 {
			break
		}
		e := i + k
		end := e + 2
		if e+1 < len(b) && b[e+1] == 'u' {
			end = e + 6
			// \uD800–\uDBFF begins a surrogate pair: keep the pair whole
			if end+1 < len(b) && b[end] == '\\' && b[end+1] == 'u' && (b[e+2] == 'd' || b[e+2] == 'D') &&
				e+3 < len(b) && strings.IndexByte("89abAB", b[e+3]) >= 0 {
				end += 6
			}
		}
		if end > want {
			want = e
			break
		}
		i = end
	}
	for want > from && b[want]&0xC0 == 0x80 {
		want--
	}
	return want
}

// chunks calls fn with the decoded text of the raw JSON string body b,
// countChunk bytes at a time. A chunk that does not decode (raw control
// characters) is given as it is.
func chunks(b []byte, fn func(string)) {
	var q []byte
	for from := 0; from < len(b); {
		to := safeCut(b, from, from+countChunk)
		if to <= from {
			to = min(len(b), from+countChunk) // no boundary found: cut anyway
		}
		q = append(append(append(q[:0], '"'), b[from:to]...), '"')
		var s string
		if json.Unmarshal(q, &s) != nil {
			s = string(b[from:to])
		}
		fn(s)
		from = to
	}
}

// expand removes the markers from a text of a line whose strings were cut,
// and returns what the cut parts they stand for add.
func expand(text string, bigs []bigCount) (string, bigCount) {
	var add bigCount
	if len(bigs) == 0 || !strings.Contains(text, markOpen) {
		return text, add
	}
	var b strings.Builder
	for {
		i := strings.Index(text, markOpen)
		if i < 0 {
			break
		}
		j := strings.Index(text[i:], markClose)
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(text[i+len(markOpen) : i+j])
		b.WriteString(text[:i])
		if err == nil && n >= 0 && n < len(bigs) {
			add.tokens += bigs[n].tokens
			add.pending += bigs[n].pending
		} else {
			b.WriteString(text[i : i+j+len(markClose)]) // not ours: kept
		}
		text = text[i+j+len(markClose):]
	}
	b.WriteString(text)
	return b.String(), add
}
