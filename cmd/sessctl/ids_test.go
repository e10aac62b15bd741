package main

import "testing"

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
