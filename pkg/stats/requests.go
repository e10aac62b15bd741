package stats

import (
	"context"
	"fmt"
	"slices"

	"github.com/sessctl/sessctl/pkg/session"
	"github.com/sessctl/sessctl/pkg/usage"
)

// Requests are the requests Consumption counts, without the sessions'
// totals: what a caller that only passes each request on needs (export
// --usage). Per session it holds only names, so that a store of 100,000
// sessions costs a few MB here rather than the hundreds that their totals,
// by-model maps and line lists take.
type Requests struct {
	// Sessions are the sessions, in the order given to CountedRequests.
	Sessions []SessionRef
	// Errors lists files that could not be read (their requests are not
	// counted), at most maxErrors of them; Unread counts them all.
	Errors []string
	Unread int
	src    *source
}

// SessionRef names a session of Requests.
type SessionRef struct {
	Agent   session.Agent
	ID      string
	Project string
	// CWD is the working directory the session's gauge file records
	// (Codex's session_meta, Kimi), "" when none: as SessionUsage.CWD
	// before the caller's own.
	CWD string
}

// maxErrors bounds Requests.Errors.
const maxErrors = 20

// CountedRequests scans the recorded usage of ss as ConsumptionWith does,
// the same requests after the same de-duplication, and keeps no totals.
// Close frees the requests' files.
func CountedRequests(ctx context.Context, ss []*session.Session, progress Progress, read ReadFile) (*Requests, error) {
	rq := &Requests{Sessions: make([]SessionRef, len(ss))}
	for i, s := range ss {
		rq.Sessions[i] = SessionRef{Agent: s.Agent, ID: s.ID, Project: s.Project}
	}
	src, err := scanUsage(ctx, planScan(session.Slice(ss), false, nil), progress, read, nil, nil, func(sess int, fu *usage.FileUsage, err error) {
		if err != nil {
			if rq.Unread++; len(rq.Errors) < maxErrors {
				rq.Errors = append(rq.Errors, fmt.Sprintf("%s: %v", fu.Path, err))
			}
		}
		if fu.Class&usage.Gauge != 0 {
			gaugeCWD(&rq.Sessions[sess].Project, &rq.Sessions[sess].CWD, fu)
		}
	})
	if err != nil {
		return nil, err
	}
	src.adopt()
	rq.src = src
	return rq, nil
}

// ConsumptionRequests is ConsumptionEach without a memo, which also
// returns the requests it counted (GroupRequests): what a report by day or
// by model needs, without holding the results. Its Sessions hold each
// session's agent alone, all such a report asks (a session's id, project
// and working directory are its result's, and a store of 100,000 sessions
// held them twice); Errors and Unread are not set (each result has its
// own). Close frees the requests' files.
func ConsumptionRequests(ctx context.Context, ss []*session.Session, progress Progress, read ReadFile, each func(i int, su *SessionUsage) error) (*Requests, error) {
	rq := &Requests{Sessions: make([]SessionRef, len(ss))}
	src, err := consume(ctx, session.Slice(slices.Clone(ss)), progress, read, nil, true, false, func(i int, su *SessionUsage) error {
		rq.Sessions[i] = SessionRef{Agent: su.Agent}
		return each(i, su)
	})
	if err != nil {
		return nil, err
	}
	src.adopt()
	rq.src = src
	return rq, nil
}

// Each calls fn with the requests, session by session in the order of
// Sessions, each session's requests by time (in the ledger's order among
// equal times): the order of EachRequest. fn may keep nothing of r.
func (rq *Requests) Each(fn func(s *SessionRef, r *usage.Request) error) error {
	if rq.src == nil {
		return nil
	}
	return rq.src.each(func(sess int, r *usage.Request) error { return fn(&rq.Sessions[sess], r) })
}

// Model returns the model name of one of the requests.
func (rq *Requests) Model(r *usage.Request) string { return rq.src.ledger.Model(r) }

// Close frees what holds the requests (the files of a scan that spilled
// to disk); Each gives nothing more.
func (rq *Requests) Close() error {
	if rq.src == nil {
		return nil
	}
	err := rq.src.close()
	rq.src = nil
	return err
}
