package main

import (
	"sort"

	"github.com/sessctl/sessctl/pkg/session"
)

// shortIDs returns a function that shortens each of ids to the shortest
// prefix no other id in ids starts with, and never shorter than
// session.ShortID would (8 characters of a UUID, 12 of other ids). A Codex id
// is a UUIDv7 whose first characters are a timestamp: sessions started within
// a minute share their first 8, so a fixed-length prefix showed five rows of
// 01a20136. A prefix never ends in a dash (one more character is taken),
// and an id that is not unique at all is shown whole. Each prefix shown
// resolves to its session (session.Find matches prefixes) as long as the
// search covers the same sessions.
func shortIDs(ids []string) func(string) string {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	short := make(map[string]string, len(sorted))
	for i, id := range sorted {
		n := len(session.ShortID(id))
		if i > 0 && sorted[i-1] != id {
			n = max(n, commonPrefix(sorted[i-1], id)+1)
		}
		if i+1 < len(sorted) && sorted[i+1] != id {
			n = max(n, commonPrefix(sorted[i+1], id)+1)
		}
		if i > 0 && sorted[i-1] == id || i+1 < len(sorted) && sorted[i+1] == id {
			n = len(id) // the same id twice: no prefix tells them apart
		}
		if n < len(id) && id[n-1] == '-' {
			n++
		}
		short[id] = id[:min(n, len(id))]
	}
	return func(id string) string {
		if s, ok := short[id]; ok {
			return s
		}
		return session.ShortID(id)
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
