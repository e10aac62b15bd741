package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// Encoding names a BPE vocabulary together with its splitting rules.
type Encoding string

// The encodings sessctl counts with. Both are compiled into the binary; no
// counter ever downloads anything.
const (
	O200kBase  Encoding = "o200k_base"  // gpt-4o, gpt-4.1, gpt-5, o-series, Codex
	Cl100kBase Encoding = "cl100k_base" // gpt-4, gpt-3.5, text-embedding-3
)

// vocab is the rank table of one encoding. It is read-only once built.
type vocab struct {
	ranks map[string]uint32
}

// vocabs loads each rank table once per process, on first use, from the
// files embedded by github.com/pkoukk/tiktoken-go-loader. The map itself is
// never written.
var vocabs = map[Encoding]func() (*vocab, error){
	Cl100kBase: sync.OnceValues(func() (*vocab, error) { return loadVocab("cl100k_base.tiktoken", 100_256) }),
	O200kBase:  sync.OnceValues(func() (*vocab, error) { return loadVocab("o200k_base.tiktoken", 199_998) }),
}

// loadVocab parses a .tiktoken file: one "base64(token) rank" per line.
func loadVocab(name string, size int) (*vocab, error) {
	data, err := assets.Assets.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("tokens: load %s: %w", name, err)
	}
	v := &vocab{ranks: make(map[string]uint32, size)}
	buf := make([]byte, 0, 256)
	for ln := 1; len(data) > 0; ln++ {
		line := data
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			line, data = data[:k], data[k+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		tok, rank, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("tokens: %s:%d: no rank", name, ln)
		}
		buf = buf[:base64.StdEncoding.DecodedLen(len(tok))]
		n, err := base64.StdEncoding.Decode(buf, tok)
		if err != nil {
			return nil, fmt.Errorf("tokens: %s:%d: %w", name, ln, err)
		}
		r, err := strconv.ParseUint(string(rank), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("tokens: %s:%d: %w", name, ln, err)
		}
		v.ranks[string(buf[:n])] = uint32(r)
	}
	if len(v.ranks) != size {
		return nil, fmt.Errorf("tokens: %s: %d tokens, want %d", name, len(v.ranks), size)
	}
	for b := range 256 {
		if _, ok := v.ranks[string([]byte{byte(b)})]; !ok {
			return nil, fmt.Errorf("tokens: %s: no token for byte %#02x", name, b)
		}
	}
	return v, nil
}
