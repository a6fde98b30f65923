package postgres

import (
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
)

// Two stores on one schema stand for two instances that both believe they
// lead: the store alone must keep a unique rule to one job.

var t0 = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func uniqueJob(id string, created time.Time) store.Job {
	return store.Job{ID: id, Tenant: "acme", Type: "reindex", Key: "repo-1", Lane: "default", Priority: 500,
		State: store.StatePending, CreatedAt: created, UpdatedAt: created, EnqueuedAt: created,
		Unique: &store.UniqueRule{By: []store.UniqueField{store.UniqueByType, store.UniqueByKey},
			States: []store.State{store.StatePending, store.StateRunning}}}
}

func openTwo(t *testing.T) (url string, a, b *Store) {
	t.Helper()
	url = pgtest.URL(t)
	for _, p := range []**Store{&a, &b} {
		s, err := Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		*p = s
	}
	return url, a, b
}

func TestUniqueConcurrentSubmitsOnTwoStoresMakeOneJob(t *testing.T) {
	_, a, b := openTwo(t)
	const n = 50
	errs := make([]error, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	startLine := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			ids[i] = store.NewID(t0)
			<-startLine
			errs[i] = s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, uniqueJob(ids[i], t0)) })
		}()
	}
	close(startLine)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Fatalf("two submits won: %s and %s", winner, ids[i])
			}
			winner = ids[i]
		}
	}
	if winner == "" {
		t.Fatalf("no submit won: %v", errs)
	}
	for i, err := range errs {
		var dup *store.UniqueError
		if err != nil && (!errors.As(err, &dup) || dup.JobID != winner) {
			t.Fatalf("submit %d: %v, want a UniqueError naming %s", i, err, winner)
		}
	}
	page, err := b.JobList(ctx, store.JobListParams{Tenant: "acme"})
	if err != nil || len(page.Jobs) != 1 {
		t.Fatalf("%d jobs stored (%v), want 1", len(page.Jobs), err)
	}
}

// The interleavings that matter, made to happen: the second store's claim
// runs while the first store's transaction holds its claim uncommitted, as
// a first claim and as a take-over from a job that has ended.
func TestUniqueClaimWaitsForTheOtherStoresTransaction(t *testing.T) {
	for _, takeOver := range []bool{false, true} {
		name := "first claim"
		if takeOver {
			name = "take-over"
		}
		t.Run(name, func(t *testing.T) {
			url, a, b := openTwo(t)
			if takeOver {
				done := uniqueJob("ended", t0.Add(-time.Hour))
				if err := a.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, done) }); err != nil {
					t.Fatal(err)
				}
				if err := a.Write(ctx, func(w store.Writer) error {
					return w.JobTransition(ctx, store.JobTransitionParams{ID: "ended", ExpectAttempt: store.AnyAttempt, At: t0,
						Set: store.JobSet{State: store.Ptr(store.StateSucceeded)}})
				}); err != nil {
					t.Fatal(err)
				}
			}
			db := pgtest.Open(t, url)
			second := make(chan error, 1)
			err := a.Write(ctx, func(w store.Writer) error {
				if err := w.JobInsert(ctx, uniqueJob("first", t0)); err != nil {
					return err
				}
				go func() {
					second <- b.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, uniqueJob("second", t0)) })
				}()
				waitForLockWait(t, db)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var dup *store.UniqueError
			if err := <-second; !errors.As(err, &dup) || dup.JobID != "first" {
				t.Fatalf("second store's submit: %v, want a UniqueError naming first", err)
			}
		})
	}
}

// waitForLockWait waits until a session waits on a lock while it claims
// a unique key.
func waitForLockWait(t *testing.T, db *sql.DB) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%unique_claims%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the second store's claim never waited on the first's transaction")
}
