package tokens

import (
	"testing"

	"github.com/sessctl/sessctl/pkg/tokens/internal/corpus"
)

// benchDocs is a 2 MB mixed corpus; its bytes are reported with b.SetBytes,
// so ns/op converts to MB/s.
func benchDocs() ([]string, int64) {
	docs := corpus.Generate(42, 2<<20)
	var n int64
	for _, d := range docs {
		n += int64(len(d))
	}
	return docs, n
}

func BenchmarkCount(b *testing.B) {
	docs, size := benchDocs()
	for _, enc := range encodings {
		b.Run(string(enc)+"/sessctl", func(b *testing.B) {
			c := counter(b, enc)
			b.SetBytes(size)
			for b.Loop() {
				for _, d := range docs {
					c.Count(d)
				}
			}
		})
		b.Run(string(enc)+"/sessctl-all-cores", func(b *testing.B) {
			c := counter(b, enc)
			b.SetBytes(size)
			for b.Loop() {
				c.CountAll(docs)
			}
		})
		b.Run(string(enc)+"/tiktoken-go", func(b *testing.B) {
			ref := reference(b, enc)
			b.SetBytes(size)
			for b.Loop() {
				for _, d := range docs {
					ref.EncodeOrdinary(d)
				}
			}
		})
	}
}
