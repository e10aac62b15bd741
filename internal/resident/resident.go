// Package resident is what sessctl knows of the memory its process holds
// resident from files it maps: how much there is, and how to give pages
// back that it may not need again.
//
// Pages of a file mapping (the index's, the executable's own) stay in the
// process's resident memory once touched, until it exits or they are
// dropped (Drop, MADV_DONTNEED); dropped, they stay in the page cache,
// and the next touch maps them again by a minor fault. A peak RSS counts
// them all.
//
// A Go executable's code, read-only data and tables (its text, rodata and
// pclntab: 31 MB for sessctl) are such a mapping. sessctl touches 16-18
// MB of them before its command does any work (package initialisation,
// and the kernel maps 64 KiB around each page fault), and a command that
// runs long touches more. ShedExecutable drops them, and the code that
// runs next maps again only the pages it uses.
package resident

import (
	"sync"
	"time"
)

// shed is what ShedEvery calls (a variable, for tests).
var shed = ShedExecutable

// ShedEvery calls ShedExecutable every d until stop is called, which
// returns once the last call is done: for a phase that runs long and
// touches new code as it goes (stats' discovery over 100,000 sessions
// kept 8-10 MB of the executable resident at its end).
func ShedEvery(d time.Duration) (stop func()) {
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				shed()
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(done)
		<-ended
	})
}
