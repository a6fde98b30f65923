package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testInsertShapes: batched inserts write only the columns a job sets
// (package sqlstore, shapes.go), a statement per set of columns. Jobs of
// 300 different sets in one Write (more than the drivers prepare
// statements for) read back as they were given.
func testInsertShapes(t *testing.T, s store.Store) {
	var want []store.Job
	for i := range 300 {
		j := fullJob(fmt.Sprintf("shape-%03d", i))
		j.IdempotencyKey = ""
		for bit, clear := range []func(*store.Job){
			func(j *store.Job) { j.Name = "" },
			func(j *store.Job) { j.Lane = "" },
			func(j *store.Job) { j.OnDemand = false },
			func(j *store.Job) { j.Labels = nil },
			func(j *store.Job) { j.Shell = false },
			func(j *store.Job) { j.Payload = nil },
			func(j *store.Job) { j.Retry = store.RetryPolicy{} },
			func(j *store.Job) { j.ExitCode, j.FailureClass, j.LastError = nil, "", "" },
			func(j *store.Job) { j.ScheduleID, j.ScheduledFor = "", time.Time{} },
		} {
			if i&(1<<bit) != 0 {
				clear(&j)
			}
		}
		j.Priority = i % 3 // 0 too: a column with no default is always written
		want = append(want, j)
	}
	write(t, s, insertBatched(want...))
	ids := make([]string, len(want))
	for i, j := range want {
		ids[i] = j.ID
	}
	got, err := s.JobGetMany(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]store.Job{}
	for _, j := range got {
		byID[j.ID] = j
	}
	for _, j := range want {
		diff(t, j.ID, j, byID[j.ID])
	}
}

// testExecutionUpsertShapes: one ExecutionUpsertMany of executions of
// several column sets, two of one attempt among them: the later replaces
// the earlier whole, the columns it leaves at their default included.
func testExecutionUpsertShapes(t *testing.T, s store.Store) {
	insert(t, s, newJob("a", "t", T0), newJob("b", "t", T0))
	full := store.Execution{JobID: "a", Attempt: 1, WorkerID: "w1", LeasedAt: T0.Add(time.Second), Wait: time.Second,
		StartedAt: T0.Add(2 * time.Second), FinishedAt: T0.Add(3 * time.Second), Outcome: store.OutcomeFailed,
		ExitCode: store.Ptr(2), FailureClass: store.FailExitCode, Error: "boom", Duration: time.Second,
		SLAMet: store.Ptr(false), SLAViolationPct: 7.5, LeaseEventID: 4, StartEventID: 5, EndEventID: 6,
		Usage: store.Usage{CPUUser: time.Millisecond, Source: "rusage"}}
	leased := store.Execution{JobID: "a", Attempt: 1, WorkerID: "w2", LeasedAt: T0.Add(4 * time.Second)}
	other := store.Execution{JobID: "b", Attempt: 1, WorkerID: "w1", LeasedAt: T0, StartedAt: T0, FinishedAt: T0.Add(time.Second),
		Outcome: store.OutcomeSucceeded, ExitCode: store.Ptr(0)}
	b2 := store.Execution{JobID: "b", Attempt: 2, Outcome: store.OutcomeCancelled, FinishedAt: T0.Add(time.Minute)}
	write(t, s, func(w store.Writer) error {
		return w.ExecutionUpsertMany(ctx, []store.Execution{full, other, leased, b2})
	})
	for _, c := range []struct {
		job  string
		want []store.Execution
	}{{"a", []store.Execution{leased}}, {"b", []store.Execution{other, b2}}} {
		got, err := s.ExecutionList(ctx, store.ExecutionListParams{JobID: c.job})
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "executions of "+c.job, c.want, got)
	}
}
