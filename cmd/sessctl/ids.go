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
//
// Most ids share their first 8 characters with no other id; such an id's
// prefix is session.ShortID's, whatever the other ids, so only the ids of
// a shared 8-character start are sorted and compared (a store of 100,000
// sessions sorted them all: a tenth of a second).
func shortIDs(ids []string) func(string) string {
	head := func(id string) string { return id[:min(8, len(id))] }
	only := make(map[string]int, len(ids)) // a start -> the one id with it, -1 when several
	for i, id := range ids {
		if _, ok := only[head(id)]; ok {
			only[head(id)] = -1
		} else {
			only[head(id)] = i
		}
	}
	var shared []string
	for _, id := range ids {
		if only[head(id)] < 0 {
			shared = append(shared, id)
		}
	}
	sharedShort := shortIDsSorted(shared)
	return func(id string) string {
		if i, ok := only[head(id)]; ok && i >= 0 && ids[i] == id {
			return withoutDashEnd(id, len(session.ShortID(id)))
		}
		if s, ok := sharedShort[id]; ok {
			return s
		}
		return session.ShortID(id)
	}
}

// shortIDsSorted is shortIDs of ids by sorting them: each id's prefix is
// one longer than what it shares with the ids before and after it.
func shortIDsSorted(ids []string) map[string]string {
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
		short[id] = withoutDashEnd(id, n)
	}
	return short
}

// withoutDashEnd is id's first n characters, one more when they end in a
// dash.
func withoutDashEnd(id string, n int) string {
	if n < len(id) && id[n-1] == '-' {
		n++
	}
	return id[:min(n, len(id))]
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
