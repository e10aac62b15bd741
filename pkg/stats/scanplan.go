package stats

import (
	"bytes"
	"strings"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// The scan of a store holds a few things of each of its sessions and files
// from the start to the end: over 100,000 sessions, each held as Go
// strings and pointers, they were 50 MB that the collector went through on
// every cycle (a first run collected 471 times). So what the scan keeps of
// each is made of numbers: names in one byte slice (strTab), repeated
// strings by number (intern.Table), the agent by number. The collector
// skips memory that holds no pointers.

// strRef names a string of a strTab: its offset in the table's bytes (the
// 39 bits below the top one) and its length (the low 24), or, with refLong
// set, its place in the table's list of strings that do not fit so.
type strRef uint64

const (
	refLenBits = 24
	refLong    = strRef(1) << 63
)

// strTab holds strings in one byte slice.
type strTab struct {
	b    []byte
	long []string
}

// add stores s and returns its ref.
func (t *strTab) add(s string) strRef {
	off := uint64(len(t.b))
	if len(s) >= 1<<refLenBits || off+uint64(len(s)) >= 1<<(63-refLenBits) {
		t.long = append(t.long, s)
		return refLong | strRef(len(t.long)-1)
	}
	t.b = append(t.b, s...)
	return strRef(off<<refLenBits | uint64(len(s)))
}

// within returns the ref of sub when it lies in the string of ref r, whose
// value is s, and stores sub otherwise: discovery's ids are mostly a part
// of their main file's path.
func (t *strTab) within(r strRef, s, sub string) strRef {
	if i := strings.Index(s, sub); i >= 0 && r&refLong == 0 {
		off := uint64(r) >> refLenBits
		return strRef((off+uint64(i))<<refLenBits | uint64(len(sub)))
	}
	return t.add(sub)
}

// bytes returns the bytes of r, not to be changed.
func (t *strTab) bytes(r strRef) []byte {
	if r&refLong != 0 {
		return []byte(t.long[r&^refLong])
	}
	off, n := uint64(r)>>refLenBits, uint64(r)&(1<<refLenBits-1)
	return t.b[off : off+n : off+n]
}

// str returns the string of r, a copy.
func (t *strTab) str(r strRef) string {
	if r&refLong != 0 {
		return t.long[r&^refLong]
	}
	return string(t.bytes(r))
}

// cmp compares the strings of a and b as strings.Compare does.
func (t *strTab) cmp(a, b strRef) int { return bytes.Compare(t.bytes(a), t.bytes(b)) }

// scanPlan is what a scan needs of discovery's sessions, so that it
// needs none of them: each file to read and each session's agent.
type scanPlan struct {
	tab      strTab
	agents   []session.Agent // the distinct agents
	scanners []usage.Scanner // their usage scanners (nil: none)
	agent    []uint16        // a session's place in agents
	jobs     []fileJob
	total    int64
}

// planScan makes the scan's jobs of the usage files of ss, in the order of
// ss (a session's files in their order), and calls each (when not nil) with
// each session after its jobs, p.jobs[first:].
func planScan(ss []*session.Session, each func(sess int, s *session.Session, p *scanPlan, first int)) *scanPlan {
	p := &scanPlan{agent: make([]uint16, len(ss))}
	// the table's and the jobs' sizes first, so that each is made once
	// (over 100,000 sessions discovery's sessions are still held here)
	size, files := 0, 0
	for _, s := range ss {
		main := false
		eachUsageFile(s, func(_ int, f UsageFile) {
			size += len(f.Path)
			files++
			main = main || f.Path == s.Main
		})
		if !main {
			size += len(s.Main)
		}
		if !strings.Contains(s.Main, s.ID) {
			size += len(s.ID)
		}
	}
	p.tab.b = make([]byte, 0, size)
	p.jobs = make([]fileJob, 0, files)
	var known map[session.Agent]uint16
	for i, s := range ss {
		a, ok := known[s.Agent]
		if !ok {
			if known == nil {
				known = map[session.Agent]uint16{}
			}
			a = uint16(len(p.agents))
			known[s.Agent] = a
			p.agents = append(p.agents, s.Agent)
			sc, _ := session.As[usage.Scanner](s.Agent)
			p.scanners = append(p.scanners, sc)
		}
		p.agent[i] = a
		first := len(p.jobs)
		eachUsageFile(s, func(_ int, f UsageFile) {
			p.jobs = append(p.jobs, fileJob{int32(i), f.Class, f.Size, p.tab.add(f.Path)})
			p.total += f.Size
		})
		if each != nil {
			each(i, s, p, first)
		}
	}
	return p
}

// mainOf returns the ref of s.Main, the path of one of the jobs from
// first when it is among them.
func (p *scanPlan) mainOf(s *session.Session, first int) strRef {
	for _, j := range p.jobs[first:] {
		if string(p.tab.bytes(j.path)) == s.Main {
			return j.path
		}
	}
	return p.tab.add(s.Main)
}

// agentOf returns the agent of session sess.
func (p *scanPlan) agentOf(sess int) session.Agent { return p.agents[p.agent[sess]] }

// scannerOf returns the usage scanner of session sess's agent.
func (p *scanPlan) scannerOf(sess int) usage.Scanner { return p.scanners[p.agent[sess]] }
