// Command tokcount counts the documents of a corpusgen corpus (JSON Lines
// on stdin) for the comparison and benchmark scripts.
//
//	tokcount -enc o200k_base ids     one line per document: the count, then the token ids
//	tokcount -enc o200k_base bench   MB/s of sessctl's counter (one core and all
//	                                 cores) and of pkoukk/tiktoken-go (one core)
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/sessctl/sessctl/pkg/tokens"
)

func main() {
	enc := flag.String("enc", string(tokens.O200kBase), "encoding: o200k_base or cl100k_base")
	flag.Parse()
	if err := run(tokens.Encoding(*enc), flag.Arg(0), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tokcount:", err)
		os.Exit(1)
	}
}

func run(enc tokens.Encoding, mode string, in io.Reader, out io.Writer) error {
	docs, err := readCorpus(in)
	if err != nil {
		return err
	}
	c, err := tokens.NewCounter(enc)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	defer w.Flush()
	switch mode {
	case "ids":
		var line []byte
		for _, d := range docs {
			ids := c.Encode(d)
			line = strconv.AppendInt(line[:0], int64(len(ids)), 10)
			for _, id := range ids {
				line = append(line, ' ')
				line = strconv.AppendInt(line, int64(id), 10)
			}
			line = append(line, '\n')
			w.Write(line)
		}
		return nil
	case "bench":
		size := 0
		for _, d := range docs {
			size += len(d)
		}
		// Each measurement first warms up on about a megabyte of the
		// corpus, then reports the best of runs full passes.
		warm := docs
		for n, k := 0, 0; k < len(docs); k++ {
			if n += len(docs[k]); n > 1e6 {
				warm = docs[:k+1]
				break
			}
		}
		report := func(name string, cores, runs int, f func([]string)) {
			f(warm)
			best := 0.0
			for range runs {
				start := time.Now()
				f(docs)
				best = max(best, float64(size)/1e6/time.Since(start).Seconds())
			}
			fmt.Fprintf(w, "%-12s %-26s %3d core(s) %8.2f MB/s\n", enc, name, cores, best)
			w.Flush()
		}
		report("sessctl", 1, 3, func(docs []string) {
			for _, d := range docs {
				c.Count(d)
			}
		})
		report("sessctl CountAll", runtime.GOMAXPROCS(0), 3, func(docs []string) { c.CountAll(docs) })
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		ref, err := tiktoken.GetEncoding(string(enc))
		if err != nil {
			return err
		}
		report("pkoukk/tiktoken-go", 1, 1, func(docs []string) {
			for _, d := range docs {
				ref.EncodeOrdinary(d)
			}
		})
		return nil
	}
	return errors.New(`usage: tokcount [-enc ENCODING] ids|bench < corpus.jsonl`)
}

func readCorpus(in io.Reader) ([]string, error) {
	var docs []string
	dec := json.NewDecoder(bufio.NewReader(in))
	for {
		var d struct {
			Text string `json:"text"`
		}
		if err := dec.Decode(&d); err == io.EOF {
			return docs, nil
		} else if err != nil {
			return nil, fmt.Errorf("corpus document %d: %w", len(docs)+1, err)
		}
		docs = append(docs, d.Text)
	}
}
