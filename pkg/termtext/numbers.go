package termtext

import "strconv"

// Group writes n with its digits grouped by commas: 12,345,678.
func Group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	b := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		b = append(b, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// Count writes a count with its noun, which agrees with it: "1 record",
// "0 records", "12,345 records".
func Count[N int | int64](n N, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return Group(int64(n)) + " " + word + "s"
}
