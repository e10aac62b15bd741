package stats

import (
	"context"
	"fmt"
	"testing"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// CountedRequests gives the requests Consumption counts: the same
// sessions with the same names and working directories, the same requests
// with the same models, in the same order, in memory and spilling to disk.
func TestCountedRequestsAsConsumption(t *testing.T) {
	roots := testRoots(session.Root{Path: claudeStore(t, 40, 20<<10)})
	res := session.Discover(roots, false)
	ss := usage.Distinct(res.Sessions)
	for _, budget := range []int{0, 7} {
		t.Run(fmt.Sprint("budget=", budget), func(t *testing.T) {
			if budget > 0 {
				defer usage.SetMemoryBudget(usage.SetMemoryBudget(budget))
			}
			sus, err := Consumption(context.Background(), ss, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer Close(sus)
			var want []string
			err = EachRequest(sus, func(su *SessionUsage, r *usage.Request) error {
				want = append(want, fmt.Sprintf("%s %s %q %q %s %d %+v %d %d", su.Agent, su.ID, su.Project, su.CWD,
					su.Model(r), r.Key, r.Usage, r.Time, r.LineID()))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			rq, err := CountedRequests(context.Background(), ss, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rq.Close()
			if len(rq.Sessions) != len(sus) {
				t.Fatalf("%d sessions, Consumption %d", len(rq.Sessions), len(sus))
			}
			var got []string
			err = rq.Each(func(s *SessionRef, r *usage.Request) error {
				got = append(got, fmt.Sprintf("%s %s %q %q %s %d %+v %d %d", s.Agent, s.ID, s.Project, s.CWD,
					rq.Model(r), r.Key, r.Usage, r.Time, r.LineID()))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) < 50 {
				t.Fatalf("only %d requests: the test data is not what this test needs", len(want))
			}
			if len(got) != len(want) {
				t.Fatalf("%d requests, Consumption %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("request %d:\n got %s\nwant %s", i, got[i], want[i])
				}
			}
			errs := 0
			for _, su := range sus {
				errs += len(su.Errors)
			}
			if rq.Unread != errs {
				t.Errorf("%d unread files, Consumption's errors %d", rq.Unread, errs)
			}
		})
	}
}
