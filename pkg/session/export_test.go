package session

import (
	"context"
	"io"
	"time"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// UseReference switches Unmarshal to encoding/json (on) or back to the fast
// decoder, for the differential tests; tests that call it must not run in
// parallel.
func UseReference(on bool) { reference = on }

// ReadSerial is the one-core read, to hold the parallel one to.
func ReadSerial(rd io.Reader, f Format, fn func(*Record) error) error {
	return readSerial(context.Background(), jsonl.NewReader(rd), f, fn)
}

// SetPrefetchMin sets the smallest directory discovery prefetches (a huge
// one: never) and returns the old value.
func SetPrefetchMin(n int) int { old := prefetchMin; prefetchMin = n; return old }

// SetPrefetchChunk sets how many entries of a directory are prefetched at
// a time, and returns the old value.
func SetPrefetchChunk(n int) int { old := prefetchChunk; prefetchChunk = n; return old }

// SetSnapshotSettle sets how long what a discovery snapshot depends on must
// be unchanged for it to be stored, and returns the old value.
func SetSnapshotSettle(d time.Duration) time.Duration {
	old := snapshotSettle
	snapshotSettle = d
	return old
}

// SetSnapChunk sets how many of what a snapshot depends on are checked
// together (and let go together), and returns the old value.
func SetSnapChunk(n int) int {
	old := snapChunk
	snapChunk = n
	return old
}

// SetRecChunk sets the bytes of a chunk of what a recorder notes, and
// returns the old value.
func SetRecChunk(n int) int {
	old := recChunk
	recChunk = n
	return old
}

// UUIDRe is the expression IsUUID implements by hand.
var UUIDRe = uuidRe
