package postgres

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/fairwayhq/fairway/internal/pgtest"
	"github.com/fairwayhq/fairway/internal/store"
	"github.com/fairwayhq/fairway/internal/store/storetest"
)

var ctx = context.Background()

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openWithDB opens a store on a new schema, and a handle of its own on
// the same schema for the test's queries.
func openWithDB(t *testing.T) (*Store, *sql.DB) {
	t.Helper()
	url := pgtest.URL(t)
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, pgtest.Open(t, url)
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store { return openTemp(t) })
}

// The conformance suite with every batch passed as arrays (package
// sqlstore, arrays.go), however few its rows: the suite's batches are
// mostly smaller than sqlstore.MinArrayRows.
func TestConformanceEveryBatchAsArrays(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store {
		s, err := Open(ctx, pgtest.URL(t), func(o *options) { o.arrayMinRows = 1 })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// Servers starting together on a fresh database migrate it once.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	url := pgtest.URL(t)
	if cur, latest, err := SchemaStatus(ctx, url); err != nil || cur != 0 || latest != LatestVersion() || latest < 2 {
		t.Fatalf("fresh schema: %d of %d (%v)", cur, latest, err)
	}
	var wg sync.WaitGroup
	applied := make([]int, 4)
	errs := make([]error, 4)
	for i := range applied {
		wg.Add(1)
		go func() { defer wg.Done(); applied[i], errs[i] = Migrate(ctx, url) }()
	}
	wg.Wait()
	total := 0
	for i := range applied {
		if errs[i] != nil {
			t.Fatalf("migrate %d: %v", i, errs[i])
		}
		total += applied[i]
	}
	if total != LatestVersion() {
		t.Errorf("%d migrations applied in all, want %d (each once)", total, LatestVersion())
	}
	if cur, latest, err := SchemaStatus(ctx, url); err != nil || cur != latest {
		t.Errorf("after: %d of %d (%v)", cur, latest, err)
	}
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestOpenRefusesWhatIsNotAPostgresURL(t *testing.T) {
	for _, u := range []string{"", "sqlite:///tmp/x.db", "mysql://u@h/db", "postgres://h:notaport/db"} {
		if _, err := Open(ctx, u); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}

// A fence that refuses makes the write commit nothing, and its Err names
// the error.
func TestAFenceThatRefusesCommitsNothing(t *testing.T) {
	url := pgtest.URL(t)
	db := pgtest.Open(t, url)
	if _, err := db.ExecContext(ctx, `CREATE TABLE gate (open BOOLEAN NOT NULL); INSERT INTO gate VALUES (true)`); err != nil {
		t.Fatal(err)
	}
	deposed := errors.New("deposed")
	s, err := Open(ctx, url, WithFence(Fence{
		SQL:  `SELECT 1 / (SELECT count(*) FROM gate WHERE open)::int WHERE $1 AND $2::int >= 0`, // $2: the writer connection's slot
		Args: []any{true},
		Err: func(err error) error {
			if pgCode(err) == "22012" { // division by zero: the gate is shut
				return deposed
			}
			return nil
		},
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	job := store.Job{ID: "a", Tenant: "t", Type: "x", State: store.StatePending, CreatedAt: storetest.T0}
	if err := s.Write(ctx, func(w store.Writer) error { return w.JobInsert(ctx, job) }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE gate SET open = false`); err != nil {
		t.Fatal(err)
	}
	for _, job.ID = range []string{"b", "c"} { // an operation that runs at once, then one that is queued
		err := s.Write(ctx, func(w store.Writer) error {
			if job.ID == "b" {
				return w.JobInsert(ctx, job)
			}
			return w.JobInsertBatched(ctx, job)
		})
		if !errors.Is(err, deposed) {
			t.Fatalf("write of %s under a refusing fence: %v", job.ID, err)
		}
		if _, err := s.JobGet(ctx, job.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the fenced-off job %s was stored: %v", job.ID, err)
		}
	}
	select {
	case <-s.Broken():
		t.Error("a fence's refusal marked the store Broken: its connections are fine")
	default:
	}
}
