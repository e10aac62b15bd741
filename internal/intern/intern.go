// Package intern numbers strings that repeat, so that what holds many of
// them holds a number each: model names in the usage ledger, projects and
// working directories in the stats scan.
package intern

// Table numbers strings from 1 in the order they are first seen; "" is 0.
// The zero Table is empty and ready to use.
type Table[ID ~int32 | ~uint32] struct {
	names []string // the string of id i is names[i-1]
	index map[string]ID
}

// ID returns the number of s, adding s when it is new.
func (t *Table[ID]) ID(s string) ID {
	if s == "" {
		return 0
	}
	if id, ok := t.index[s]; ok {
		return id
	}
	if t.index == nil {
		t.index = map[string]ID{}
	}
	t.names = append(t.names, s)
	id := ID(len(t.names))
	t.index[s] = id
	return id
}

// Name returns the string of id: "" for 0 or a number the table never gave.
func (t *Table[ID]) Name(id ID) string {
	if id <= 0 || int64(id) > int64(len(t.names)) {
		return ""
	}
	return t.names[id-1]
}

// Names returns the strings in the order of their numbers (1, 2, …), not
// to be changed.
func (t *Table[ID]) Names() []string { return t.names }

// Len is how many strings the table numbers.
func (t *Table[ID]) Len() int { return len(t.names) }
