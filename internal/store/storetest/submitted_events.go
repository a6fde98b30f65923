package storetest

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testSubmittedEvents: the submitted event a job row holds (package
// store, "The submitted event in the job row") comes back from EventList
// among the stored ones, in id order, as JobSubmittedEvent gives it (a
// reprioritized job's with the priority it was submitted with); every
// filter and the after-id cursor apply to it; the last id counts it; a
// job without one (written before) keeps its row; deleting the job turns
// the event into a row with its id; event retention takes it.
func testSubmittedEvents(t *testing.T, s store.Store) {
	t1, t2 := T0.Add(time.Second), T0.Add(2*time.Second)
	ids := func(v ...int64) []int64 { return v }
	held := func(id, tenant string, at time.Time, eventID int64, actor string) store.Job {
		j := newJob(id, tenant, at)
		j.SubmitEventID, j.SubmitActor = eventID, actor
		return j
	}
	a, b, c := held("a", "acme", T0, 1, "open"), newJob("b", "globex", t1), held("c", "globex", t2, 4, "tenant:globex")
	write(t, s, func(w store.Writer) error {
		if err := w.JobInsert(ctx, a); err != nil {
			return err
		}
		if err := w.JobInsertBatched(ctx, c); err != nil {
			return err
		}
		if err := w.JobInsert(ctx, b); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{
			withSynth(store.JobSubmittedEvent(a)),
			// b's submitted event is a row (a job written before).
			store.SubmittedEvent(2, "b", "globex", t1, "open", b.Type, b.Lane, b.Priority),
			{ID: 3, JobID: "a", Tenant: "acme", Type: store.EventHeld, At: t1, Actor: "admin"},
			withSynth(store.JobSubmittedEvent(c)),
		})
	})
	// c is reprioritized: its submitted event keeps 500.
	write(t, s, func(w store.Writer) error {
		return w.JobTransition(ctx, store.JobTransitionParams{ID: "c", ExpectAttempt: store.AnyAttempt, At: t2,
			Set: store.JobSet{Priority: id2(900), SubmitPriority: id2(500)}})
	})

	got, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Event{
		store.SubmittedEvent(1, "a", "acme", T0, "open", "report", "default", 500),
		store.SubmittedEvent(2, "b", "globex", t1, "open", "report", "default", 500),
		{ID: 3, JobID: "a", Tenant: "acme", Type: store.EventHeld, At: t1, Actor: "admin"},
		store.SubmittedEvent(4, "c", "globex", t2, "tenant:globex", "report", "default", 500),
	}
	diff(t, "all events", want, got)
	if j, err := s.JobGet(ctx, "c"); err != nil || j.SubmitEventID != 4 || j.SubmitActor != "tenant:globex" ||
		j.SubmitPriority == nil || *j.SubmitPriority != 500 || j.Priority != 900 {
		t.Errorf("job c: %+v, %v", j, err)
	}

	for name, tc := range map[string]struct {
		p    store.EventListParams
		want []int64
	}{
		"after 1":        {store.EventListParams{AfterID: 1}, ids(2, 3, 4)},
		"newest, 2":      {store.EventListParams{Newest: true, Limit: 2}, ids(4, 3)},
		"newest after 1": {store.EventListParams{Newest: true, AfterID: 1}, ids(4, 3, 2)},
		"job a":          {store.EventListParams{JobID: "a"}, ids(1, 3)},
		"tenant globex":  {store.EventListParams{Tenant: "globex"}, ids(2, 4)},
		"submitted":      {store.EventListParams{Types: []store.EventType{store.EventSubmitted}}, ids(1, 2, 4)},
		"held":           {store.EventListParams{Types: []store.EventType{store.EventHeld}}, ids(3)},
		"actor open":     {store.EventListParams{Actor: "open"}, ids(1, 2)},
		"actor globex":   {store.EventListParams{Actor: "tenant:globex"}, ids(4)},
		"since t1":       {store.EventListParams{Since: t1}, ids(2, 3, 4)},
		"until t1":       {store.EventListParams{Until: t1}, ids(1)},
		"schedule":       {store.EventListParams{ScheduleID: "s"}, nil},
	} {
		wantIDs(t, s, name, tc.p, tc.want)
	}
	if last, err := s.EventLastID(ctx); err != nil || last != 4 {
		t.Errorf("EventLastID = %d, %v; want 4 (c's submitted event, in its row)", last, err)
	}

	// Deleting c keeps its submitted event, now a row with its id.
	done := store.StateSucceeded
	write(t, s, func(w store.Writer) error {
		return w.JobTransition(ctx, store.JobTransitionParams{ID: "c", ExpectAttempt: store.AnyAttempt, At: t2,
			Set: store.JobSet{State: &done, FinishedAt: &t2}})
	})
	write(t, s, func(w store.Writer) error {
		p, err := w.JobDeleteFinished(ctx, t2.Add(time.Second), 10)
		if err == nil && p.Deleted != 1 {
			t.Errorf("JobDeleteFinished deleted %d jobs, want 1", p.Deleted)
		}
		return err
	})
	got, err = s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "after c's deletion", want, got)

	// Event retention before t1 takes a's submitted event (the row
	// keeps, its job stays) and stops at b's.
	write(t, s, func(w store.Writer) error {
		p, err := w.EventDeleteBefore(ctx, t1, 10)
		if err == nil && p.Deleted != 1 {
			t.Errorf("EventDeleteBefore deleted %d, want 1", p.Deleted)
		}
		return err
	})
	wantIDs(t, s, "after retention", store.EventListParams{}, ids(2, 3, 4))
	if j, err := s.JobGet(ctx, "a"); err != nil || j.SubmitEventID != 0 {
		t.Errorf("job a after retention: submit event %d, %v; want none", j.SubmitEventID, err)
	}
	if last, err := s.EventLastID(ctx); err != nil || last != 4 {
		t.Errorf("EventLastID after retention = %d, %v; want 4", last, err)
	}
	// Retention past every event takes the rest, stored or held.
	write(t, s, func(w store.Writer) error {
		_, err := w.EventDeleteBefore(ctx, t2.Add(time.Second), 10)
		return err
	})
	wantIDs(t, s, "after full retention", store.EventListParams{}, nil)
	if last, err := s.EventLastID(ctx); err != nil || last != 4 {
		t.Errorf("EventLastID after full retention = %d, %v; want 4", last, err)
	}
}

// testRetentionOfRowlessEvents: event retention that takes only events
// the job rows hold (no events row was ever written) keeps the last id:
// the ids drawn after a restart never reuse one a client has seen.
func testRetentionOfRowlessEvents(t *testing.T, s store.Store) {
	t1 := T0.Add(time.Minute)
	a, b := newJob("a", "acme", T0), newJob("b", "acme", t1)
	a.SubmitEventID, a.SubmitActor = 7, "open"
	b.SubmitEventID, b.SubmitActor = 9, "open"
	write(t, s, func(w store.Writer) error {
		if err := w.JobInsert(ctx, a); err != nil {
			return err
		}
		return w.JobInsert(ctx, b)
	})
	if last, err := s.EventLastID(ctx); err != nil || last != 9 {
		t.Fatalf("EventLastID = %d, %v; want 9", last, err)
	}
	write(t, s, func(w store.Writer) error {
		p, err := w.EventDeleteBefore(ctx, t1.Add(time.Second), 10)
		if err == nil && p.Deleted != 2 {
			t.Errorf("EventDeleteBefore deleted %d, want 2", p.Deleted)
		}
		return err
	})
	wantIDs(t, s, "after retention", store.EventListParams{}, nil)
	if last, err := s.EventLastID(ctx); err != nil || last != 9 {
		t.Errorf("EventLastID after retention = %d, %v; want 9", last, err)
	}
}
