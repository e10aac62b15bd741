package session

import "hash/maphash"

// mainSet is the set of main files a discovery has taken, by absolute
// path, so that a session reached twice (roots that overlap, a subagent's
// file that leads to its parent) is made once.
//
// It keeps no paths: a slot holds a hash of the path and the place of its
// session in the result, whose main file is compared on a match. A map of
// the paths took 3.6 MB over 100,000 sessions, at the end of the walk,
// the peak of discovery; this takes 1 to 2.
type mainSet struct {
	seed maphash.Seed
	// 0: empty; else the hash (high 32 bits) and 1 + the session's place
	// (low 32), probed linearly from the hash
	slots []uint64
	n     int
}

// has reports whether abs is the main file of a session the set took;
// main gives the main file of the session at a place.
func (m *mainSet) has(abs string, main func(at int) string) bool {
	if m.n == 0 {
		return false
	}
	h := m.hash(abs)
	mask := uint32(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := m.slots[i]
		if v == 0 {
			return false
		}
		if uint32(v>>32) == h && absPath(main(int(uint32(v)-1))) == abs {
			return true
		}
	}
}

// take adds abs, the main file of the session at place at.
func (m *mainSet) take(abs string, at int) {
	if (m.n+1)*8 > len(m.slots)*7 {
		m.grow()
	}
	m.put(uint64(m.hash(abs))<<32 | uint64(uint32(at+1)))
	m.n++
}

func (m *mainSet) hash(s string) uint32 {
	if m.seed == (maphash.Seed{}) {
		m.seed = maphash.MakeSeed()
	}
	return uint32(maphash.String(m.seed, s) >> 32)
}

func (m *mainSet) put(v uint64) {
	mask := uint32(len(m.slots) - 1)
	i := uint32(v>>32) & mask
	for m.slots[i] != 0 {
		i = (i + 1) & mask
	}
	m.slots[i] = v
}

func (m *mainSet) grow() {
	old := m.slots
	m.slots = make([]uint64, max(1024, 2*len(old)))
	for _, v := range old {
		if v != 0 {
			m.put(v)
		}
	}
}
