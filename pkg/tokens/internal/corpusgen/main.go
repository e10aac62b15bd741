// Command corpusgen writes the mixed test corpus of package corpus as JSON
// Lines, one {"text": "..."} object per document, for the scripts that
// compare sessctl's token counter with other tokenizers.
//
//	go run ./pkg/tokens/internal/corpusgen -size 20000000 -seed 1 > corpus.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/sessctl/sessctl/pkg/tokens/internal/corpus"
)

func main() {
	size := flag.Int("size", 4_000_000, "total `bytes` of text to generate")
	seed := flag.Uint64("seed", 1, "random seed; the same seed gives the same corpus")
	flag.Parse()
	if err := write(os.Stdout, *seed, *size); err != nil {
		fmt.Fprintln(os.Stderr, "corpusgen:", err)
		os.Exit(1)
	}
}

func write(f *os.File, seed uint64, size int) error {
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, d := range corpus.Generate(seed, size) {
		if err := enc.Encode(struct {
			Text string `json:"text"`
		}{d}); err != nil {
			return err
		}
	}
	return w.Flush()
}
