package main

import (
	"bufio"
	"bytes"
	"cmp"
	"runtime"
	"sync"
)

// elemBatch is how many elements of an array one encoder takes at a time;
// maxElemWorkers how many encoders there are at most.
const (
	elemBatch      = 32
	maxElemWorkers = 8
)

// writeElems writes the elements of a, indented as the elements of a
// top-level field, each after a comma but the first: the bytes
// writeJSONStream wrote one element at a time. The elements are asked for
// in order from this goroutine (elem need not be safe for concurrent use;
// its error stops the stream) and encoded on every core, a batch at a
// time, then written in order; a few batches at most are in memory at
// once. Encoding is most of what a report over many sessions costs once
// they are counted: on 500 MB of Codex rollouts, 9 ms of a 134 ms run, on
// one core.
func writeElems(bw *bufio.Writer, a jsonArray) error {
	// a few batches a worker are in memory at once: on a machine of many
	// cores, a few workers are enough (and a report is held to little)
	workers := min(runtime.GOMAXPROCS(0), maxElemWorkers)
	if workers == 1 || a.n <= elemBatch {
		var enc elemEncoder
		enc.init()
		for i := range a.n {
			v, err := a.elem(i)
			if err != nil {
				return err
			}
			if err := enc.add(i, v); err != nil {
				return err
			}
			bw.Write(enc.out.Bytes())
			enc.out.Reset()
		}
		return nil
	}
	type batch struct {
		first int
		vals  []any
		out   []byte
		err   error
		done  chan struct{}
	}
	work := make(chan *batch, workers)
	inOrder := make(chan *batch, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var enc elemEncoder
			enc.init()
			for b := range work {
				for k, v := range b.vals {
					if b.err = enc.add(b.first+k, v); b.err != nil {
						break
					}
				}
				b.out = append(b.out[:0], enc.out.Bytes()...)
				enc.out.Reset()
				b.vals = nil
				close(b.done)
			}
		}()
	}
	// the writer: batches in order, and after an error none more
	failed := make(chan struct{})
	var werr error
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for b := range inOrder {
			<-b.done
			if werr != nil {
				continue
			}
			if b.err != nil {
				werr = b.err
				close(failed)
				continue
			}
			bw.Write(b.out)
		}
	}()
	var elemErr error
produce:
	for first := 0; first < a.n; first += elemBatch {
		// after an error nothing more is asked for: a select below that
		// finds both cases ready picks either
		select {
		case <-failed:
			break produce
		default:
		}
		b := &batch{first: first, done: make(chan struct{})}
		for i := first; i < min(first+elemBatch, a.n); i++ {
			v, err := a.elem(i)
			if err != nil {
				elemErr = err // nothing after it is asked for or written
				break produce
			}
			b.vals = append(b.vals, v)
		}
		select {
		case <-failed:
			break produce
		case inOrder <- b:
		}
		work <- b
	}
	close(work)
	close(inOrder)
	wg.Wait()
	<-wrote
	return cmp.Or(werr, elemErr)
}

// elemEncoder encodes an array's elements into out, as writeElems writes
// them.
type elemEncoder struct {
	buf bytes.Buffer
	enc *indentEncoder
	out bytes.Buffer
}

func (e *elemEncoder) init() { e.enc = newIndentEncoder(&e.buf, "    ", "  ") }

// add encodes element i, v.
func (e *elemEncoder) add(i int, v any) error {
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	if i > 0 {
		e.out.WriteByte(',')
	}
	e.out.WriteString("\n    ")
	e.out.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
	return nil
}
