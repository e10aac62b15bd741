package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxRuns is how many results of whole runs the index keeps (the newest
// stored): a user's few usual commands (stats --all, of a project, of an
// agent), each of which stores two (stats.ConsumptionMemo: its result, and
// what a run after a change needs) and replaces them when a file changes.
const maxRuns = 16

// MaxRun is the largest result of a whole run the index stores: a run
// whose result is larger (a store of many thousands of sessions, or of
// millions of requests) is not kept, so that a run never holds more than
// this of it in memory.
const MaxRun = 16 << 20

// LoadRun returns the result stored for a whole run under key, nil when
// there is none. The caller makes key of everything the result depends on
// (stats.Memo): the index knows nothing of it but the bytes.
func (ix *Index) LoadRun(key []byte) (value []byte) {
	if ix == nil {
		return nil
	}
	ix.mu.Lock()
	if v, ok := ix.runs[string(key)]; ok {
		ix.mu.Unlock()
		return v
	}
	ix.mu.Unlock()
	if value = ix.runView(key); value != nil {
		ix.count(func(s *Stats) { s.RunHits++ })
	}
	return value
}

// runView looks a run up in the view (LoadRun; view is taken after mu,
// never while holding it).
func (ix *Index) runView(key []byte) (value []byte) {
	ix.inView(func(vt viewTx) {
		defer func() {
			if recover() != nil { // a damaged page: a miss
				value = nil
			}
		}()
		if runs := vt.tx.Bucket(bucketRuns); runs != nil {
			if b := runs.Get(key); b != nil {
				value = bytes.Clone(b)
			}
		}
	})
	return value
}

// StoreRun stores value as the result of the whole run key names, written
// with the run's other entries when it ends. A value larger than MaxRun is
// not stored.
func (ix *Index) StoreRun(key, value []byte) {
	if ix == nil || len(value) > MaxRun {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return
	}
	if ix.runs == nil {
		ix.runs = map[string][]byte{}
	}
	ix.runs[string(key)] = value
}

// putRuns writes the results of whole runs into b, and the time each is
// written into times, and deletes all but the maxRuns newest. The time is
// kept apart so that a result is written as it is, not copied behind it
// (a result of 10,000 sessions is about 3 MB).
func putRuns(b, times *bolt.Bucket, runs map[string][]byte) error {
	if len(runs) == 0 {
		return nil
	}
	if b == nil || times == nil {
		return errors.New("index: no runs bucket")
	}
	now := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))
	for k, v := range runs {
		if err := b.Put([]byte(k), v); err != nil {
			return err
		}
		if err := times.Put([]byte(k), now); err != nil {
			return err
		}
	}
	type aged struct {
		key []byte
		at  uint64
	}
	var all []aged
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		var at uint64 // a result without a time goes first
		if v := times.Get(k); len(v) == 8 {
			at = binary.BigEndian.Uint64(v)
		}
		all = append(all, aged{bytes.Clone(k), at})
	}
	if len(all) <= maxRuns {
		return nil
	}
	slices.SortFunc(all, func(a, b aged) int {
		if a.at != b.at {
			if a.at > b.at {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.key, b.key)
	})
	for _, a := range all[maxRuns:] {
		if err := b.Delete(a.key); err != nil {
			return err
		}
		if err := times.Delete(a.key); err != nil {
			return err
		}
	}
	return nil
}
