package stats

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
)

// TestPrecountCountsAsBefore: counting each record's texts beside its
// decoding (precount, on every core) gives the same report as counting
// them afterwards in order, for every session of the test data, exact and
// heuristic.
func TestPrecountCountsAsBefore(t *testing.T) {
	res := session.DiscoverPaths([]string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "agent")})
	if len(res.Sessions) < 10 {
		t.Fatalf("only %d sessions in the test data", len(res.Sessions))
	}
	defer func() { countAfter = false }()
	for _, s := range res.Sessions {
		for _, heur := range []bool{false, true} {
			opt := Options{Top: 5, Heuristic: heur}
			countAfter = true
			want, err1 := Analyze(context.Background(), s, opt)
			countAfter = false
			got, err2 := Analyze(context.Background(), s, opt)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("%s: errors %v / %v", s.Main, err1, err2)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (heuristic %v): precounted\n%+v\nafter\n%+v", s.Main, heur, got, want)
			}
		}
	}
}
