package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testExecutionUpsertMany: many executions in one operation, replacing
// existing ones; a missing job refuses all (the operation, or the Write).
func testExecutionUpsertMany(t *testing.T, s store.Store) {
	var es []store.Execution
	for i := range 70 {
		id := fmt.Sprintf("e%02d", i)
		insert(t, s, newJob(id, "t", T0))
		es = append(es, store.Execution{JobID: id, Attempt: 1, WorkerID: "w", StartedAt: T0, FinishedAt: T0.Add(time.Second),
			Outcome: store.OutcomeSucceeded, Duration: time.Second})
	}
	es[3].Outcome, es[3].FailureClass, es[3].ExitCode = store.OutcomeFailed, store.FailExitCode, store.Ptr(2)
	var opErr error
	write(t, s, func(w store.Writer) error {
		opErr = w.ExecutionUpsertMany(ctx, es)
		return nil
	})
	if opErr != nil {
		t.Fatal(opErr)
	}
	got, err := s.ExecutionList(ctx, store.ExecutionListParams{JobID: "e03"})
	if err != nil || len(got) != 1 || got[0].Outcome != store.OutcomeFailed || *got[0].ExitCode != 2 {
		t.Fatalf("e03 = %+v, %v", got, err)
	}
	// The driver may report the missing job at once or, having sent the
	// upsert with the commit, fail the Write: either way nothing is stored.
	err = s.Write(ctx, func(w store.Writer) error {
		opErr = w.ExecutionUpsertMany(ctx, []store.Execution{{JobID: "e00", Attempt: 2, StartedAt: T0}, {JobID: "nope", Attempt: 1}})
		return nil
	})
	if !errors.Is(opErr, store.ErrNotFound) && !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing job: the operation said %v, the Write %v", opErr, err)
	}
	if got, _ := s.ExecutionList(ctx, store.ExecutionListParams{JobID: "e00"}); len(got) != 1 {
		t.Fatalf("a refused batch stored %d executions for e00", len(got))
	}
}
