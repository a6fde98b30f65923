package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
)

// A lease is a HOT update (store doc.go, "The hot row and its indexes"):
// it writes the live attempt's leased event id to a column no index
// holds, so PostgreSQL writes no index entry for the new row version. The
// finish moves the id to lease_event_id (jobs_live_events), where the
// audit feed finds it. A page with no room left makes an update non-HOT
// whatever it changes; the table's fillfactor leaves room for nearly all.
func TestLeasesAreHOTUpdates(t *testing.T) {
	url := pgtest.URL(t)
	db := pgtest.Open(t, url)
	const n = 500
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(w store.Writer) error {
		for i := range n {
			if err := w.JobInsert(ctx, store.Job{ID: fmt.Sprintf("j%04d", i), Tenant: "t", Type: "x", Lane: "default",
				Priority: 500, State: store.StatePending, CreatedAt: t0, UpdatedAt: t0, EnqueuedAt: t0}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The store's backends report their counts when they end.
	s.Close()
	// The counts of the table's rows, once done says they include the
	// ended backends' (which report them as they end, asynchronously).
	counts := func(done func(ins, upd int64) bool) (upd, hot int64) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			var ins int64
			if err := db.QueryRowContext(ctx, `SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
				WHERE relname = 'jobs' AND schemaname = current_schema()`).Scan(&ins, &upd, &hot); err != nil {
				t.Fatal(err)
			}
			if done(ins, upd) || time.Now().After(deadline) {
				return upd, hot
			}
			time.Sleep(10 * time.Millisecond) // a poll for the counts, not a timed assertion
		}
	}
	upd0, hot0 := counts(func(ins, _ int64) bool { return ins >= n })

	s, err = Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	running, one, worker := store.StateRunning, 1, "w1"
	if err := s.Write(ctx, func(w store.Writer) error {
		for i := range n {
			ev, at := int64(1000+i), t0.Add(time.Second)
			if err := w.JobTransition(ctx, store.JobTransitionParams{ID: fmt.Sprintf("j%04d", i), ExpectAttempt: 0, At: at,
				FromStates: []store.State{store.StatePending}, Set: store.JobSet{State: &running, Attempt: &one,
					WorkerID: &worker, StartedAt: &at, LeaseEventID: &ev, LeasedAt: &at}}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var indexed, live int
	if err := s.RDB.QueryRowContext(ctx, `SELECT count(lease_event_id), count(live_lease_event_id) FROM jobs`).Scan(&indexed, &live); err != nil {
		t.Fatal(err)
	}
	if indexed != 0 || live != n {
		t.Errorf("leased jobs: %d lease_event_id, %d live_lease_event_id, want 0 and %d", indexed, live, n)
	}
	s.Close()
	upd, hot := counts(func(_, upd int64) bool { return upd-upd0 >= n })
	leases, hotLeases := upd-upd0, hot-hot0
	t.Logf("%d leases: %d HOT", leases, hotLeases)
	if leases != n || hotLeases < n*9/10 {
		t.Errorf("%d leases, %d of them HOT; want %d, at least 90%% HOT", leases, hotLeases, n)
	}
}
