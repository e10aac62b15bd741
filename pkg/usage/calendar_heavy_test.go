//go:build heavy

package usage

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// ParseMillis's own calendar arithmetic agrees with time.Parse on the
// ends of every month of every four-digit year, and on times of day.
func TestParseMillisCalendar(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for y := 0; y <= 9999; y++ {
		for m := 1; m <= 12; m++ {
			for _, d := range []int{0, 1, 28, 29, 30, 31, 32} {
				s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d, r.IntN(25), r.IntN(61), r.IntN(61), r.IntN(1000))
				got, err := ParseMillis([]byte(s))
				want, err2 := ParseRFC3339(s)
				if (err == nil) != (err2 == nil) || got != want {
					t.Fatalf("%s: %d %v, time.Parse %d %v", s, got, err, want, err2)
				}
			}
		}
	}
}
