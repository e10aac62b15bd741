package jsonl

// Checker validates a line piece by piece, for a reader that walks the
// line itself and would otherwise go over it twice: once to validate it
// (Revalidate) and once to read it (usage.Lexer's strict mode). Each call
// checks the one value, string or number that starts at an offset of the
// line exactly as the validator checks it in a whole line, and the checker
// gathers what the validator reports of the strings it met. The caller
// checks the rest itself: white space, the punctuation of the objects and
// arrays it walks, and that the line ends after its value.
//
// Nesting is counted from each value checked (Deepest): a caller that
// walks containers itself adds its own depth. The validator gives up past
// maxDepth (10000), so a caller that trusts Status must keep its own depth
// plus Deepest under that.
type Checker struct{ v validator }

// NewChecker returns a Checker of line.
func NewChecker(line []byte) Checker { return Checker{v: validator{b: line}} }

// Value checks the JSON value that starts at line[i] (no white space
// before it) and returns the offset just after it; ok is false if it is
// not a value.
func (c *Checker) Value(i int) (end int, ok bool) {
	c.v.i = i
	if !c.v.value(0) {
		return i, false
	}
	return c.v.i, true
}

// String checks the JSON string whose opening quote is line[i] and returns
// the offset just after its closing quote.
func (c *Checker) String(i int) (end int, ok bool) {
	if i >= len(c.v.b) || c.v.b[i] != '"' {
		return i, false
	}
	c.v.i = i
	if !c.v.str() {
		return i, false
	}
	return c.v.i, true
}

// Number checks the JSON number that starts at line[i] and returns the
// offset just after it.
func (c *Checker) Number(i int) (end int, ok bool) {
	if i >= len(c.v.b) {
		return i, false
	}
	c.v.i = i
	if !c.v.number() {
		return i, false
	}
	return c.v.i, true
}

// Deepest is the deepest nesting met in the values checked (1: an object
// or array with no other inside), 0 if none was a container.
func (c *Checker) Deepest() int { return c.v.deepest }

// Status is the Status and RawControl a validating Reader gives the line,
// for a caller that found it to be one object, every byte of it walked or
// checked, white space around it allowed.
func (c *Checker) Status() (Status, bool) {
	switch {
	case c.v.nul:
		return ContainsNUL, false
	case c.v.badUTF8:
		return InvalidUTF8, false
	}
	return OK, c.v.rawControl
}
