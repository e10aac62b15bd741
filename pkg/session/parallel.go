package session

import (
	"context"
	"io"
	"reflect"
	"runtime"
	"slices"
	"sync"

	"github.com/sessctl/sessctl/pkg/jsonl"
	"golang.org/x/sync/semaphore"
)

// The parallel read: one goroutine reads lines (without validating them)
// into batches, every core validates and decodes batches, and the caller's
// function gets the records one at a time in file order. Validation and
// decoding are nearly all of the time of a read; the line splitting is
// fast (a few GB/s).
const (
	// batchBytes and batchLines end a batch.
	batchBytes = 256 << 10
	batchLines = 1024
	// heldBytes bounds the bytes of the batches in flight; a batch larger
	// than it (one huge line) waits until it is the only one, so a read
	// holds at most about heldBytes or its longest line (twice: the
	// reader's buffer and the batch's copy), whichever is more.
	heldBytes = 8 << 20
	// hugeLine is the length from which a line is not copied into a
	// batch (see produce)
	hugeLine = 1 << 20
)

type batch[T any] struct {
	buf   []byte
	lines []jsonl.Line
	recs  []T
	held  int64 // weight taken from the budget
	done  chan struct{}
	// consumed, for a batch of one huge line that points into the
	// reader's buffer, is closed when the caller is done with it
	consumed chan struct{}
}

// readLines streams the records of rd through fn in order, decoding them
// on every core. It looks at ctx every checkEvery lines; jsonl.ErrStop from
// fn ends the read with a nil error.
func readLines(ctx context.Context, rd *jsonl.Reader, f Format, fn func(*Record) error) error {
	if _, ok := f.(LazyDecoder); ok {
		return scanLinesLazy(ctx, rd, true, func(l *jsonl.Line, r *Record) { *r = decodeLazy(f, l) },
			func(_ *jsonl.Line, r *Record) error { return fn(r) })
	}
	return scanLines(ctx, rd, func(l *jsonl.Line, r *Record) { *r = Decode(f, l) },
		func(_ *jsonl.Line, r *Record) error { return fn(r) })
}

// ScanFile streams the lines of the file at path through fn in file order,
// each with what decode made of it. decode runs on every core, on lines
// with the Status and RawControl a validating Reader gives them, and must
// keep no state of its own; fn's line and value are only valid during the
// call. It is what ReadFileContext does with Decode, for a caller that
// needs less of each line than a Record (a home's structure-only pass).
// jsonl.ErrStop from fn ends the read early with a nil error.
func ScanFile[T any](ctx context.Context, path string, decode func(*jsonl.Line, *T), fn func(*jsonl.Line, *T) error) error {
	return scanFile(ctx, path, false, decode, fn)
}

// ScanFileLazy is ScanFile for a decode that validates the lines itself:
// a line whose Status is OK comes as a Reader that skips validation gives
// it, and decode must give it the Status and RawControl a validating
// Reader would (Revalidate does) before it relies on them.
func ScanFileLazy[T any](ctx context.Context, path string, decode func(*jsonl.Line, *T), fn func(*jsonl.Line, *T) error) error {
	return scanFile(ctx, path, true, decode, fn)
}

// scanFile is ScanFile, or ScanFileLazy when lazy.
func scanFile[T any](ctx context.Context, path string, lazy bool, decode func(*jsonl.Line, *T), fn func(*jsonl.Line, *T) error) error {
	fh, err := jsonl.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	return scanLinesLazy(ctx, jsonl.NewReader(fh), lazy, decode, fn)
}

// scanLines is readLines with any decoding.
func scanLines[T any](ctx context.Context, rd *jsonl.Reader, decode func(*jsonl.Line, *T), fn func(*jsonl.Line, *T) error) error {
	return scanLinesLazy(ctx, rd, false, decode, fn)
}

// scanLinesLazy is scanLines that, when lazy, leaves validation to decode:
// its lines come as a Reader that skips validation gives them, and decode
// calls Revalidate on those it needs (a line it does not decode is not
// validated either).
func scanLinesLazy[T any](ctx context.Context, rd *jsonl.Reader, lazy bool, decode func(*jsonl.Line, *T), fn func(*jsonl.Line, *T) error) error {
	if runtime.GOMAXPROCS(0) < 2 {
		if lazy {
			rd.SkipValidation = true
		}
		return scanSerial(ctx, rd, decode, fn)
	}
	rd.SkipValidation = true
	return scanSource(ctx, rd, lazy, decode, fn)
}

// lineSource is what the parallel read reads lines from: a jsonl.Reader,
// or the lines at known places (linesAt). A line is valid until the next
// call of Next.
type lineSource interface {
	Next() (*jsonl.Line, error)
}

// scanSource is scanLinesLazy on several cores, from any source of lines
// that were not validated.
func scanSource[T any](ctx context.Context, rd lineSource, lazy bool, decode func(*jsonl.Line, *T), fn func(*jsonl.Line, *T) error) error {
	workers := runtime.GOMAXPROCS(0)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	budget := semaphore.NewWeighted(heldBytes)
	work := make(chan *batch[T], workers)
	order := make(chan *batch[T], 4*workers)
	free := poolOf[T]()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range work {
				for i := range b.lines {
					l := &b.lines[i]
					if !lazy {
						l.Revalidate()
					}
					decode(l, &b.recs[i])
				}
				close(b.done)
			}
		})
	}
	var readErr error
	wg.Go(func() {
		defer close(order)
		defer close(work)
		readErr = produce(cctx, rd, budget, work, order, free)
	})
	err := consume(ctx, order, budget, free, fn)
	cancel()
	for range order { // let the reader see the cancel and stop
	}
	wg.Wait()
	if err == jsonl.ErrStop {
		return nil
	}
	if err != nil {
		return err
	}
	if readErr != nil && readErr != context.Canceled {
		return readErr
	}
	return ctx.Err()
}

// produce reads rd into batches and hands each to the workers (work) and,
// in file order, to the consumer (order).
func produce[T any](ctx context.Context, rd lineSource, budget *semaphore.Weighted, work, order chan<- *batch[T], free chan *batch[T]) error {
	b := newBatch[T](free)
	send := func() error {
		if len(b.lines) == 0 {
			return nil
		}
		// the lines' bytes are in b.buf now that it no longer moves (a
		// batch of one huge line points into the reader's buffer)
		off := 0
		for i := range b.lines {
			l := &b.lines[i]
			if l.Raw != nil && b.consumed == nil {
				n := len(l.Raw)
				l.Raw = b.buf[off : off+n : off+n]
				off += n
			}
		}
		// the values past len(b.recs) are zero: consume clears them
		// before a batch goes back to the pool
		b.recs = slices.Grow(b.recs[:0], len(b.lines))[:len(b.lines)]
		b.held = min(int64(len(b.buf)), heldBytes)
		if err := budget.Acquire(ctx, b.held); err != nil {
			return err
		}
		b.done = make(chan struct{})
		select {
		case work <- b:
		case <-ctx.Done():
			budget.Release(b.held)
			return ctx.Err()
		}
		order <- b // never blocks for long: the consumer drains it
		b = newBatch[T](free)
		return nil
	}
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return send()
		}
		if err != nil {
			if e := send(); e != nil {
				return e
			}
			return err
		}
		if len(l.Raw) >= hugeLine {
			// a huge line is not copied: it goes alone, pointing into
			// the reader's buffer, and the reading waits until the
			// caller is done with it
			if err := send(); err != nil {
				return err
			}
			b.lines = append(b.lines, *l)
			consumed := make(chan struct{})
			b.consumed = consumed
			if err := send(); err != nil {
				return err
			}
			select {
			case <-consumed:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		c := *l
		if l.Raw != nil {
			if need := len(b.buf) + len(l.Raw); need > cap(b.buf) {
				// room for this line and a batch more, never a doubling
				// of a huge line
				nb := make([]byte, len(b.buf), need+batchBytes)
				copy(nb, b.buf)
				b.buf = nb
			}
			b.buf = append(b.buf, l.Raw...)
			c.Raw = l.Raw[:len(l.Raw):len(l.Raw)] // placeholder: send points it into b.buf
		}
		b.lines = append(b.lines, c)
		if len(b.buf) >= batchBytes || len(b.lines) >= batchLines {
			if err := send(); err != nil {
				return err
			}
		}
	}
}

// batchPools keeps the batches of finished reads for the next reads, one
// free list per type of value (reflect.Type -> chan *batch[T]). Without it
// every read allocated (and the runtime cleared) its batches afresh: a
// search reads each file two or three times, and on a 1 GB store that was
// about a tenth of the CPU time, and much of the collector's work. A list
// holds at most keptBatches batches of at most 4*batchBytes each (a batch
// of a huge line keeps neither its buffer nor its lines): about 10 MB for
// sessctl's records, more only after lines near a megabyte; the batches a
// read has in flight beyond those are left to the collector.
var batchPools sync.Map

// keptBatches is about what two reads side by side have in flight.
const keptBatches = 32

func poolOf[T any]() chan *batch[T] {
	t := reflect.TypeFor[T]()
	if p, ok := batchPools.Load(t); ok {
		return p.(chan *batch[T])
	}
	p, _ := batchPools.LoadOrStore(t, make(chan *batch[T], keptBatches))
	return p.(chan *batch[T])
}

func newBatch[T any](free chan *batch[T]) *batch[T] {
	select {
	case b := <-free:
		b.buf, b.lines = b.buf[:0], b.lines[:0]
		return b
	default:
		return &batch[T]{}
	}
}

// consume hands the records to fn in order.
func consume[T any](ctx context.Context, order <-chan *batch[T], budget *semaphore.Weighted, free chan *batch[T], fn func(*jsonl.Line, *T) error) error {
	for b := range order {
		<-b.done
		for i := range b.recs {
			l := &b.lines[i]
			if l.Num%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					budget.Release(b.held)
					return err
				}
			}
			if err := fn(l, &b.recs[i]); err != nil {
				budget.Release(b.held)
				return err
			}
		}
		budget.Release(b.held)
		if b.consumed != nil {
			close(b.consumed)
			b.consumed = nil
			clear(b.lines) // its line points into the reader's buffer: not kept
		}
		clear(b.recs) // drop the strings the values hold
		if cap(b.buf) > 4*batchBytes {
			// a huge line's buffer is not kept for the next batch (nor
			// are the lines that point into it)
			b.buf = nil
			clear(b.lines)
		}
		b.done = nil
		select {
		case free <- b:
		default:
		}
	}
	return nil
}

// readSerial is readLines on one core.
func readSerial(ctx context.Context, rd *jsonl.Reader, f Format, fn func(*Record) error) error {
	return scanSerial(ctx, rd, func(l *jsonl.Line, r *Record) { *r = Decode(f, l) },
		func(_ *jsonl.Line, r *Record) error { return fn(r) })
}

// scanSerial is scanLines on one core.
func scanSerial[T any](ctx context.Context, rd lineSource, decode func(*jsonl.Line, *T), fn func(*jsonl.Line, *T) error) error {
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if l.Num%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var v T
		decode(l, &v)
		if err := fn(l, &v); err != nil {
			if err == jsonl.ErrStop {
				return nil
			}
			return err
		}
	}
}
