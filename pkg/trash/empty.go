package trash

import (
	"errors"
	"strings"
	"time"
)

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
// out of sight first. Entries half deleted by an earlier run (".emptying-…")
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
