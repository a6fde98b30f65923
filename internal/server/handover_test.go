package server

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// The rule of internal/ha/doc.go, "No finished work is failed for the
// server's silence": a new term (here a server started on the store the
// old one left) counts lease_ttl from its own start for every worker and
// lease it inherits, however long the worker has been silent to the old
// leader; a completion for an attempt that is still the worker's is
// accepted; and only a worker silent for lease_ttl of the new term is
// lost.
func TestANewTermCountsLeaseTTLFromItsStart(t *testing.T) {
	cfg := defaultConfig()
	ttl := cfg.Server.LeaseTTL.D()
	path := filepath.Join(t.TempDir(), "fairway.db")
	clock := &fakeClock{t: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	old := startHarness(t, cfg, path, clock)
	w := old.register(api.RegisterRequest{Name: "w", Types: []string{"report"}, Slots: 2})
	a, b := old.submit(api.JobSpec{Type: "report", Command: []string{"true"}}), old.submit(api.JobSpec{Type: "report", Command: []string{"true"}})
	leases := old.lease(w, 2)
	if len(leases) != 2 {
		t.Fatalf("leased %d, want 2", len(leases))
	}
	for _, l := range leases {
		if r := old.start(w, l.Job.ID, l.Attempt); !r.OK {
			t.Fatalf("start %s: %+v", l.Job.ID, r.Error)
		}
	}
	old.stop() // the old leader goes silent: the worker's calls no longer reach anyone

	clock.Advance(ttl + 5*time.Second) // longer than lease_ttl before the next term begins
	next := startHarness(t, cfg, path, clock)
	clock.Advance(ttl - time.Second)
	next.tick()
	if r := next.complete(w, api.Completion{JobID: a.ID, Attempt: 1, Outcome: api.OutcomeSucceeded}); !r.OK {
		t.Fatalf("a completion for an inherited attempt, %s into the new term: %+v", ttl-time.Second, r.Error)
	}
	if j := next.get(a.ID); j.State != api.StateSucceeded {
		t.Errorf("job a is %s, want succeeded", j.State)
	}
	if j := next.get(b.ID); j.State != api.StateRunning {
		t.Errorf("job b is %s within lease_ttl of the new term, want running", j.State)
	}
	// Past lease_ttl of the new term, since the completion, with no word
	// from the worker: it is lost (the bound is lease_ttl, not forever).
	clock.Advance(ttl + time.Second)
	next.tick()
	if j := next.get(b.ID); j.State == api.StateRunning || !slices.Contains(next.events(b.ID), string(store.EventLeaseExpired)) {
		t.Errorf("job b is %s with events %v after the worker's silence past lease_ttl, want its lease expired", j.State, next.events(b.ID))
	}
}
