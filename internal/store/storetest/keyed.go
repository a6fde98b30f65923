package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Keyed inserts through JobInsertBatched, which a driver may batch: the
// idempotency contract holds as for JobInsert.

// testKeyedBatchedSameWrite: a second job with the same key in one Write
// is a duplicate of the first, answered at once; other keys go in.
func testKeyedBatchedSameWrite(t *testing.T, s store.Store) {
	write(t, s, func(w store.Writer) error {
		if err := w.JobInsertBatched(ctx, keyed("first", "acme", "k", T0)); err != nil {
			return err
		}
		wantDuplicateOf(t, w.JobInsertBatched(ctx, keyed("second", "acme", "k", T0.Add(time.Second))), "first")
		if err := w.JobInsertBatched(ctx, keyed("third", "acme", "other", T0)); err != nil {
			return err
		}
		return w.JobInsertBatched(ctx, keyed("fourth", "globex", "k", T0))
	})
	for id, key := range map[string]string{"first": "k", "third": "other"} {
		if got, err := s.JobGetByIdempotencyKey(ctx, "acme", key, T0.Add(-time.Hour)); err != nil || got.ID != id {
			t.Errorf("acme key %s: %v, %v; want %s", key, got.ID, err, id)
		}
	}
	if _, err := s.JobGet(ctx, "second"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the duplicate was stored: %v", err)
	}
	diff(t, "globex k", "fourth", get(t, s, "fourth").ID)
}

// testKeyedBatchedExpiredClaim: inside one Write, an expired claim is
// overwritten by a batched insert, which then holds the key.
func testKeyedBatchedExpiredClaim(t *testing.T, s store.Store) {
	insert(t, s, keyed("old", "acme", "k", T0))
	later := T0.Add(store.IdempotencyWindow + time.Second)
	write(t, s, func(w store.Writer) error {
		if err := w.JobInsertBatched(ctx, keyed("new", "acme", "k", later)); err != nil {
			return err
		}
		wantDuplicateOf(t, w.JobInsertBatched(ctx, keyed("newer", "acme", "k", later.Add(time.Second))), "new")
		return nil
	})
	holder, err := s.IdempotencyHolder(ctx, "acme", "k", later.Add(-time.Second))
	if err != nil || holder != "new" {
		t.Fatalf("holder = %q, %v; want new", holder, err)
	}
	diff(t, "old job kept", "old", get(t, s, "old").ID)
}

// testKeyedTakenIDLeavesKeyFree: a keyed insert whose id is taken is
// ErrExists and claims nothing: the key goes to the next job, in the same
// Write. A key held inside its window wins over a taken id (duplicate).
func testKeyedTakenIDLeavesKeyFree(t *testing.T, s store.Store) {
	insert(t, s, newJob("a", "acme", T0), keyed("h", "acme", "held", T0))
	write(t, s, func(w store.Writer) error {
		wantErr(t, "JobInsert of a taken id", w.JobInsert(ctx, keyed("a", "acme", "k1", T0)), store.ErrExists)
		wantErr(t, "JobInsertBatched of a taken id", w.JobInsertBatched(ctx, keyed("a", "acme", "k2", T0)), store.ErrExists)
		wantDuplicateOf(t, w.JobInsertBatched(ctx, keyed("a", "acme", "held", T0)), "h")
		if err := w.JobInsert(ctx, keyed("b", "acme", "k1", T0)); err != nil {
			return err
		}
		return w.JobInsertBatched(ctx, keyed("c", "acme", "k2", T0))
	})
	for key, id := range map[string]string{"k1": "b", "k2": "c", "held": "h"} {
		if holder, err := s.IdempotencyHolder(ctx, "acme", key, T0.Add(-time.Hour)); err != nil || holder != id {
			t.Errorf("key %s: holder %q, %v; want %s", key, holder, err, id)
		}
	}
}

// testKeyedBatchedIDOfHeldJob: a keyed job batched after a job of the same
// id in one Write fails the Write with ErrExists; the key stays free.
func testKeyedBatchedIDOfHeldJob(t *testing.T, s store.Store) {
	err := s.Write(ctx, func(w store.Writer) error {
		if err := w.JobInsertBatched(ctx, newJob("x", "acme", T0)); err != nil {
			return err
		}
		return w.JobInsertBatched(ctx, keyed("x", "acme", "k", T0))
	})
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("a Write with a keyed job of a held job's id: %v, want ErrExists", err)
	}
	if _, err := s.IdempotencyHolder(ctx, "acme", "k", T0.Add(-time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the failed Write left a claim: %v", err)
	}
	insert(t, s, keyed("y", "acme", "k", T0))
}

// testKeyedBatchedConcurrent: concurrent Writes inserting one key through
// JobInsertBatched: exactly one wins, the others name it.
func testKeyedBatchedConcurrent(t *testing.T, s store.Store) {
	const n = 16
	winner := raceWrites(t, s, n, func(i int, w store.Writer) error {
		if err := w.JobInsertBatched(ctx, newJob(jobID("u", i), "acme", T0)); err != nil {
			return err
		}
		return w.JobInsertBatched(ctx, keyed(jobID("c", i), "acme", "same", T0.Add(time.Duration(i)*time.Millisecond)))
	}, wantDuplicateOf)
	if holder, err := s.IdempotencyHolder(ctx, "acme", "same", T0.Add(-time.Hour)); err != nil || holder != winner {
		t.Fatalf("holder = %q, %v; want %s", holder, err, winner)
	}
}

// testIdempotencyHolders: the holders of many claims in one call, across
// query chunks: held claims by claim; expired, other tenants' and unknown
// keys absent; a claim outlives its job.
func testIdempotencyHolders(t *testing.T, s store.Store) {
	const n = 300
	var jobs []store.Job
	var claims []store.Claim
	want := map[store.Claim]string{}
	for i := range n {
		id, key := jobID("h", i), jobID("k", i)
		jobs = append(jobs, keyed(id, "acme", key, T0))
		claims = append(claims, store.Claim{Tenant: "acme", Key: key})
		want[store.Claim{Tenant: "acme", Key: key}] = id
	}
	jobs = append(jobs, keyed("old", "acme", "old", T0.Add(-time.Hour)), keyed("g", "globex", "g", T0))
	insert(t, s, jobs...)
	claims = append(claims, store.Claim{Tenant: "acme", Key: "old"}, store.Claim{Tenant: "acme", Key: "g"},
		store.Claim{Tenant: "acme", Key: "none"})
	got, err := s.IdempotencyHolders(ctx, claims, T0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "holders", want, got)
	if got, err := s.IdempotencyHolders(ctx, nil, T0); err != nil || len(got) != 0 {
		t.Fatalf("no claims: %v, %v", got, err)
	}
}
