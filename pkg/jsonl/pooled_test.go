package jsonl

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// Readers from the pool give the lines a Reader of its own gives, their
// buffers passed from one to the next as they are released, on several
// goroutines at once; Release of any other Reader does nothing.
func TestPooledReader(t *testing.T) {
	texts := []string{
		"{\"a\":1}\n\n{bad\n" + strings.Repeat("x", 100<<10) + "\n{\"b\":2}",
		"{\"c\":3}\n",
		"",
		strings.Repeat("{\"d\":4}\n", 20000),
	}
	lines := func(rd *Reader) string {
		var b strings.Builder
		for {
			l, err := rd.Next()
			if err == io.EOF {
				return b.String()
			}
			if err != nil {
				return b.String() + "error: " + err.Error()
			}
			fmt.Fprintf(&b, "%d %d %d %q|", l.Num, l.Offset, l.Status, l.Raw)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 20 {
				text := texts[(g+k)%len(texts)]
				want := lines(NewReader(strings.NewReader(text)))
				rd := NewPooledReader(strings.NewReader(text))
				got := lines(rd)
				rd.Release()
				rd.Release() // twice: nothing more
				if got != want {
					t.Errorf("text %d: pooled reader gave other lines", (g+k)%len(texts))
					return
				}
			}
		}()
	}
	wg.Wait()
	own := NewReader(strings.NewReader("{}\n"))
	own.Release()
	if l, err := own.Next(); err != nil || string(l.Raw) != "{}" {
		t.Errorf("a Reader of its own was released: %v", err)
	}
}
