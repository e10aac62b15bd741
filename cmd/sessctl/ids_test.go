package main

import (
	"math/rand/v2"
	"testing"
)

func TestShortIDs(t *testing.T) {
	ids := []string{
		// five Codex rollouts started within a minute (the real samples)
		"01a20131-d660-7d01-9c2a-095cf6a93b50",
		"01a20136-17a3-7870-8d59-1ebca8f88e68",
		"01a20136-c9aa-7652-9079-994813191fca",
		"01a20136-c9ab-7000-8000-000000000001",
		"01a20136-0d2e-7a31-8c2a-111111111111",
		"5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f",
		"N-jKgMMEsFVxfvZ5q6lVM",
		"dup", "dup",
	}
	short := shortIDs(ids)
	want := map[string]string{
		"01a20131-d660-7d01-9c2a-095cf6a93b50": "01a20131",
		"01a20136-17a3-7870-8d59-1ebca8f88e68": "01a20136-1",
		"01a20136-c9aa-7652-9079-994813191fca": "01a20136-c9aa",
		"01a20136-c9ab-7000-8000-000000000001": "01a20136-c9ab",
		"01a20136-0d2e-7a31-8c2a-111111111111": "01a20136-0",
		"5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f": "5b0c1f4e",
		"N-jKgMMEsFVxfvZ5q6lVM":                "N-jKgMMEsFVx",
		"dup":                                  "dup",
		"not-listed-0000-4000":                 "not-listed-0",
	}
	for id, w := range want {
		if got := short(id); got != w {
			t.Errorf("short(%q) = %q, want %q", id, got, w)
		}
	}
}

// shortIDs gives what sorting every id gives (shortIDsSorted), on sets of
// ids that share starts of every length, hold duplicates, short ids and
// dashes where a prefix would end.
func TestShortIDsAsSortingAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := "0123456789abcdef-"
	for round := range 300 {
		var ids []string
		base := []string{"01a20136-c9aa-7652-9079-994813191fca", "5b0c1f4e-2d3a-4c5b-8e6f-7a8b9c0d1e2f", "N-jKgMMEsFVxfvZ5q6lVM", "abc", "abcdefg-", "abcdefgh-ij-"}
		for range 1 + rng.IntN(60) {
			id := base[rng.IntN(len(base))]
			if rng.IntN(4) > 0 { // change its tail from some point on
				cut := rng.IntN(len(id) + 1)
				b := []byte(id[:cut])
				for range rng.IntN(30) {
					b = append(b, alpha[rng.IntN(len(alpha))])
				}
				id = string(b)
			}
			ids = append(ids, id)
		}
		want := shortIDsSorted(ids)
		short := shortIDs(ids)
		for _, id := range ids {
			if got := short(id); got != want[id] {
				t.Fatalf("round %d: short(%q) = %q, sorting all gives %q (ids %q)", round, id, got, want[id], ids)
			}
		}
	}
}
