package storetest

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testAttemptEvents: the events an attempt's rows hold (package store,
// "Attempt history in the execution row") come back from EventList among
// the stored ones, in id order, with their types, actors, times and
// details; every filter and the after-id cursor apply to both; the last
// id counts synthesised events; event retention takes them too.
func testAttemptEvents(t *testing.T, s store.Store) {
	t1, t2, t3, t4 := T0.Add(time.Second), T0.Add(2*time.Second), T0.Add(3*time.Second), T0.Add(4*time.Second)
	insert(t, s, newJob("a", "acme", T0), newJob("b", "globex", T0))
	one, exit := 1, 0
	running := store.StateRunning
	leased := store.StateLeased
	w1, w2 := "w1", "w2"
	ids := func(v ...int64) []int64 { return v }
	id := func(n int64) *int64 { return &n }

	// Batch 1: both submitted (rows); a leased on w1 (job row).
	write(t, s, func(w store.Writer) error {
		if err := w.JobTransition(ctx, store.JobTransitionParams{ID: "a", ExpectAttempt: 0, At: t1, Set: store.JobSet{
			State: &leased, Attempt: &one, WorkerID: &w1, LeaseEventID: id(3), LeasedAt: &t1}}); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{
			{ID: 1, JobID: "a", Tenant: "acme", Type: store.EventSubmitted, At: T0, Actor: "open"},
			{ID: 2, JobID: "b", Tenant: "globex", Type: store.EventSubmitted, At: T0, Actor: "open"},
			withSynth(store.LeasedEvent(3, "a", 1, "acme", t1, w1)),
		})
	})
	// Batch 2: a started (job row); b leased on w2 (job row); an
	// operator's cancel of b (row).
	write(t, s, func(w store.Writer) error {
		if err := w.JobTransition(ctx, store.JobTransitionParams{ID: "a", ExpectAttempt: 1, At: t2, Set: store.JobSet{
			State: &running, StartedAt: &t1, StartEventID: id(4), StartEventAt: &t2}}); err != nil {
			return err
		}
		if err := w.JobTransition(ctx, store.JobTransitionParams{ID: "b", ExpectAttempt: 0, At: t2, Set: store.JobSet{
			State: &leased, Attempt: &one, WorkerID: &w2, LeaseEventID: id(5), LeasedAt: &t2}}); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{
			withSynth(store.StartedEvent(4, "a", 1, "acme", t2, w1, time.Time{})),
			withSynth(store.LeasedEvent(5, "b", 1, "globex", t2, w2)),
			{ID: 6, JobID: "b", Attempt: 1, Tenant: "globex", Type: store.EventCancelRequested, At: t2, Actor: "admin key 1234 (ops)"},
		})
	})
	live := []int64{1, 2, 3, 4, 5, 6}
	wantIDs(t, s, "while running", store.EventListParams{}, live)

	// Batch 3: a succeeds, b fails with a start reported with it; their
	// execution rows take the events over and the job rows let go.
	ea := store.Execution{JobID: "a", Attempt: 1, WorkerID: w1, LeasedAt: t1, StartedAt: t1, FinishedAt: t3,
		Outcome: store.OutcomeSucceeded, ExitCode: &exit, LeaseEventID: 3, StartEventID: 4, StartEventAt: t2, EndEventID: 7}
	eb := store.Execution{JobID: "b", Attempt: 1, WorkerID: w2, LeasedAt: t2, StartedAt: t2.Add(time.Millisecond), FinishedAt: t3,
		Outcome: store.OutcomeFailed, FailureClass: store.FailExitCode, Error: "exit 2", LeaseEventID: 5, StartEventID: 8, EndEventID: 10}
	write(t, s, func(w store.Writer) error {
		var none int64
		for _, e := range []store.Execution{ea, eb} {
			state := store.StateSucceeded
			if e.Outcome != store.OutcomeSucceeded {
				state = store.StateFailed
			}
			if err := w.JobTransition(ctx, store.JobTransitionParams{ID: e.JobID, ExpectAttempt: 1, At: t3, Set: store.JobSet{
				State: &state, FinishedAt: &t3, LeaseEventID: &none, StartEventID: &none,
				LeasedAt: &time.Time{}, StartEventAt: &time.Time{}}}); err != nil {
				return err
			}
		}
		if err := w.ExecutionUpsertMany(ctx, []store.Execution{ea, eb}); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{
			withSynth(store.OutcomeEvent(7, "acme", ea)),
			withSynth(store.StartedEvent(8, "b", 1, "globex", t3, w2, eb.StartedAt)),
			{ID: 9, JobID: "b", Attempt: 1, Tenant: "globex", Type: store.EventOutputTruncated, At: t3, Actor: "worker:w2"},
			withSynth(store.OutcomeEvent(10, "globex", eb)),
		})
	})

	all, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Event{
		{ID: 1, JobID: "a", Tenant: "acme", Type: store.EventSubmitted, At: T0, Actor: "open"},
		{ID: 2, JobID: "b", Tenant: "globex", Type: store.EventSubmitted, At: T0, Actor: "open"},
		store.LeasedEvent(3, "a", 1, "acme", t1, w1),
		store.StartedEvent(4, "a", 1, "acme", t2, w1, time.Time{}),
		store.LeasedEvent(5, "b", 1, "globex", t2, w2),
		{ID: 6, JobID: "b", Attempt: 1, Tenant: "globex", Type: store.EventCancelRequested, At: t2, Actor: "admin key 1234 (ops)"},
		store.OutcomeEvent(7, "acme", ea),
		store.StartedEvent(8, "b", 1, "globex", t3, w2, eb.StartedAt),
		{ID: 9, JobID: "b", Attempt: 1, Tenant: "globex", Type: store.EventOutputTruncated, At: t3, Actor: "worker:w2"},
		store.OutcomeEvent(10, "globex", eb),
	}
	diff(t, "every event", want, all)
	if string(all[6].Detail) != `{"exit_code":0}` || string(all[7].Detail) != `{"started_at":"2025-11-03T10:00:02.001Z"}` ||
		string(all[9].Detail) != `{"class":"exit_code","error":"exit 2"}` || all[9].Type != store.EventFailed {
		t.Errorf("details: %s %s %s %s", all[6].Detail, all[7].Detail, all[9].Detail, all[9].Type)
	}

	for name, c := range map[string]struct {
		p    store.EventListParams
		want []int64
	}{
		"job a":            {store.EventListParams{JobID: "a"}, ids(1, 3, 4, 7)},
		"job b after 5":    {store.EventListParams{JobID: "b", AfterID: 5}, ids(6, 8, 9, 10)},
		"tenant globex":    {store.EventListParams{Tenant: "globex"}, ids(2, 5, 6, 8, 9, 10)},
		"page after 2":     {store.EventListParams{AfterID: 2, Limit: 3}, ids(3, 4, 5)},
		"page after 5":     {store.EventListParams{AfterID: 5, Limit: 3}, ids(6, 7, 8)},
		"newest":           {store.EventListParams{Newest: true, Limit: 4}, ids(10, 9, 8, 7)},
		"succeeded,failed": {store.EventListParams{Types: []store.EventType{store.EventSucceeded, store.EventFailed}}, ids(7, 10)},
		"started":          {store.EventListParams{Types: []store.EventType{store.EventStarted}}, ids(4, 8)},
		"leased,submitted": {store.EventListParams{Types: []store.EventType{store.EventLeased, store.EventSubmitted}}, ids(1, 2, 3, 5)},
		"actor worker:w2":  {store.EventListParams{Actor: "worker:w2"}, ids(8, 9, 10)},
		"actor system":     {store.EventListParams{Actor: "system"}, ids(3, 5)},
		"actor admin":      {store.EventListParams{Actor: "admin"}, ids(6)},
		"since t2":         {store.EventListParams{Since: t2}, ids(4, 5, 6, 7, 8, 9, 10)},
		"until t2":         {store.EventListParams{Until: t2}, ids(1, 2, 3)},
		"schedule":         {store.EventListParams{ScheduleID: "s"}, nil},
	} {
		wantIDs(t, s, name, c.p, c.want)
	}

	last, err := s.EventLastID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last != 10 {
		t.Errorf("last id %d, want 10", last)
	}
	// A batch of synthesised events alone still moves the last id.
	write(t, s, func(w store.Writer) error {
		if err := w.JobTransition(ctx, store.JobTransitionParams{ID: "a", ExpectAttempt: 1, At: t4, Set: store.JobSet{
			State: &leased, Attempt: id2(2), WorkerID: &w1, LeaseEventID: id(11), LeasedAt: &t4}}); err != nil {
			return err
		}
		return w.EventAppend(ctx, []store.Event{withSynth(store.LeasedEvent(11, "a", 2, "acme", t4, w1))})
	})
	if last, err = s.EventLastID(ctx); err != nil || last != 11 {
		t.Errorf("last id %d (%v), want 11", last, err)
	}
	// An event the store numbers comes after them.
	ev := []store.Event{{Type: store.EventLanePaused, At: t4, Actor: "system"}}
	write(t, s, func(w store.Writer) error { return w.EventAppend(ctx, ev) })
	if ev[0].ID != 12 {
		t.Errorf("store-numbered event got id %d, want 12", ev[0].ID)
	}

	// Retention up to t3 takes the events of a's and b's first attempts,
	// stored and synthesised, up to the last stored one it deletes (9).
	write(t, s, func(w store.Writer) error {
		_, err := w.EventDeleteBefore(ctx, t3.Add(time.Nanosecond*1000), 100)
		return err
	})
	wantIDs(t, s, "after retention", store.EventListParams{}, ids(10, 11, 12))
}

func withSynth(e store.Event) store.Event { e.Synthesised = true; return e }

func id2(n int) *int { return &n }

func wantIDs(t *testing.T, s store.Store, what string, p store.EventListParams, want []int64) {
	t.Helper()
	got, err := s.EventList(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var ids []int64
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	diff(t, what, want, ids)
}
