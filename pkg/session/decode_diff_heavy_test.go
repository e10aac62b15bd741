//go:build heavy

package session_test

import (
	"bytes"
	"testing"
)

// TestDecodeMatchesEncodingJSON holds every home's Decode with the fast
// decoder to Decode with encoding/json, on every line of the test data
// and on the edge lines. (make test-heavy; make test runs a seventh of
// the lines, as FuzzDecodeDifferential's seed corpus.)
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	lines := corpusLines(t)
	for _, l := range edgeLines {
		lines = append(lines, []byte(l))
	}
	for i, l := range lines {
		if err := decodeBoth(l); err != nil {
			t.Errorf("line %d of the corpus: %v", i, err)
		}
	}
	// and once as one file, where line numbers and offsets count too
	if err := decodeBoth(bytes.Join(lines, []byte("\n"))); err != nil {
		t.Error(err)
	}
}
