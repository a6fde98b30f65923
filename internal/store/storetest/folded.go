package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testInsertLeasedInOneWrite: a job inserted and leased (then started) in
// one Write, as the dispatcher submits a job a waiting worker takes, reads
// back with every field the transitions set, and its submitted, leased
// and started events come back from the row as they do when the lease is
// a later Write's; a second job whose lease misses its guard in a later
// Write (held insert, attempt guard wrong; held insert, state guard
// wrong) fails that Write with ErrConflict, committing nothing of it.
func testInsertLeasedInOneWrite(t *testing.T, s store.Store) {
	t1, t2 := T0.Add(time.Second), T0.Add(2*time.Second)
	one := 1
	leased, running := store.StateLeased, store.StateRunning
	w1 := "w1"
	id := func(n int64) *int64 { return &n }
	a := newJob("a", "acme", T0)
	a.SubmitEventID, a.SubmitActor = 1, "open"
	leaseA := store.JobTransitionParams{ID: "a", FromStates: []store.State{store.StatePending}, ExpectAttempt: 0, At: t1,
		Set: store.JobSet{State: &leased, Attempt: &one, WorkerID: &w1, LeaseExpiresAt: store.Ptr(t1.Add(30 * time.Second)),
			LeaseEventID: id(2), LeasedAt: &t1, EnqueuedAt: &T0}}
	startA := store.JobTransitionParams{ID: "a", FromStates: []store.State{store.StateLeased}, ExpectAttempt: 1, At: t2,
		Set: store.JobSet{State: &running, StartedAt: &t2, StartEventID: id(3), StartEventAt: &t2}}
	write(t, s, func(w store.Writer) error {
		if err := w.JobInsertBatched(ctx, a); err != nil {
			return err
		}
		if err := w.JobTransitionBatched(ctx, leaseA); err != nil {
			return err
		}
		if err := w.JobTransition(ctx, startA); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{
			withSynth(store.JobSubmittedEvent(a)),
			withSynth(store.LeasedEvent(2, "a", 1, "acme", t1, w1)),
			withSynth(store.StartedEvent(3, "a", 1, "acme", t2, w1, time.Time{})),
		})
	})
	want := a
	want.State, want.Attempt, want.WorkerID, want.LeaseExpiresAt = running, 1, w1, t1.Add(30*time.Second)
	want.LeaseEventID, want.LeasedAt, want.StartedAt, want.StartEventID, want.StartEventAt = 2, t1, t2, 3, t2
	want.UpdatedAt = t2
	diff(t, "a inserted, leased and started in one Write", want, get(t, s, "a"))
	got, err := s.EventList(ctx, store.EventListParams{JobID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "a's events", []store.Event{
		store.SubmittedEvent(1, "a", "acme", T0, "open", "report", "default", 500),
		store.LeasedEvent(2, "a", 1, "acme", t1, w1),
		store.StartedEvent(3, "a", 1, "acme", t2, w1, time.Time{}),
	}, got)
	if un, err := s.JobListUnfinished(ctx); err != nil || len(un) != 1 || un[0].LeaseEventID != 2 || un[0].StartEventID != 3 {
		t.Errorf("JobListUnfinished = %+v, %v", un, err)
	}

	for _, c := range []struct {
		name string
		p    store.JobTransitionParams
	}{
		{"attempt", store.JobTransitionParams{ID: "b", FromStates: []store.State{store.StatePending}, ExpectAttempt: 1, At: t1,
			Set: store.JobSet{State: &leased, Attempt: store.Ptr(2)}}},
		{"state", store.JobTransitionParams{ID: "b", FromStates: []store.State{store.StateLeased}, ExpectAttempt: 0, At: t1,
			Set: store.JobSet{State: &running}}},
	} {
		for _, batched := range []bool{false, true} {
			err := s.Write(ctx, func(w store.Writer) error {
				if err := w.JobInsertBatched(ctx, newJob("c", "acme", T0)); err != nil {
					return err
				}
				if err := w.JobInsertBatched(ctx, newJob("b", "acme", T0)); err != nil {
					return err
				}
				if err := w.JobTransitionBatched(ctx, store.JobTransitionParams{ID: "c", FromStates: []store.State{store.StatePending},
					At: t1, Set: store.JobSet{State: &leased, Attempt: &one, WorkerID: &w1}}); err != nil {
					return err
				}
				if batched {
					return w.JobTransitionBatched(ctx, c.p)
				}
				return w.JobTransition(ctx, c.p)
			})
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s guard missed (batched %v): %v, want ErrConflict", c.name, batched, err)
			}
			for _, id := range []string{"b", "c"} {
				if _, err := s.JobGet(ctx, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s guard missed (batched %v): %s of the failed Write was stored: %v", c.name, batched, id, err)
				}
			}
		}
	}
}
