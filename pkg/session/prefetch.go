package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sessctl/sessctl/pkg/jsonl"
)

// prefetched is what prefetch found in one directory: the lstat of each
// regular file in it and the walk of each session's sidecar directory,
// taken on every core side by side. Discovery's one pass over the
// directory, which decides what belongs to which session, takes them from
// here instead of making each system call in turn (a store of 100,000
// sessions costs that many lstats, and as many again in sidecars), and
// makes any call that is not here itself. A failed lstat is not kept: the
// pass makes it again and reports it as it always did.
type prefetched struct {
	stats map[string]fs.FileInfo
	walks map[string][]walked
}

// walked is one step of a sidecar walk: a regular file (with its lstat,
// nil when that failed), or the error of a directory that could not be
// read. The steps are WalkDir's, in its order, without its lstat of the
// walk's root (the listing said it is a directory).
type walked struct {
	path string
	fi   fs.FileInfo
	err  error
}

// prefetchMin is the smallest directory worth the workers.
var prefetchMin = 64

// prefetchChunk is how many entries of a directory are prefetched at a
// time, each chunk just before the pass goes through it: what a chunk
// found is held until the pass is done with it, and a directory of a
// large store holds tens of thousands of sessions (over 70,000 sessions
// in five directories, prefetching each whole held about 12 MB at once,
// the peak of discovery's heap). An entry whose neighbour lies in the
// next chunk (a sidecar directory at the end of one, its transcript at
// the start of the next) misses there, and the pass makes the call
// itself, as it does for any call not prefetched.
var prefetchChunk = 1024

func prefetch(dir string, ents []fs.DirEntry, names map[string]fs.DirEntry, rec *recorder) *prefetched {
	if len(ents) < prefetchMin {
		return nil
	}
	type result struct {
		path string
		fi   fs.FileInfo
		walk []walked
	}
	results := make([]result, len(ents))
	h, _ := openDir(dir)
	defer h.close()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ents) {
					return
				}
				e, r := ents[i], &results[i]
				switch {
				case e.Type().IsRegular():
					r.path = filepath.Join(dir, e.Name())
					if fi, err := h.lstatAt(dir, e.Name()); err == nil {
						r.fi = fi
					}
				case e.IsDir() && isSidecarOf(e.Name(), names):
					r.path = filepath.Join(dir, e.Name())
					r.walk = walkRegular(r.path, nil, rec)
				}
			}
		})
	}
	wg.Wait()
	pre := &prefetched{stats: make(map[string]fs.FileInfo, len(ents)), walks: map[string][]walked{}}
	for i := range results {
		r := &results[i]
		if r.fi != nil {
			pre.stats[r.path] = r.fi
		}
		if r.walk != nil {
			pre.walks[r.path] = r.walk
			for _, w := range r.walk {
				if w.fi != nil {
					pre.stats[w.path] = w.fi
				}
			}
		}
	}
	return pre
}

// walkRegular appends to out the steps of filepath.WalkDir(dir) that
// discoverer.sidecar acts on.
func walkRegular(dir string, out []walked, rec *recorder) []walked {
	rec.dir(dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		out = append(out, walked{path: dir, err: err})
	}
	if out == nil {
		out = []walked{} // walked: not nil, even when empty
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			out = walkRegular(p, out, rec)
		case e.Type().IsRegular():
			fi, err := os.Lstat(p)
			if err != nil {
				fi = nil
			}
			out = append(out, walked{path: p, fi: fi})
		}
	}
	return out
}

// isSidecarOf reports whether the directory called name may be the
// sidecar of a session file beside it (neighbours decides).
func isSidecarOf(name string, names map[string]fs.DirEntry) bool {
	for _, n := range []string{name + ".jsonl", name + ".jsonl" + jsonl.CompressedSuffix} {
		if e, ok := names[n]; ok && e.Type().IsRegular() {
			return true
		}
	}
	return false
}

// stat returns the lstat prefetched for p.
func (pre *prefetched) stat(p string) (fs.FileInfo, bool) {
	if pre == nil {
		return nil, false
	}
	fi, ok := pre.stats[p]
	return fi, ok
}

// walk returns the steps of the sidecar walk of dir, when prefetched.
func (pre *prefetched) walk(dir string) ([]walked, bool) {
	if pre == nil {
		return nil, false
	}
	ws, ok := pre.walks[dir]
	return ws, ok
}

// isFlatAgent is flatAgentRe.MatchString(name), the expression tried only
// on names that can match it.
func isFlatAgent(name string) bool {
	return strings.HasPrefix(name, "agent-") && flatAgentRe.MatchString(name)
}

// rotationMatch is rotationRe.FindStringSubmatch(name), tried only on
// names that can match it (".jsonl." inside).
func rotationMatch(name string) []string {
	if !strings.Contains(name, ".jsonl.") {
		return nil
	}
	return rotationRe.FindStringSubmatch(name)
}
