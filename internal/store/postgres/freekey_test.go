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

// Keyed inserts on the deferred path (store doc.go) with two stores on one
// schema, standing for two instances that both believe they lead and both
// found a key free: the database's claim keeps the key to one job.

func freeKeyJob(id string) store.Job {
	return store.Job{ID: id, Tenant: "acme", Type: "x", Lane: "default", State: store.StatePending,
		CreatedAt: t0, UpdatedAt: t0, EnqueuedAt: t0, IdempotencyKey: "order-1"}
}

func freeKeyWrite(s *Store, j store.Job) error {
	return s.Write(ctx, func(w store.Writer) error { return w.JobInsertFreeKey(ctx, j) })
}

func TestFreeKeyClaimsOnTwoStoresMakeOneJob(t *testing.T) {
	_, a, b := openTwo(t)
	const n = 40
	errs := make([]error, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	startLine := make(chan struct{})
	for i := range n {
		ids[i] = store.NewID(t0)
		wg.Go(func() {
			s := a
			if i%2 == 1 {
				s = b
			}
			<-startLine
			errs[i] = freeKeyWrite(s, freeKeyJob(ids[i]))
		})
	}
	close(startLine)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil && winner != "":
			t.Fatalf("two submits won: %s and %s", winner, ids[i])
		case err == nil:
			winner = ids[i]
		case !errors.Is(err, store.ErrKeyHeld):
			t.Fatalf("submit %d: %v, want ErrKeyHeld", i, err)
		}
	}
	if winner == "" {
		t.Fatalf("no submit won: %v", errs)
	}
	a.Resume()
	b.Resume()
	page, err := b.JobList(ctx, store.JobListParams{Tenant: "acme"})
	if err != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != winner {
		t.Fatalf("%d jobs stored (%v), want 1: %s", len(page.Jobs), err, winner)
	}
	if holder, err := a.IdempotencyHolder(ctx, "acme", "order-1", t0.Add(-time.Hour)); err != nil || holder != winner {
		t.Fatalf("holder %q, %v; want %s", holder, err, winner)
	}
}

// The second store's deferred claim runs while the first store's
// transaction holds the key's claim uncommitted: it waits, then fails if
// that transaction commits, and claims the key if it rolls back.
func TestFreeKeyClaimWaitsForTheOtherStoresTransaction(t *testing.T) {
	for _, commit := range []bool{true, false} {
		name := "commits"
		if !commit {
			name = "rolls back"
		}
		t.Run(name, func(t *testing.T) {
			url, a, b := openTwo(t)
			db := pgtest.Open(t, url)
			second := make(chan error, 1)
			err := a.Write(ctx, func(w store.Writer) error {
				if err := w.JobInsert(ctx, freeKeyJob("first")); err != nil {
					return err
				}
				go func() { second <- freeKeyWrite(b, freeKeyJob("second")) }()
				waitForLockWaitOn(t, db, "idempotency_keys")
				if !commit {
					return errors.New("boom")
				}
				return nil
			})
			if commit != (err == nil) {
				t.Fatalf("first store's Write: %v", err)
			}
			err = <-second
			want := "first"
			if commit {
				if !errors.Is(err, store.ErrKeyHeld) {
					t.Fatalf("second store's Write: %v, want ErrKeyHeld", err)
				}
				b.Resume()
			} else {
				if err != nil {
					t.Fatalf("second store's Write after the first rolled back: %v", err)
				}
				want = "second"
			}
			if holder, err := b.IdempotencyHolder(ctx, "acme", "order-1", t0.Add(-time.Hour)); err != nil || holder != want {
				t.Fatalf("holder %q, %v; want %s", holder, err, want)
			}
		})
	}
}

// waitForLockWaitOn waits until a session waits on a lock in a statement
// that names table.
func waitForLockWaitOn(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the second store's claim never waited on the first's transaction")
}
