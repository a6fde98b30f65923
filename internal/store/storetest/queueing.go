package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Both drivers queue the dispatcher's transactions (package queued): the
// tests below hold them to store.Queueing's contract.

func queueing(t *testing.T, s store.Store) store.Queueing {
	t.Helper()
	q, ok := s.(store.Queueing)
	if !ok {
		t.Fatalf("%T does not implement store.Queueing", s)
	}
	return q
}

func insertBatched(jobs ...store.Job) func(w store.Writer) error {
	return func(w store.Writer) error {
		for _, j := range jobs {
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return nil
	}
}

// testQueuedWriteIsRead: a Write of operations that may run later is
// visible to a read made after its WriteDeferred returned, and its channel
// then reports it committed.
func testQueuedWriteIsRead(t *testing.T, s store.Store) {
	queueing(t, s)
	ch, err := s.WriteDeferred(ctx, insertBatched(newJob("a", "t", T0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobGet(ctx, "a"); err != nil {
		t.Fatalf("a queued Write is not visible to a read made after it returned: %v", err)
	}
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// testQueuedAndDirectKeepOrder: a Write that must answer (JobTransition)
// runs after every queued one, and sees them; a Write that records
// operations and then goes direct commits both, or neither if fn fails.
func testQueuedAndDirectKeepOrder(t *testing.T, s store.Store) {
	queueing(t, s)
	if _, err := s.WriteDeferred(ctx, insertBatched(newJob("a", "t", T0))); err != nil {
		t.Fatal(err)
	}
	// Direct: the transition's answer needs the queued insert applied.
	write(t, s, func(w store.Writer) error {
		return w.JobTransition(ctx, store.JobTransitionParams{ID: "a", ExpectAttempt: 0, At: T0,
			FromStates: []store.State{store.StatePending}, Set: store.JobSet{Priority: store.Ptr(7)}})
	})
	// Recorded, then direct, in one Write: committed together.
	write(t, s, func(w store.Writer) error {
		if err := insertBatched(newJob("b", "t", T0))(w); err != nil {
			return err
		}
		return w.JobInsert(ctx, newJob("c", "t", T0))
	})
	got, err := s.JobGetMany(ctx, []string{"a", "b", "c"})
	if err != nil || len(got) != 3 || got[0].Priority != 7 {
		t.Fatalf("after queued and direct Writes: %d jobs, %v (want 3, job a at priority 7)", len(got), err)
	}
	// The same, failing after it went direct: nothing of it stays.
	err = s.Write(ctx, func(w store.Writer) error {
		if err := insertBatched(newJob("d", "t", T0))(w); err != nil {
			return err
		}
		if err := w.JobInsert(ctx, newJob("e", "t", T0)); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Write = %v, want boom", err)
	}
	if got, _ := s.JobGetMany(ctx, []string{"d", "e"}); len(got) != 0 {
		t.Fatalf("a rolled-back Write left %d jobs", len(got))
	}
}

// testQueuedGuardMissRefusesWrites: a batched transition whose guard
// misses fails its Write's channel with ErrConflict, rolls back what was
// queued with it, and the store refuses writes (reads go on) until Resume;
// then it holds exactly what was committed before and takes writes again.
func testQueuedGuardMissRefusesWrites(t *testing.T, s store.Store) {
	q := queueing(t, s)
	write(t, s, insertBatched(newJob("kept", "t", T0)))
	ch, err := s.WriteDeferred(ctx, func(w store.Writer) error {
		if err := insertBatched(newJob("lost", "t", T0))(w); err != nil {
			return err
		}
		return w.JobTransitionBatched(ctx, lease("kept", 5, T0)) // the job is at attempt 0
	})
	if err != nil {
		t.Fatalf("recording is not where a guard is checked: %v", err)
	}
	if err := <-ch; !errors.Is(err, store.ErrConflict) {
		t.Fatalf("channel = %v, want ErrConflict", err)
	}
	if _, err := s.WriteDeferred(ctx, insertBatched(newJob("x", "t", T0))); err == nil {
		t.Fatal("a Write after the failure was taken, want it refused until Resume")
	}
	if got, err := s.JobGetMany(ctx, []string{"kept", "lost", "x"}); err != nil || len(got) != 1 || got[0].State != store.StatePending {
		t.Fatalf("reads after the failure: %d jobs, %v (want the kept job, pending)", len(got), err)
	}
	q.Resume()
	write(t, s, func(w store.Writer) error { return w.JobTransitionBatched(ctx, lease("kept", 0, T0.Add(time.Second))) })
	if j, err := s.JobGet(ctx, "kept"); err != nil || j.State != store.StateLeased {
		t.Fatalf("after Resume: %v, %v (want leased)", j.State, err)
	}
}
