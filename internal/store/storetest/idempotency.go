package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

func keyed(id, tenant, key string, created time.Time) store.Job {
	j := newJob(id, tenant, created)
	j.IdempotencyKey = key
	return j
}

// wantDuplicateOf checks that err is a *DuplicateError naming holder.
func wantDuplicateOf(t *testing.T, err error, holder string) {
	t.Helper()
	var dup *store.DuplicateError
	if !errors.As(err, &dup) || !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("got error %v, want a *store.DuplicateError", err)
	}
	if dup.JobID != holder {
		t.Fatalf("DuplicateError.JobID = %q, want %q", dup.JobID, holder)
	}
}

func testIdempotencyDuplicate(t *testing.T, s store.Store) {
	orig := keyed("orig", "acme", "k1", T0)
	insert(t, s, orig)
	write(t, s, func(w store.Writer) error {
		wantDuplicateOf(t, w.JobInsert(ctx, keyed("dup", "acme", "k1", T0.Add(23*time.Hour))), "orig")
		return nil
	})
	_, err := s.JobGet(ctx, "dup")
	wantErr(t, "JobGet(dup)", err, store.ErrNotFound)
	got, err := s.JobGetByIdempotencyKey(ctx, "acme", "k1", T0.Add(23*time.Hour-store.IdempotencyWindow))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "lookup", orig, got)
}

func testIdempotencyOtherTenant(t *testing.T, s store.Store) {
	insert(t, s, keyed("a", "acme", "k1", T0), keyed("b", "globex", "k1", T0), keyed("c", "acme", "k2", T0))
	got, err := s.JobGetByIdempotencyKey(ctx, "globex", "k1", T0.Add(-time.Hour))
	if err != nil || got.ID != "b" {
		t.Fatalf("lookup = %v, %v; want job b", got.ID, err)
	}
}

func testIdempotencyExpired(t *testing.T, s store.Store) {
	insert(t, s, keyed("old", "acme", "k1", T0))
	later := T0.Add(store.IdempotencyWindow + time.Second)
	insert(t, s, keyed("new", "acme", "k1", later)) // the old claim expired: no error
	got, err := s.JobGetByIdempotencyKey(ctx, "acme", "k1", later.Add(-store.IdempotencyWindow))
	if err != nil || got.ID != "new" {
		t.Fatalf("lookup = %v, %v; want job new", got.ID, err)
	}
	// The new claim now blocks in turn.
	write(t, s, func(w store.Writer) error {
		wantDuplicateOf(t, w.JobInsert(ctx, keyed("newer", "acme", "k1", later.Add(time.Hour))), "new")
		return nil
	})
	// Both jobs are kept; the old one keeps its key as data.
	if j := get(t, s, "old"); j.IdempotencyKey != "k1" {
		t.Errorf("old job's key = %q", j.IdempotencyKey)
	}
}

func testIdempotencyLookupWindow(t *testing.T, s store.Store) {
	insert(t, s, keyed("a", "acme", "k1", T0))
	_, err := s.JobGetByIdempotencyKey(ctx, "acme", "k1", T0) // created_at must be after the cutoff
	wantErr(t, "lookup at cutoff", err, store.ErrNotFound)
	_, err = s.JobGetByIdempotencyKey(ctx, "acme", "nope", T0.Add(-time.Hour))
	wantErr(t, "lookup unknown key", err, store.ErrNotFound)
	if _, err := s.JobGetByIdempotencyKey(ctx, "acme", "k1", T0.Add(-time.Microsecond)); err != nil {
		t.Fatalf("lookup just before: %v", err)
	}
}

func testIdempotencySameBatch(t *testing.T, s store.Store) {
	write(t, s, func(w store.Writer) error {
		if err := w.JobInsert(ctx, keyed("first", "acme", "k", T0)); err != nil {
			return err
		}
		wantDuplicateOf(t, w.JobInsert(ctx, keyed("second", "acme", "k", T0)), "first")
		return w.JobInsert(ctx, keyed("third", "acme", "other", T0))
	})
	page, err := s.JobList(ctx, store.JobListParams{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "jobs", []string{"third", "first"}, ids(page.Jobs))
}

func testIdempotencyConcurrent(t *testing.T, s store.Store) {
	const n = 16
	winner := raceWrites(t, s, n, func(i int, w store.Writer) error {
		return w.JobInsert(ctx, keyed(jobID("c", i), "acme", "same", T0.Add(time.Duration(i)*time.Millisecond)))
	}, wantDuplicateOf)
	page, err := s.JobList(ctx, store.JobListParams{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "rows", []string{winner}, ids(page.Jobs))
	got, err := s.JobGetByIdempotencyKey(ctx, "acme", "same", T0.Add(-time.Hour))
	if err != nil || got.ID != winner {
		t.Fatalf("lookup = %v, %v; want %s", got.ID, err, winner)
	}
}

func testIdempotencyPurge(t *testing.T, s store.Store) {
	insert(t, s, keyed("old", "acme", "k1", T0), keyed("older", "acme", "k0", T0.Add(-time.Minute)),
		keyed("young", "acme", "k2", T0.Add(2*time.Hour)))
	var p store.Purged
	write(t, s, func(w store.Writer) (err error) {
		p, err = w.IdempotencyPurge(ctx, T0.Add(time.Hour), 1)
		return err
	})
	// Two were due; the limit took the oldest, and the other is the backlog.
	if want := (store.Purged{Deleted: 1, NextAt: T0}); p != want {
		t.Fatalf("first purge: %+v, want %+v", p, want)
	}
	write(t, s, func(w store.Writer) (err error) {
		p, err = w.IdempotencyPurge(ctx, T0.Add(time.Hour), 10)
		return err
	})
	if want := (store.Purged{Deleted: 1}); p != want {
		t.Fatalf("second purge: %+v, want %+v", p, want)
	}
	_, err := s.JobGetByIdempotencyKey(ctx, "acme", "k1", T0.Add(-time.Hour))
	wantErr(t, "purged lookup", err, store.ErrNotFound)
	if _, err := s.JobGetByIdempotencyKey(ctx, "acme", "k2", T0.Add(-time.Hour)); err != nil {
		t.Fatalf("young lookup: %v", err)
	}
	insert(t, s, keyed("reuse", "acme", "k1", T0.Add(2*time.Hour))) // purged key is free
	write(t, s, func(w store.Writer) error {
		wantDuplicateOf(t, w.JobInsert(ctx, keyed("dup", "acme", "k2", T0.Add(3*time.Hour))), "young")
		return nil
	})
}

// raceWrites runs n Writes at once, released together, each with write
// for its i, and returns the id jobID("c", i) of the one that committed,
// failing the test unless exactly one did and every other one's error is
// what loser accepts of a loser to winner.
func raceWrites(t *testing.T, s store.Store, n int, write func(i int, w store.Writer) error,
	loser func(t *testing.T, err error, winner string)) string {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = s.Write(ctx, func(w store.Writer) error { return write(i, w) })
		}()
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Fatalf("two submits won: %s and %s", winner, jobID("c", i))
			}
			winner = jobID("c", i)
		}
	}
	if winner == "" {
		t.Fatalf("no submit won: %v", errs)
	}
	for _, err := range errs {
		if err != nil {
			loser(t, err, winner)
		}
	}
	return winner
}
