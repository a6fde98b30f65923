package queued

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// paramsWriter keeps the transitions applied to it.
type paramsWriter struct {
	store.Writer
	got []store.JobTransitionParams
}

func (w *paramsWriter) JobTransitionBatched(_ context.Context, p store.JobTransitionParams) error {
	w.got = append(w.got, p)
	return nil
}

// fullSet is a transition that sets every field a pointer holds.
func fullSet() store.JobTransitionParams {
	at := t0.Add(time.Second)
	n, id := 3, int64(7)
	code, class, text, yes := 2, store.FailExitCode, "boom", true
	d := time.Minute
	res := []byte("r")
	return store.JobTransitionParams{ID: "j", At: at, ExpectAttempt: 1,
		FromStates: []store.State{store.StateRunning, store.StateLeased},
		Set: store.JobSet{State: store.Ptr(store.StateFailed), Attempt: &n, ReturnedLeases: &n, Snoozes: &n, Priority: &n,
			WorkerID: &text, LeaseExpiresAt: &at, EnqueuedAt: &at, StartedAt: &at, FinishedAt: &at, RunAt: &at,
			CancelRequested: &yes, Held: &yes, LastError: &text, ExitCode: &code, FailureClass: &class, Result: &res,
			Timeout: &d, Expected: &d, MaxAttempts: &n, LeaseEventID: &id, LeasedAt: &at, StartEventID: &id,
			StartEventAt: &at, SubmitPriority: &n,
			HeldAttempt: &store.Execution{JobID: "j", Attempt: 1, Outcome: store.OutcomeFailed, EndEventID: 9}}}
}

// A recorded transition owns its values: a caller that changes what its
// params point at once JobTransitionBatched returned changes nothing
// the applier writes.
func TestRecordedTransitionOwnsItsValues(t *testing.T) {
	r := newRecorder(false, nil)
	p := fullSet()
	want := fullSet()
	if err := r.JobTransitionBatched(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// The caller reuses everything its params pointed at.
	s := p.Set
	*s.State, *s.Attempt, *s.WorkerID, *s.LeaseExpiresAt = store.StatePending, 99, "other", t0
	*s.CancelRequested, *s.ExitCode, *s.FailureClass, *s.Timeout = false, 5, store.FailTimeout, time.Hour
	(*s.Result)[0] = 'x'
	*s.LeaseEventID, *s.LeasedAt, *s.SubmitPriority = 100, t0, 1
	s.HeldAttempt.EndEventID = 100
	p.FromStates[0] = store.StatePending
	w := &paramsWriter{}
	for _, o := range r.ops {
		if err := o(w); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.got) != 1 || !reflect.DeepEqual(w.got[0], want) {
		t.Errorf("applied %+v\nwant %+v", w.got, want)
	}
}

// A lease's transition is recorded with one allocation for its values
// (and one for its operation).
func TestRecordedLeaseAllocations(t *testing.T) {
	at, n, worker := t0, 2, "w"
	p := store.JobTransitionParams{ID: "j", At: at, ExpectAttempt: 1, FromStates: []store.State{store.StatePending},
		Set: store.JobSet{State: store.Ptr(store.StateRunning), Attempt: &n, WorkerID: &worker, LeaseExpiresAt: &at, StartedAt: &at}}
	allocs := testing.AllocsPerRun(100, func() { _ = cloneTransition(p) })
	if allocs > 1 {
		t.Errorf("cloneTransition: %.0f allocations, want 1", allocs)
	}
	// Recorded: the values (with the params) and the operation's closure;
	// the params themselves do not escape apart.
	r := newRecorder(false, nil)
	r.ops = make([]Op, 0, 1000)
	ctx := context.Background()
	allocs = testing.AllocsPerRun(100, func() {
		r.ops = r.ops[:0]
		_ = r.JobTransitionBatched(ctx, p)
	})
	if allocs > 2 {
		t.Errorf("JobTransitionBatched: %.0f allocations, want 2", allocs)
	}
}
