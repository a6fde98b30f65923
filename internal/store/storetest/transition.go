package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// lease is the transition pending(attempt a) -> leased(attempt a+1).
func lease(id string, attempt int, at time.Time) store.JobTransitionParams {
	return store.JobTransitionParams{
		ID: id, FromStates: []store.State{store.StatePending}, ExpectAttempt: attempt, At: at,
		Set: store.JobSet{
			State: store.Ptr(store.StateLeased), Attempt: store.Ptr(attempt + 1),
			WorkerID: store.Ptr("w1"), LeaseExpiresAt: store.Ptr(at.Add(30 * time.Second)),
		},
	}
}

func transition(t *testing.T, s store.Store, p store.JobTransitionParams) error {
	t.Helper()
	var opErr error
	write(t, s, func(w store.Writer) error {
		opErr = w.JobTransition(ctx, p)
		return nil
	})
	return opErr
}

func testTransitionFenced(t *testing.T, s store.Store) {
	insert(t, s, newJob("j", "t", T0))
	if err := transition(t, s, lease("j", 0, T0.Add(time.Second))); err != nil {
		t.Fatalf("lease: %v", err)
	}
	leased := get(t, s, "j")
	if leased.State != store.StateLeased || leased.Attempt != 1 || leased.WorkerID != "w1" ||
		!leased.UpdatedAt.Equal(T0.Add(time.Second)) {
		t.Fatalf("after lease: %+v", leased)
	}

	cases := map[string]store.JobTransitionParams{
		"stale attempt": {ID: "j", FromStates: []store.State{store.StateLeased}, ExpectAttempt: 0, At: T0.Add(time.Hour),
			Set: store.JobSet{State: store.Ptr(store.StateRunning)}},
		"wrong state": {ID: "j", FromStates: []store.State{store.StatePending, store.StateRunning}, ExpectAttempt: 1,
			At: T0.Add(time.Hour), Set: store.JobSet{State: store.Ptr(store.StateSucceeded)}},
		"replayed lease": lease("j", 0, T0.Add(time.Hour)),
		"wrong state, any attempt": {ID: "j", FromStates: []store.State{store.StateRunning}, ExpectAttempt: store.AnyAttempt,
			At: T0.Add(time.Hour), Set: store.JobSet{State: store.Ptr(store.StateSucceeded)}},
	}
	for name, p := range cases {
		wantErr(t, name, transition(t, s, p), store.ErrConflict)
		diff(t, name+": job changed by a refused transition", leased, get(t, s, "j"))
	}

	// The right token and state pass; no state guard with AnyAttempt passes too.
	start := store.JobTransitionParams{ID: "j", FromStates: []store.State{store.StateLeased, store.StateRunning},
		ExpectAttempt: 1, At: T0.Add(2 * time.Second),
		Set: store.JobSet{State: store.Ptr(store.StateRunning), StartedAt: store.Ptr(T0.Add(2 * time.Second))}}
	if err := transition(t, s, start); err != nil {
		t.Fatalf("start: %v", err)
	}
	cancel := store.JobTransitionParams{ID: "j", ExpectAttempt: store.AnyAttempt, At: T0.Add(3 * time.Second),
		Set: store.JobSet{CancelRequested: store.Ptr(true)}}
	if err := transition(t, s, cancel); err != nil {
		t.Fatalf("cancel request: %v", err)
	}
	if got := get(t, s, "j"); got.State != store.StateRunning || !got.CancelRequested || got.Attempt != 1 {
		t.Fatalf("after start+cancel request: %+v", got)
	}
}

func testTransitionSetsEveryField(t *testing.T, s store.Store) {
	j := newJob("j", "t", T0)
	insert(t, s, j)
	at := T0.Add(time.Minute)
	set := store.JobSet{
		State: store.Ptr(store.StateFailed), Attempt: store.Ptr(7), ReturnedLeases: store.Ptr(2), Priority: store.Ptr(900),
		WorkerID: store.Ptr("w2"), LeaseExpiresAt: store.Ptr(at.Add(time.Second)),
		EnqueuedAt: store.Ptr(at.Add(2 * time.Second)), StartedAt: store.Ptr(at.Add(3 * time.Second)),
		FinishedAt: store.Ptr(at.Add(4 * time.Second)), RunAt: store.Ptr(at.Add(5 * time.Second)),
		CancelRequested: store.Ptr(true), LastError: store.Ptr("killed"), ExitCode: store.Ptr(-1),
		FailureClass: store.Ptr(store.FailKilled), Result: store.Ptr([]byte("out")),
		Timeout: store.Ptr(time.Hour), Expected: store.Ptr(time.Minute), MaxAttempts: store.Ptr(9),
	}
	if err := transition(t, s, store.JobTransitionParams{ID: "j", ExpectAttempt: 0,
		FromStates: []store.State{store.StatePending}, At: at, Set: set}); err != nil {
		t.Fatal(err)
	}
	want := j
	want.State, want.Attempt, want.Priority, want.ReturnedLeases = store.StateFailed, 7, 900, 2
	want.WorkerID, want.LeaseExpiresAt = "w2", at.Add(time.Second)
	want.EnqueuedAt, want.StartedAt = at.Add(2*time.Second), at.Add(3*time.Second)
	want.FinishedAt, want.RunAt = at.Add(4*time.Second), at.Add(5*time.Second)
	want.CancelRequested, want.LastError, want.ExitCode = true, "killed", store.Ptr(-1)
	want.FailureClass, want.Result = store.FailKilled, []byte("out")
	want.Timeout, want.Expected, want.UpdatedAt, want.MaxAttempts = time.Hour, time.Minute, at, 9
	diff(t, "job", want, get(t, s, "j"))
}

func testTransitionClears(t *testing.T, s store.Store) {
	j := fullJob("j")
	insert(t, s, j)
	at := T0.Add(time.Hour)
	err := transition(t, s, store.JobTransitionParams{ID: "j", ExpectAttempt: j.Attempt, At: at, Set: store.JobSet{
		State: store.Ptr(store.StatePending), WorkerID: store.Ptr(""), LeaseExpiresAt: store.Ptr(time.Time{}),
		StartedAt: store.Ptr(time.Time{}), FinishedAt: store.Ptr(time.Time{}), LastError: store.Ptr(""),
		ClearExitCode: true, FailureClass: store.Ptr(store.FailureClass("")), Result: store.Ptr([]byte(nil)),
		CancelRequested: store.Ptr(false),
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := j
	want.State, want.WorkerID, want.LeaseExpiresAt = store.StatePending, "", time.Time{}
	want.StartedAt, want.FinishedAt, want.LastError = time.Time{}, time.Time{}, ""
	want.ExitCode, want.FailureClass, want.Result, want.CancelRequested = nil, "", nil, false
	want.UpdatedAt = at
	diff(t, "job", want, get(t, s, "j"))
}

func testTransitionNotFound(t *testing.T, s store.Store) {
	wantErr(t, "missing job", transition(t, s, lease("nope", 0, T0)), store.ErrNotFound)
}

func testTransitionInvalid(t *testing.T, s store.Store) {
	insert(t, s, newJob("j", "t", T0))
	bad := map[string]store.JobTransitionParams{
		"no id":        {ExpectAttempt: 0, At: T0},
		"no time":      {ID: "j", ExpectAttempt: 0},
		"bad attempt":  {ID: "j", ExpectAttempt: -2, At: T0},
		"bad state":    {ID: "j", At: T0, Set: store.JobSet{State: store.Ptr(store.State("zombie"))}},
		"bad from":     {ID: "j", At: T0, FromStates: []store.State{"zombie"}},
		"exit + clear": {ID: "j", At: T0, Set: store.JobSet{ExitCode: store.Ptr(1), ClearExitCode: true}},
	}
	for name, p := range bad {
		wantErr(t, name, transition(t, s, p), store.ErrInvalid)
	}
}

// testTransitionBatchWithMiss is the group-commit contract: a guard miss in
// the middle of a batch is that operation's outcome; the others commit.
func testTransitionBatchWithMiss(t *testing.T, s store.Store) {
	insert(t, s, newJob("a", "t", T0), newJob("b", "t", T0), newJob("c", "t", T0))
	at := T0.Add(time.Second)
	results := make([]error, 4)
	write(t, s, func(w store.Writer) error {
		results[0] = w.JobTransition(ctx, lease("a", 0, at))
		results[1] = w.JobTransition(ctx, lease("b", 5, at)) // stale token
		results[2] = w.JobTransition(ctx, lease("c", 0, at))
		results[3] = w.EventAppend(ctx, []store.Event{{JobID: "a", Type: store.EventLeased, At: at}})
		return nil
	})
	if results[0] != nil || results[2] != nil || results[3] != nil || !errors.Is(results[1], store.ErrConflict) {
		t.Fatalf("results = %v, want [nil ErrConflict nil nil]", results)
	}
	for id, want := range map[string]store.State{"a": store.StateLeased, "b": store.StatePending, "c": store.StateLeased} {
		if got := get(t, s, id); got.State != want {
			t.Errorf("job %s: state %s, want %s", id, got.State, want)
		}
	}
}

func testWriteRollback(t *testing.T, s store.Store) {
	insert(t, s, newJob("keep", "t", T0))
	err := s.Write(ctx, func(w store.Writer) error {
		if err := w.JobInsert(ctx, newJob("gone", "t", T0)); err != nil {
			return err
		}
		if err := w.JobTransition(ctx, lease("keep", 0, T0)); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	wantErr(t, "Write", err, errBoom)
	_, err = s.JobGet(ctx, "gone")
	wantErr(t, "rolled back insert", err, store.ErrNotFound)
	if got := get(t, s, "keep"); got.State != store.StatePending || got.Attempt != 0 {
		t.Errorf("rolled back transition left %s/%d", got.State, got.Attempt)
	}
}

func testWritePanic(t *testing.T, s store.Store) {
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic did not propagate")
			}
		}()
		_ = s.Write(ctx, func(w store.Writer) error {
			if err := w.JobInsert(ctx, newJob("gone", "t", T0)); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	_, err := s.JobGet(ctx, "gone")
	wantErr(t, "insert before panic", err, store.ErrNotFound)
	insert(t, s, newJob("after", "t", T0)) // the store still works
}

func testWriteOpsAtomic(t *testing.T, s store.Store) {
	insert(t, s, newJob("j", "t", T0))
	var logErr, dupErr error
	write(t, s, func(w store.Writer) error {
		logErr = w.LogAppend(ctx, []store.LogChunk{
			{JobID: "j", Attempt: 1, Stream: store.Stdout, Seq: 1, At: T0, Data: []byte("a")},
			{JobID: "missing", Attempt: 1, Stream: store.Stdout, Seq: 1, At: T0, Data: []byte("b")},
		})
		if err := w.JobInsert(ctx, keyed("k1", "t", "key", T0)); err != nil {
			return err
		}
		dupErr = w.JobInsert(ctx, keyed("k2", "t", "key", T0))
		return w.LogAppend(ctx, []store.LogChunk{{JobID: "j", Attempt: 1, Stream: store.Stderr, Seq: 2, At: T0, Data: []byte("c")}})
	})
	wantErr(t, "LogAppend with a missing job", logErr, store.ErrNotFound)
	wantErr(t, "duplicate insert", dupErr, store.ErrDuplicate)
	logs, err := s.LogList(ctx, store.LogListParams{JobID: "j"})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || logs[0].Seq != 2 {
		t.Fatalf("logs = %+v, want only seq 2 (the failed append stored nothing)", logs)
	}
	_, err = s.JobGet(ctx, "k2")
	wantErr(t, "duplicate job", err, store.ErrNotFound)
}

func testWriterAfterWrite(t *testing.T, s store.Store) {
	var kept store.Writer
	write(t, s, func(w store.Writer) error { kept = w; return nil })
	if err := kept.JobInsert(ctx, newJob("late", "t", T0)); err == nil {
		t.Fatal("JobInsert through a finished Writer succeeded")
	}
	if _, err := s.JobGet(ctx, "late"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("late job stored: %v", err)
	}
}

// testWriteMany puts a few thousand operations of every kind in one Write.
func testWriteMany(t *testing.T, s store.Store) {
	const n = 2000
	write(t, s, func(w store.Writer) error {
		for i := range n {
			id := jobID("m", i)
			if err := w.JobInsert(ctx, newJob(id, "t", T0.Add(time.Duration(i)*time.Millisecond))); err != nil {
				return err
			}
			if err := w.JobTransition(ctx, lease(id, 0, T0.Add(time.Hour))); err != nil {
				return err
			}
			if err := w.EventAppend(ctx, []store.Event{{JobID: id, Type: store.EventLeased, At: T0}}); err != nil {
				return err
			}
		}
		return nil
	})
	jobs, err := s.JobListUnfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != n {
		t.Fatalf("%d jobs, want %d", len(jobs), n)
	}
	for _, j := range jobs {
		if j.State != store.StateLeased || j.Attempt != 1 {
			t.Fatalf("job %s: %s/%d", j.ID, j.State, j.Attempt)
		}
	}
}

// testReadsDuringWrite: while a Write is open, reads answer at once and see
// only committed data.
func testReadsDuringWrite(t *testing.T, s store.Store) {
	insert(t, s, newJob("committed", "t", T0))
	inside, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Write(ctx, func(w store.Writer) error {
			if err := w.JobInsert(ctx, newJob("uncommitted", "t", T0)); err != nil {
				return err
			}
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := s.JobGet(rctx, "committed"); err != nil {
		t.Errorf("read during write: %v", err)
	}
	if _, err := s.JobGet(rctx, "uncommitted"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("uncommitted job visible: %v", err)
	}
	close(release)
	wg.Wait()
	get(t, s, "uncommitted")
}

func testClose(t *testing.T, s store.Store) {
	insert(t, s, newJob("j", "t", T0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Write after Close", s.Write(ctx, func(store.Writer) error { return nil }), store.ErrClosed)
	_, err := s.JobGet(ctx, "j")
	wantErr(t, "JobGet after Close", err, store.ErrClosed)
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
