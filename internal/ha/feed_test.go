package ha

import (
	"net/http/httptest"
	"testing"
)

// The audit feed holds running jobs' live attempt events that the store
// keeps in no index (store doc.go, "The hot row and its indexes"): a
// standby forwards it to the leader, which answers them from its
// dispatcher, as a listing of unfinished jobs; one job's or one
// schedule's events it answers itself (by key, or no live events).
func TestAStandbyForwardsTheAuditFeed(t *testing.T) {
	for target, forwarded := range map[string]bool{
		"/api/v1/events":                        true,
		"/api/v1/events?tenant=acme&after_id=9": true,
		"/api/v1/events?job_id=j1":              false,
		"/api/v1/events?schedule_id=s1":         false,
		"/api/v1/jobs/j1/events":                false,
		"/api/v1/jobs?state=running":            true,
		"/api/v1/jobs?state=succeeded":          false,
	} {
		r := httptest.NewRequest("GET", target, nil)
		if got := readsLeaderMemory(r); got != forwarded {
			t.Errorf("%s: forwarded to the leader = %v, want %v", target, got, forwarded)
		}
		if served := servedByStandby(r); served == forwarded {
			t.Errorf("%s: served by the standby = %v, want %v", target, served, !forwarded)
		}
	}
}
