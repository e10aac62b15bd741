package stats

import (
	"context"
	"os"
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

// TestTrackedTurnsAsTurns: the turns a home numbers from the records of
// Analyze's own pass (TurnTracker, the file decoded once) give the same
// report as the home's own read of the file (Conversation.Turns), for
// every session of the test data and of the shared samples when present.
func TestTrackedTurnsAsTurns(t *testing.T) {
	paths := []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "agent")}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "samples")); err == nil {
		paths = append(paths, filepath.Join("..", "..", "..", "shared", "samples"))
	}
	res := session.DiscoverPaths(paths)
	defer func() { trackTurns = true }()
	tracked, growth := 0, 0
	for _, s := range res.Sessions {
		if _, ok := session.As[session.TurnTracking](s.Agent); !ok {
			continue
		}
		tracked++
		opt := Options{Top: 5, Heuristic: true}
		trackTurns = false
		want, err1 := Analyze(context.Background(), s, opt)
		trackTurns = true
		got, err2 := Analyze(context.Background(), s, opt)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s: errors %v / %v", s.Main, err1, err2)
		}
		if err1 != nil {
			continue
		}
		if len(want.Growth) > 1 {
			growth++
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: tracked turns\n%+v\nthe home's\n%+v", s.Main, got.Growth, want.Growth)
		}
	}
	if tracked < 5 || growth < 3 {
		t.Fatalf("only %d sessions of a tracking home, %d with more than one turn", tracked, growth)
	}
	t.Logf("%d sessions, %d with more than one turn", tracked, growth)
}
