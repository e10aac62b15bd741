//go:build heavy

package tokens

import (
	"testing"

	"github.com/sessctl/sessctl/pkg/tokens/internal/corpus"
)

func TestMatchesReferenceCorpus(t *testing.T) {
	size := 600 << 10
	if testing.Short() {
		size = 200 << 10
	}
	docs := corpus.Generate(7, size)
	for _, enc := range encodings {
		c, ref := counter(t, enc), reference(t, enc)
		for _, d := range docs {
			if !checkSame(t, c, ref, d) {
				break
			}
		}
	}
}
