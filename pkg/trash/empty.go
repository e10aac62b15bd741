package trash

import (
	"errors"
	"strings"
	"time"
)

// fillingTime is how long an incomplete entry is taken to be still
// filling: Empty leaves it alone that long.
const fillingTime = time.Hour

// EmptyResult is what Empty removed (or, on a dry run, would remove).
type EmptyResult struct {
	Removed []*Manifest
	// Broken are entries without a readable manifest: removed only when
	// emptying everything (olderThan 0), since their age is unknown.
	Broken     []Broken
	BrokenKept []Broken
	Kept       int
}

// Empty deletes the entries trashed more than olderThan before now (every
// entry when olderThan is 0), each through handles on the trash, renamed
// out of sight first. An incomplete entry made in the last hour is kept
// (another sessctl may still be moving files into it). Entries half deleted by an earlier run (".emptying-…")
// are finished too. With dryRun nothing is deleted.
func (t *Trash) Empty(olderThan time.Duration, now time.Time, dryRun bool) (*EmptyResult, error) {
	if !dryRun {
		lk, err := t.lock()
		if err != nil {
			return nil, err
		}
		defer lk.Unlock()
	}
	ms, broken, err := t.List()
	if err != nil {
		return nil, err
	}
	res := &EmptyResult{}
	var errs []error
	for _, m := range ms {
		if !m.Complete && now.Sub(m.TrashedAt) < fillingTime {
			// a cleanup may be moving files into it right now
			res.Kept++
			continue
		}
		if olderThan > 0 && now.Sub(m.TrashedAt) <= olderThan {
			res.Kept++
			continue
		}
		if !dryRun {
			if err := t.remove(m.ID); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		res.Removed = append(res.Removed, m)
	}
	for _, b := range broken {
		if olderThan > 0 {
			res.BrokenKept = append(res.BrokenKept, b)
			continue
		}
		if !dryRun {
			if err := t.remove(b.ID); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		res.Broken = append(res.Broken, b)
	}
	if !dryRun {
		if ents, err := t.dir.ReadDir(); err == nil {
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), goingPrefix) && e.IsDir() {
					errs = append(errs, removeTree(t.dir, e.Name()))
				}
			}
		}
		t.dir.Sync()
	}
	return res, errors.Join(errs...)
}
