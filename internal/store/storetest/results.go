package storetest

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testExecutionResults covers a result upload's life on the execution:
// pending uploads come back when due, soonest first; each try is recorded
// once (fenced by the try count); written and failed uploads are never due.
func testExecutionResults(t *testing.T, s store.Store) {
	j := newJob("r", "acme", T0)
	j.ResultLocation = "file:///srv/results"
	insert(t, s, j, newJob("plain", "acme", T0))
	got, err := s.JobGet(ctx, "r")
	if err != nil || got.ResultLocation != j.ResultLocation {
		t.Fatalf("result location read back as %q (%v)", got.ResultLocation, err)
	}
	ended := func(attempt int, next time.Time) store.Execution {
		return store.Execution{
			JobID: "r", Attempt: attempt, WorkerID: "w1", LeasedAt: T0, StartedAt: T0, FinishedAt: T0.Add(time.Second),
			Outcome: store.OutcomeFailed, ResultState: store.ResultPending, ResultURL: "file:///srv/results/r/attempt-1",
			ResultNextAt: next,
		}
	}
	one, two := ended(1, T0.Add(2*time.Second)), ended(2, T0.Add(time.Second))
	plain := store.Execution{JobID: "plain", Attempt: 1, FinishedAt: T0, Outcome: store.OutcomeSucceeded}
	upsertExecutions(t, s, one, two, plain)

	due, err := s.ExecutionResultsDue(ctx, T0.Add(time.Second), 10)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "due at T0+1s", []store.Execution{two}, due)
	due, err = s.ExecutionResultsDue(ctx, T0.Add(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "due at T0+1m, soonest first", []store.Execution{two, one}, due)

	retry := store.ResultUpdate{JobID: "r", Attempt: 1, Tries: 1, State: store.ResultPending, Error: "bucket gone", NextAt: T0.Add(time.Hour)}
	written := store.ResultUpdate{JobID: "r", Attempt: 2, Tries: 1, State: store.ResultWritten}
	write(t, s, func(w store.Writer) error {
		if err := w.ExecutionResultUpdate(ctx, retry); err != nil {
			return err
		}
		wantErr(t, "same try twice", w.ExecutionResultUpdate(ctx, retry), store.ErrConflict)
		if err := w.ExecutionResultUpdate(ctx, written); err != nil {
			return err
		}
		wantErr(t, "after written", w.ExecutionResultUpdate(ctx, store.ResultUpdate{
			JobID: "r", Attempt: 2, Tries: 2, State: store.ResultFailed}), store.ErrConflict)
		wantErr(t, "no execution", w.ExecutionResultUpdate(ctx, store.ResultUpdate{
			JobID: "r", Attempt: 9, Tries: 1, State: store.ResultWritten}), store.ErrNotFound)
		wantErr(t, "pending without next", w.ExecutionResultUpdate(ctx, store.ResultUpdate{
			JobID: "r", Attempt: 1, Tries: 2, State: store.ResultPending}), store.ErrInvalid)
		wantErr(t, "unknown state", w.ExecutionUpsert(ctx, store.Execution{JobID: "r", Attempt: 3, ResultState: "lost"}), store.ErrInvalid)
		return nil
	})
	one.ResultTries, one.ResultError, one.ResultNextAt = 1, "bucket gone", T0.Add(time.Hour)
	two.ResultTries, two.ResultState, two.ResultNextAt = 1, store.ResultWritten, time.Time{}
	list, err := s.ExecutionList(ctx, store.ExecutionListParams{JobID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "after one try each", []store.Execution{one, two}, list)
	due, err = s.ExecutionResultsDue(ctx, T0.Add(time.Minute), 10)
	if err != nil || len(due) != 0 {
		t.Fatalf("due before the retry time: %v, %v", due, err)
	}

	write(t, s, func(w store.Writer) error {
		return w.ExecutionResultUpdate(ctx, store.ResultUpdate{JobID: "r", Attempt: 1, Tries: 2, State: store.ResultFailed, Error: "still gone"})
	})
	due, err = s.ExecutionResultsDue(ctx, T0.Add(24*time.Hour), 10)
	if err != nil || len(due) != 0 {
		t.Fatalf("a failed upload is not due again: %v, %v", due, err)
	}
	list, err = s.ExecutionList(ctx, store.ExecutionListParams{JobID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if list[0].ResultState != store.ResultFailed || list[0].ResultError != "still gone" || list[0].ResultTries != 2 {
		t.Errorf("after the last try: %+v", list[0])
	}

	testRetentionKeepsPendingResults(t, s)
}

// testRetentionKeepsPendingResults: retention never deletes a job whose
// result is still to be written, and deletes it once the upload has ended.
func testRetentionKeepsPendingResults(t *testing.T, s store.Store) {
	done := newJob("done", "acme", T0)
	done.State, done.FinishedAt, done.ResultLocation = store.StateSucceeded, T0, "file:///srv/results"
	insert(t, s, done)
	upsertExecutions(t, s, store.Execution{JobID: "done", Attempt: 1, FinishedAt: T0, Outcome: store.OutcomeSucceeded,
		ResultState: store.ResultPending, ResultNextAt: T0})
	deleted := func() int64 {
		var n int64
		write(t, s, func(w store.Writer) error {
			p, err := w.JobDeleteFinished(ctx, T0.Add(time.Hour), 100)
			n = p.Deleted
			return err
		})
		return n
	}
	if _, err := s.JobGet(ctx, "done"); deleted() != 0 || err != nil {
		t.Fatalf("retention deleted a job with a pending result (%v)", err)
	}
	write(t, s, func(w store.Writer) error {
		return w.ExecutionResultUpdate(ctx, store.ResultUpdate{JobID: "done", Attempt: 1, Tries: 1, State: store.ResultWritten})
	})
	if n := deleted(); n != 1 {
		t.Fatalf("retention deleted %d jobs once the result was written, want 1", n)
	}
}
