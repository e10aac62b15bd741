package tokens

import (
	"sync"
	"testing"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The reference implementation: pkoukk/tiktoken-go with the same embedded
// rank files, never downloading.
var refOnce sync.Once

func reference(t testing.TB, enc Encoding) *tiktoken.Tiktoken {
	t.Helper()
	refOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	tk, err := tiktoken.GetEncoding(string(enc))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func counter(t testing.TB, enc Encoding) *Counter {
	t.Helper()
	c, err := NewCounter(enc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var encodings = []Encoding{Cl100kBase, O200kBase}
