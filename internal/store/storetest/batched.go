package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testTransitionBatched: batched transitions land as the immediate ones
// do (every field, several shapes, two of one job in order, interleaved
// with other operations), and a missed guard among them fails the whole
// Write with ErrConflict, committing nothing.
func testTransitionBatched(t *testing.T, s store.Store) {
	insert(t, s, newJob("a", "t", T0), newJob("b", "t", T0), newJob("c", "t", T0))
	at := T0.Add(time.Minute)
	start := func(id string) store.JobTransitionParams {
		return store.JobTransitionParams{ID: id, FromStates: []store.State{store.StateLeased}, ExpectAttempt: 1, At: at.Add(time.Second),
			Set: store.JobSet{State: store.Ptr(store.StateRunning), StartedAt: store.Ptr(at.Add(time.Second)), Held: store.Ptr(false),
				ExitCode: store.Ptr(3), Result: store.Ptr([]byte("r")), CancelRequested: store.Ptr(true)}}
	}
	write(t, s, func(w store.Writer) error {
		for _, p := range []store.JobTransitionParams{lease("a", 0, at), lease("b", 0, at), start("a")} {
			if err := w.JobTransitionBatched(ctx, p); err != nil {
				return err
			}
		}
		if err := w.EventAppend(ctx, []store.Event{{JobID: "a", Type: store.EventLeased, At: at}}); err != nil {
			return err
		}
		return w.JobTransitionBatched(ctx, store.JobTransitionParams{ID: "c", ExpectAttempt: store.AnyAttempt, At: at,
			Set: store.JobSet{Priority: store.Ptr(900), ClearExitCode: true}})
	})
	a, b, c := get(t, s, "a"), get(t, s, "b"), get(t, s, "c")
	if a.State != store.StateRunning || a.Attempt != 1 || a.WorkerID != "w1" || !a.StartedAt.Equal(at.Add(time.Second)) ||
		a.ExitCode == nil || *a.ExitCode != 3 || string(a.Result) != "r" || !a.CancelRequested || !a.UpdatedAt.Equal(at.Add(time.Second)) {
		t.Errorf("a after lease and start: %+v", a)
	}
	if b.State != store.StateLeased || b.Attempt != 1 || !b.LeaseExpiresAt.Equal(at.Add(30*time.Second)) {
		t.Errorf("b after lease: %+v", b)
	}
	if c.Priority != 900 || c.State != store.StatePending {
		t.Errorf("c after reprioritize: %+v", c)
	}
	// b is leased at attempt 1: a lease from pending at attempt 0 misses.
	err := s.Write(ctx, func(w store.Writer) error {
		if err := w.JobTransitionBatched(ctx, store.JobTransitionParams{ID: "c", ExpectAttempt: 0, At: at,
			FromStates: []store.State{store.StatePending}, Set: store.JobSet{Priority: store.Ptr(1)}}); err != nil {
			return err
		}
		return w.JobTransitionBatched(ctx, lease("b", 0, at))
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a batch with a missed guard: %v, want ErrConflict", err)
	}
	if got := get(t, s, "c"); got.Priority != 900 {
		t.Errorf("a batch that failed committed c's change: priority %d", got.Priority)
	}
}

// testInsertBatched: batched inserts read back as inserted, a transition
// of a job inserted in the same Write applies after it, and a taken id
// fails the Write with ErrExists, committing nothing of it.
func testInsertBatched(t *testing.T, s store.Store) {
	at := T0.Add(time.Minute)
	a, b := newJob("a", "t", T0), newJob("b", "t", T0)
	b.IdempotencyKey = "key-b"
	write(t, s, func(w store.Writer) error {
		for _, j := range []store.Job{a, b} {
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return w.JobTransitionBatched(ctx, lease("a", 0, at))
	})
	if got := get(t, s, "a"); got.State != store.StateLeased || got.Attempt != 1 {
		t.Errorf("a inserted and leased in one Write: %+v", got)
	}
	diff(t, "b", b, get(t, s, "b"))
	err := s.Write(ctx, func(w store.Writer) error {
		if err := w.JobInsertBatched(ctx, newJob("c", "t", T0)); err != nil {
			return err
		}
		return w.JobInsertBatched(ctx, newJob("a", "t", T0))
	})
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("a batch with a taken id: %v, want ErrExists", err)
	}
	if _, err := s.JobGet(ctx, "c"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("c of the failed batch was stored: %v", err)
	}
}

// testInterleavedOperationsKeepTheirOrder: in one Write, executions and
// events interleaved with transitions and inserts (as the Writes of
// several dispatcher batches replayed into one transaction are) land as
// if each ran at once: a second upsert of one execution replaces the first, and
// events get increasing ids in the order they were appended, each set in
// the caller's slice once the Write returns.
func testInterleavedOperationsKeepTheirOrder(t *testing.T, s store.Store) {
	at := T0.Add(time.Minute)
	leased := func(id string) store.Execution {
		return store.Execution{JobID: id, Attempt: 1, WorkerID: "w1", LeasedAt: at}
	}
	batches := [][]store.Event{
		{{JobID: "a", Type: store.EventSubmitted, At: T0}, {JobID: "b", Type: store.EventSubmitted, At: T0}},
		{{JobID: "a", Type: store.EventLeased, At: at}},
		{{JobID: "a", Type: store.EventSucceeded, At: at}, {JobID: "b", Type: store.EventLeased, At: at}},
	}
	write(t, s, func(w store.Writer) error {
		for _, j := range []store.Job{newJob("a", "t", T0), newJob("b", "t", T0)} {
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		if err := w.EventAppend(ctx, batches[0]); err != nil {
			return err
		}
		if err := w.JobTransitionBatched(ctx, lease("a", 0, at)); err != nil {
			return err
		}
		if err := w.ExecutionUpsertMany(ctx, []store.Execution{leased("a")}); err != nil {
			return err
		}
		if err := w.EventAppend(ctx, batches[1]); err != nil {
			return err
		}
		done := leased("a")
		done.FinishedAt, done.Outcome = at.Add(time.Second), store.OutcomeSucceeded
		if err := w.ExecutionUpsertMany(ctx, []store.Execution{done, leased("b")}); err != nil {
			return err
		}
		if err := w.JobTransitionBatched(ctx, lease("b", 0, at)); err != nil {
			return err
		}
		return w.EventAppend(ctx, batches[2])
	})
	var ids []int64
	for _, b := range batches {
		for _, e := range b {
			ids = append(ids, e.ID)
		}
	}
	for i := range ids {
		if ids[i] == 0 || (i > 0 && ids[i] <= ids[i-1]) {
			t.Fatalf("event ids in append order: %v, want increasing and set", ids)
		}
	}
	got, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("%d events stored, want %d", len(got), len(ids))
	}
	for i, e := range got {
		if e.ID != ids[i] {
			t.Errorf("event %d: stored id %d, the caller's %d", i, e.ID, ids[i])
		}
	}
	es, err := s.ExecutionList(ctx, store.ExecutionListParams{JobID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Outcome != store.OutcomeSucceeded || !es[0].FinishedAt.Equal(at.Add(time.Second)) {
		t.Errorf("a's execution after two upserts in one Write: %+v", es)
	}
	if b := get(t, s, "b"); b.State != store.StateLeased {
		t.Errorf("b after its lease: %+v", b)
	}
}
