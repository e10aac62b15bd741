package session

import "testing"

// A rotation's number is read from a file name: digits as many as the name
// holds never make it wrap to a negative or smaller number, on 32-bit
// targets too (where the bound was once a constant that did not build).
func TestAtoiStopsBeforeOverflow(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"0", 0}, {"7", 7}, {"12x", 12}, {"", 0}} {
		if got := atoi(c.in); got != c.want {
			t.Errorf("atoi(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	prev := 0
	digits := ""
	for range 40 {
		digits += "9"
		n := atoi(digits)
		if n < prev {
			t.Fatalf("atoi(%q) = %d, less than %d for one digit fewer", digits, n, prev)
		}
		prev = n
	}
}
