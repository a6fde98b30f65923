package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func insertQueued(ctx context.Context, ids ...string) func(w store.Writer) error {
	now := time.Now()
	return func(w store.Writer) error {
		for _, id := range ids {
			if err := w.JobInsertBatched(ctx, benchJob(id, now)); err != nil {
				return err
			}
		}
		return nil
	}
}

func leaseQueued(ctx context.Context, id string, expect int) func(w store.Writer) error {
	return func(w store.Writer) error {
		return w.JobTransitionBatched(ctx, store.JobTransitionParams{
			ID: id, ExpectAttempt: expect, FromStates: []store.State{store.StatePending}, At: time.Now(),
			Set: store.JobSet{State: store.Ptr(store.StateLeased), Attempt: store.Ptr(expect + 1), WorkerID: store.Ptr("w1")},
		})
	}
}

// TestQueuedWriteIsReadAndReportedDurable: a Write of operations that may
// run later returns before its transaction ran, yet a read made after it
// returned sees it (the read waits for the applier), and its channel
// reports only after the fsync.
func TestQueuedWriteIsReadAndReportedDurable(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	release := make(chan struct{})
	holdFsync(s, release, nil)

	id := store.NewID(time.Now())
	ch, err := s.WriteDeferred(ctx, insertQueued(ctx, id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobGet(ctx, id); err != nil {
		t.Fatalf("a queued Write is not visible to a read made after it returned: %v", err)
	}
	select {
	case err := <-ch:
		t.Fatalf("reported durable (%v) while the fsync was held", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// TestQueuedAndDirectKeepOrder: a Write that must answer (JobTransition)
// runs after every queued one, and sees them; a Write that records
// operations and then goes direct commits both, or neither if fn fails.
func TestQueuedAndDirectKeepOrder(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	a, b, c := store.NewID(time.Now()), store.NewID(time.Now()), store.NewID(time.Now())
	if _, err := s.WriteDeferred(ctx, insertQueued(ctx, a)); err != nil {
		t.Fatal(err)
	}
	// Direct: the transition's answer needs the queued insert applied.
	err := s.Write(ctx, func(w store.Writer) error {
		return w.JobTransition(ctx, store.JobTransitionParams{ID: a, ExpectAttempt: 0, At: time.Now(),
			FromStates: []store.State{store.StatePending}, Set: store.JobSet{Priority: store.Ptr(7)}})
	})
	if err != nil {
		t.Fatalf("a direct transition after a queued insert: %v", err)
	}
	// Recorded, then direct, in one Write: committed together.
	err = s.Write(ctx, func(w store.Writer) error {
		if err := insertQueued(ctx, b)(w); err != nil {
			return err
		}
		return w.JobInsert(ctx, benchJob(c, time.Now()))
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.JobGetMany(ctx, []string{a, b, c})
	if err != nil || len(got) != 3 || got[0].Priority != 7 {
		t.Fatalf("after queued and direct Writes: %d jobs, %v (want 3, job a at priority 7)", len(got), err)
	}
	// The same, failing after it went direct: nothing of it stays.
	d, e := store.NewID(time.Now()), store.NewID(time.Now())
	boom := errors.New("boom")
	err = s.Write(ctx, func(w store.Writer) error {
		if err := insertQueued(ctx, d)(w); err != nil {
			return err
		}
		if err := w.JobInsert(ctx, benchJob(e, time.Now())); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write = %v, want boom", err)
	}
	if got, _ := s.JobGetMany(ctx, []string{d, e}); len(got) != 0 {
		t.Fatalf("a rolled-back Write left %d jobs", len(got))
	}
}

// TestQueuedGuardMissRefusesWrites: a batched transition whose guard
// misses fails its Write's channel with ErrConflict, rolls back what was
// queued with it, and the store refuses writes (reads go on) until Resume;
// then it holds exactly what was committed before and takes writes again.
func TestQueuedGuardMissRefusesWrites(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	kept := store.NewID(time.Now())
	if err := s.Write(ctx, insertQueued(ctx, kept)); err != nil {
		t.Fatal(err)
	}
	lost := store.NewID(time.Now())
	ch, err := s.WriteDeferred(ctx, func(w store.Writer) error {
		if err := insertQueued(ctx, lost)(w); err != nil {
			return err
		}
		return leaseQueued(ctx, kept, 5)(w) // the job is at attempt 0
	})
	if err != nil {
		t.Fatalf("recording is not where a guard is checked: %v", err)
	}
	if err := <-ch; !errors.Is(err, store.ErrConflict) {
		t.Fatalf("channel = %v, want ErrConflict", err)
	}
	if _, err := s.WriteDeferred(ctx, insertQueued(ctx, store.NewID(time.Now()))); !errors.Is(err, errApplyFailed) {
		t.Fatalf("a Write after the failure = %v, want it refused", err)
	}
	if got, err := s.JobGetMany(ctx, []string{kept, lost}); err != nil || len(got) != 1 || got[0].State != store.StatePending {
		t.Fatalf("reads after the failure: %d jobs, %v (want the kept job, pending)", len(got), err)
	}
	s.Resume()
	if err := s.Write(ctx, leaseQueued(ctx, kept, 0)); err != nil {
		t.Fatalf("the resumed store refuses a good transition: %v", err)
	}
}

// TestReadyWhileTheApplierRuns: at most one recorded Write waits for the
// applier; Ready is closed when none waits (and no fsync runs).
func TestReadyWhileTheApplierRuns(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	s.conn.Lock() // the applier blocks on the connection
	first, err := s.WriteDeferred(ctx, insertQueued(ctx, store.NewID(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return isClosed(s.Ready()) })
	second, err := s.WriteDeferred(ctx, insertQueued(ctx, store.NewID(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	if isClosed(s.Ready()) {
		t.Fatal("Ready while a recorded Write waits for the applier")
	}
	s.conn.Unlock()
	for _, ch := range []<-chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool { return isClosed(s.Ready()) }) // once the fsync ended
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitFor polls cond (goroutines of the store move on their own).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
