package stats

import (
	"encoding/binary"
	"slices"
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

// strRef names a string of a strTab: the entry it lies in (the high 32
// bits), and, unless it is the whole entry (refWhole in the low 32), its
// offset in the entry (16 bits) and its length (the low 16).
type strRef uint64

const (
	refWhole = strRef(1<<32 - 1)
	refPart  = 1<<16 - 1 // the largest offset or length a part may have
)

// strTab holds strings, its entries: first as they are added (made of
// discovery's strings, which its sessions hold while the plan is made),
// then, once frozen, front-coded in sorted order. The scan's paths are
// most of what a plan holds (143 bytes a file over 100,000 Claude Code
// sessions, 13 MB), and in sorted order each shares most of itself with
// the one before: a run of restartEvery begins with a whole string, and
// each after it holds the length of the prefix it shares with the one
// before, the length of the rest and the rest (46 bytes a file there).
// An entry is read by decoding its run up to it. A frozen table is read
// from any number of goroutines.
type strTab struct {
	adding []string // the entries, until frozen
	// once frozen:
	b      []byte   // the entries, in sorted order, front-coded
	runs   []int    // where each run of restartEvery entries starts in b
	rank   []uint32 // each entry's place in the sorted order
	frozen bool
}

// restartEvery is how many entries a run of the front coding holds.
const restartEvery = 16

// add stores s as an entry of its own and returns its ref. Not once frozen.
func (t *strTab) add(s string) strRef {
	if t.frozen {
		panic("stats: strTab.add after freeze")
	}
	t.adding = append(t.adding, s)
	return strRef(len(t.adding)-1)<<32 | refWhole
}

// within returns the ref of sub when it lies in the string of ref r, whose
// value is s, and stores sub otherwise: discovery's ids are mostly a part
// of their main file's path.
func (t *strTab) within(r strRef, s, sub string) strRef {
	i := strings.Index(s, sub)
	if i < 0 {
		return t.add(sub)
	}
	off := uint64(i)
	if r&refWhole != refWhole {
		off += uint64(r) >> 16 & refPart
	}
	if off >= refPart || len(sub) >= refPart {
		return t.add(sub)
	}
	return r&^refWhole | strRef(off<<16|uint64(len(sub)))
}

// entry returns the entry of r.
func (r strRef) entry() int { return int(r >> 32) }

// freeze sorts and front-codes the entries, and lets go of the strings
// they were added as.
func (t *strTab) freeze() {
	if t.frozen {
		return
	}
	order := make([]int32, len(t.adding))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return strings.Compare(t.adding[a], t.adding[b]) })
	t.rank = make([]uint32, len(order))
	for r, k := range order {
		t.rank[k] = uint32(r)
	}
	// sized first, so that the bytes are made once
	size, prev := 0, ""
	code := func(r int, s string) (shared int) {
		if r%restartEvery != 0 {
			for shared < min(len(s), len(prev)) && s[shared] == prev[shared] {
				shared++
			}
		}
		prev = s
		return shared
	}
	var tmp [binary.MaxVarintLen64]byte
	for r, k := range order {
		s := t.adding[k]
		shared := code(r, s)
		size += binary.PutUvarint(tmp[:], uint64(shared)) + binary.PutUvarint(tmp[:], uint64(len(s)-shared)) + len(s) - shared
	}
	t.b = make([]byte, 0, size)
	t.runs = make([]int, 0, (len(order)+restartEvery-1)/restartEvery)
	prev = ""
	for r, k := range order {
		s := t.adding[k]
		if r%restartEvery == 0 {
			t.runs = append(t.runs, len(t.b))
		}
		shared := code(r, s)
		t.b = binary.AppendUvarint(t.b, uint64(shared))
		t.b = binary.AppendUvarint(t.b, uint64(len(s)-shared))
		t.b = append(t.b, s[shared:]...)
	}
	t.adding, t.frozen = nil, true
}

// appendEntry appends entry k of a frozen table to buf.
func (t *strTab) appendEntry(buf []byte, k int) []byte {
	r := int(t.rank[k])
	at, start := t.runs[r/restartEvery], len(buf)
	for i := r - r%restartEvery; ; i++ {
		shared, n := binary.Uvarint(t.b[at:])
		at += n
		rest, n := binary.Uvarint(t.b[at:])
		at += n
		buf = append(buf[:start+int(shared)], t.b[at:at+int(rest)]...)
		at += int(rest)
		if i == r {
			return buf
		}
	}
}

// str returns the string of r, a copy (not discovery's).
func (t *strTab) str(r strRef) string {
	if !t.frozen {
		return strings.Clone(part(t.adding[r.entry()], r))
	}
	var arr [512]byte
	return string(part(t.appendEntry(arr[:0], r.entry()), r))
}

// part returns the part of its entry, s, that r names.
func part[S ~string | ~[]byte](s S, r strRef) S {
	if r&refWhole == refWhole {
		return s
	}
	off, n := uint64(r)>>16&refPart, uint64(r)&refPart
	return s[off : off+n]
}

// is reports whether the string of r is s. Not once frozen.
func (t *strTab) is(r strRef, s string) bool {
	return r&refWhole == refWhole && t.adding[r.entry()] == s
}

// order returns where the entry of r comes among the entries, sorted as
// strings: a frozen table's order of its paths.
func (t *strTab) order(r strRef) uint32 { return t.rank[r.entry()] }

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
// each session after its jobs, p.jobs[first:]. With release, ss is the
// caller's own copy of its list, and each session is cleared from it once
// each has taken it (a packed one's encoding as it goes, and the rest at
// the end): the plan holds its paths (until freeze), not the
// session. Over 100,000 sessions the sessions and their files are about
// 25 MB besides their paths; cleared only once the plan was made, they were
// held while it was made, the peak of a warm run (52 MB live).
func planScan(ss session.List, release bool, each func(sess int, s *session.Session, p *scanPlan, first int)) *scanPlan {
	n := ss.Len()
	p := &scanPlan{agent: make([]uint16, n)}
	// the table's and the jobs' sizes first, so that each is made once
	// (over 100,000 sessions discovery's sessions are still held here)
	entries, files := 0, 0
	for i := range n {
		s := ss.At(i)
		main := false
		eachUsageFile(s, func(_ int, f UsageFile) {
			files++
			main = main || f.Path == s.Main
		})
		if !main {
			entries++
		}
		if !strings.Contains(s.Main, s.ID) {
			entries++
		}
	}
	p.tab.adding = make([]string, 0, entries+files)
	p.jobs = make([]fileJob, 0, files)
	var known map[session.Agent]uint16
	rel, _ := ss.(releaser)
	for i := range n {
		s := ss.At(i)
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
		if release && rel != nil {
			rel.Release(i)
		}
	}
	if d, ok := ss.(dropper); ok && release {
		d.Drop()
	}
	p.tab.freeze()
	return p
}

// releaser is a list whose sessions can be let go one by one
// (session.Slice, session.Packed), dropper one that holds more, let go
// once every session was taken (session.Packed).
type (
	releaser interface{ Release(i int) }
	dropper  interface{ Drop() }
)

// mainOf returns the ref of s.Main, the path of one of the jobs from
// first when it is among them.
func (p *scanPlan) mainOf(s *session.Session, first int) strRef {
	for _, j := range p.jobs[first:] {
		if p.tab.is(j.path, s.Main) {
			return j.path
		}
	}
	return p.tab.add(s.Main)
}

// agentOf returns the agent of session sess.
func (p *scanPlan) agentOf(sess int) session.Agent { return p.agents[p.agent[sess]] }

// scannerOf returns the usage scanner of session sess's agent.
func (p *scanPlan) scannerOf(sess int) usage.Scanner { return p.scanners[p.agent[sess]] }
