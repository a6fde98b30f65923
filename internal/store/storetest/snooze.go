package storetest

import (
	"testing"

	"github.com/fairwayhq/fairway/internal/store"
)

// A job's snooze count and cap round-trip, and a transition sets the
// count (batched too).
func testSnoozes(t *testing.T, s store.Store) {
	j := newJob("s", "acme", T0)
	j.Snoozes, j.MaxSnoozes = 2, 7
	insert(t, s, j)
	diff(t, "JobGet", j, get(t, s, "s"))
	write(t, s, func(w store.Writer) error {
		if err := w.JobTransition(ctx, store.JobTransitionParams{ID: "s", ExpectAttempt: store.AnyAttempt, At: T0,
			Set: store.JobSet{Snoozes: store.Ptr(3)}}); err != nil {
			return err
		}
		return w.JobTransitionBatched(ctx, store.JobTransitionParams{ID: "s", ExpectAttempt: store.AnyAttempt, At: T0,
			Set: store.JobSet{Snoozes: store.Ptr(4), State: store.Ptr(store.StateBlocked)}})
	})
	if got := get(t, s, "s"); got.Snoozes != 4 || got.MaxSnoozes != 7 || got.State != store.StateBlocked {
		t.Fatalf("after transitions: snoozes %d max %d state %s", got.Snoozes, got.MaxSnoozes, got.State)
	}
	bad := newJob("bad", "acme", T0)
	bad.MaxSnoozes = -1
	wantErr(t, "negative max_snoozes", tryInsert(t, s, bad), store.ErrInvalid)
}
