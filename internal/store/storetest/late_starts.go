package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testLateStartEvents: the started events of attempts that job rows hold
// (package store, "The finished attempt in the job row") live in two
// indexes (package sqlstore, lateStartSource): a start reported with
// the completion, one id before its outcome event, is found through the
// outcome's id; every other one through its own. The feed gives them as
// one list in id order, in pages of one either way, filtered by type,
// and event retention clears them as it clears the rest.
//
// Jobs of tenant "late", ids: x submitted 297, leased 301, started late
// 302, succeeded 303; y 298, 304, started late 305, a stored event 306,
// failed 307 (its start is not the id before its outcome); z 299, 308,
// started on its own 309, succeeded 310.
func testLateStartEvents(t *testing.T, s store.Store) {
	const tenant = "late"
	t1, t2, t3 := T0.Add(time.Second), T0.Add(2*time.Second), T0.Add(3*time.Second)
	x, y, z := newJob("late-x", tenant, T0), newJob("late-y", tenant, T0), newJob("late-z", tenant, T0)
	x.SubmitEventID, y.SubmitEventID, z.SubmitEventID = 297, 298, 299
	x.SubmitActor, y.SubmitActor, z.SubmitActor = "open", "open", "open"
	insert(t, s, x, y, z)
	running := store.StateRunning
	write(t, s, func(w store.Writer) error {
		for _, l := range []struct {
			id string
			ev int64
		}{{x.ID, 301}, {y.ID, 304}, {z.ID, 308}} {
			if err := w.JobTransition(ctx, store.JobTransitionParams{ID: l.id, At: t1,
				FromStates: []store.State{store.StatePending}, Set: store.JobSet{State: &running, Attempt: id2(1),
					WorkerID: store.Ptr("w1"), StartedAt: &t1, LeaseEventID: &l.ev, LeasedAt: &t1}}); err != nil {
				return err
			}
		}
		return w.JobTransition(ctx, store.JobTransitionParams{ID: z.ID, ExpectAttempt: 1, At: t1, Set: store.JobSet{
			StartEventID: store.Ptr(int64(309)), StartEventAt: &t1}})
	})
	attempt := func(id string, lease, start, end int64, startAt time.Time, o store.Outcome) store.Execution {
		return store.Execution{JobID: id, Attempt: 1, WorkerID: "w1", LeasedAt: t1, StartedAt: t2, FinishedAt: t3,
			Outcome: o, Duration: time.Second, LeaseEventID: lease, StartEventID: start, StartEventAt: startAt, EndEventID: end}
	}
	ex := attempt(x.ID, 301, 302, 303, time.Time{}, store.OutcomeSucceeded)
	ey := attempt(y.ID, 304, 305, 307, time.Time{}, store.OutcomeFailed)
	ez := attempt(z.ID, 308, 309, 310, t1, store.OutcomeSucceeded)
	write(t, s, func(w store.Writer) error {
		for _, e := range []store.Execution{ex, ey, ez} {
			state := store.StateSucceeded
			if e.Outcome == store.OutcomeFailed {
				state = store.StateFailed
			}
			set := store.JobSet{State: &state, FinishedAt: &e.FinishedAt, StartedAt: &e.StartedAt, HeldAttempt: &e,
				StartEventID: &e.StartEventID, StartEventAt: &e.StartEventAt}
			if err := w.JobTransitionBatched(ctx, store.JobTransitionParams{ID: e.JobID, ExpectAttempt: 1, At: t3,
				FromStates: []store.State{store.StateRunning}, Set: set}); err != nil {
				return err
			}
		}
		return w.EventAppend(ctx, []store.Event{{ID: 306, JobID: y.ID, Attempt: 1, Tenant: tenant,
			Type: store.EventOutputTruncated, At: t2, Actor: "worker:w1"}})
	})

	all := []int64{297, 298, 299, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310}
	wantIDs(t, s, "feed", store.EventListParams{Tenant: tenant}, all)
	wantIDs(t, s, "started", store.EventListParams{Tenant: tenant, Types: []store.EventType{store.EventStarted}},
		[]int64{302, 305, 309})
	wantIDs(t, s, "started after 302, up to 309", store.EventListParams{Tenant: tenant, AfterID: 302, UpToID: 309,
		Types: []store.EventType{store.EventStarted}}, []int64{305, 309})
	var forward, backward []int64
	for after := int64(0); len(forward) < 2*len(all); {
		page, err := s.EventList(ctx, store.EventListParams{Tenant: tenant, AfterID: after, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		forward, after = append(forward, page[0].ID), page[0].ID
	}
	diff(t, "pages of one, oldest first", all, forward)
	for upTo := int64(1 << 40); len(backward) < 2*len(all); {
		page, err := s.EventList(ctx, store.EventListParams{Tenant: tenant, UpToID: upTo, Newest: true, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		backward, upTo = append(backward, page[0].ID), page[0].ID-1
	}
	slices.Reverse(backward)
	diff(t, "pages of one, newest first", all, backward)
	got, err := s.EventList(ctx, store.EventListParams{JobID: x.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[2].Type != store.EventStarted || got[2].ID != 302 || got[2].Actor != "worker:w1" {
		t.Errorf("x's events: %+v, want its late start 302 third, by worker:w1", got)
	}

	// Retention up to the stored event 306 clears x's ids and y's up to
	// its start; z's and y's outcome stay.
	write(t, s, func(w store.Writer) error {
		_, err := w.EventDeleteBefore(ctx, t3, 1000)
		return err
	})
	wantIDs(t, s, "feed after event retention", store.EventListParams{Tenant: tenant}, []int64{307, 308, 309, 310})
}
