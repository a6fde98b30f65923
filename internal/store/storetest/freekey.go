package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// JobInsertFreeKey (store doc.go, "Keyed inserts on the deferred path"):
// a key the caller found free is claimed with the insert, and a key held
// after all fails the whole Write, as a missed guard does.

// freeKeyed inserts jobs through JobInsertFreeKey in one Write.
func freeKeyed(jobs ...store.Job) func(w store.Writer) error {
	return func(w store.Writer) error {
		for _, j := range jobs {
			if err := w.JobInsertFreeKey(ctx, j); err != nil {
				return err
			}
		}
		return nil
	}
}

// resume lets a queueing store take writes again after a failed one.
func resume(s store.Store) {
	if q, ok := s.(store.Queueing); ok {
		q.Resume()
	}
}

// testFreeKeyInsert: a free key is claimed with the job, visible to a
// read made once WriteDeferred returned; an expired claim is taken over;
// a job without a key goes in as by JobInsertBatched.
func testFreeKeyInsert(t *testing.T, s store.Store) {
	insert(t, s, keyed("old", "acme", "expired", T0))
	later := T0.Add(store.IdempotencyWindow + time.Second)
	ch, err := s.WriteDeferred(ctx, freeKeyed(keyed("a", "acme", "k", later), keyed("b", "acme", "expired", later),
		newJob("c", "acme", later)))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.JobGetByIdempotencyKey(ctx, "acme", "k", T0); err != nil || got.ID != "a" {
		t.Fatalf("key k after WriteDeferred returned: %q, %v; want a", got.ID, err)
	}
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	got, err := s.IdempotencyHolders(ctx, []store.Claim{{Tenant: "acme", Key: "k"}, {Tenant: "acme", Key: "expired"}}, later.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "holders", map[store.Claim]string{{Tenant: "acme", Key: "k"}: "a", {Tenant: "acme", Key: "expired"}: "b"}, got)
	diff(t, "job a", keyed("a", "acme", "k", later), get(t, s, "a"))
	get(t, s, "c")
}

// testFreeKeyHeldFailsWrite: a key held inside its window fails the Write
// with ErrKeyHeld (an ErrConflict) and nothing of it commits; so does one
// key claimed twice in a Write, and a taken id (ErrExists), which leaves
// the key free.
func testFreeKeyHeldFailsWrite(t *testing.T, s store.Store) {
	insert(t, s, keyed("h", "acme", "held", T0))
	err := s.Write(ctx, func(w store.Writer) error {
		if err := w.JobInsertBatched(ctx, newJob("p", "acme", T0)); err != nil {
			return err
		}
		return freeKeyed(keyed("x", "acme", "free", T0), keyed("y", "acme", "held", T0.Add(time.Hour)))(w)
	})
	if !errors.Is(err, store.ErrKeyHeld) {
		t.Fatalf("a Write claiming a held key: %v, want ErrKeyHeld", err)
	}
	resume(s)
	err = s.Write(ctx, freeKeyed(keyed("d1", "acme", "twice", T0), keyed("d2", "acme", "twice", T0)))
	if err == nil {
		t.Fatal("a Write claiming one key twice committed")
	}
	resume(s)
	err = s.Write(ctx, freeKeyed(keyed("h", "acme", "taken-id", T0)))
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("a Write with a taken id: %v, want ErrExists", err)
	}
	resume(s)
	if got, err := s.JobGetMany(ctx, []string{"p", "x", "y", "d1", "d2"}); err != nil || len(got) != 0 {
		t.Fatalf("the failed Writes left %d jobs (%v)", len(got), err)
	}
	holders, err := s.IdempotencyHolders(ctx, []store.Claim{{Tenant: "acme", Key: "held"}, {Tenant: "acme", Key: "free"},
		{Tenant: "acme", Key: "twice"}, {Tenant: "acme", Key: "taken-id"}}, T0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "holders after the failed Writes", map[store.Claim]string{{Tenant: "acme", Key: "held"}: "h"}, holders)
	write(t, s, freeKeyed(keyed("z", "acme", "free", T0)))
}

// testFreeKeyConcurrent: concurrent Writes claiming one key that each
// found free: exactly one commits, every other fails with ErrKeyHeld.
func testFreeKeyConcurrent(t *testing.T, s store.Store) {
	const n = 16
	winner := raceWrites(t, s, n, func(i int, w store.Writer) error {
		return freeKeyed(keyed(jobID("c", i), "acme", "same", T0.Add(time.Duration(i)*time.Millisecond)))(w)
	}, func(t *testing.T, err error, _ string) {
		if !errors.Is(err, store.ErrKeyHeld) {
			t.Errorf("a losing Write: %v, want ErrKeyHeld", err)
		}
	})
	resume(s)
	if holder, err := s.IdempotencyHolder(ctx, "acme", "same", T0.Add(-time.Hour)); err != nil || holder != winner {
		t.Fatalf("holder = %q, %v; want %s", holder, err, winner)
	}
	page, err := s.JobList(ctx, store.JobListParams{Tenant: "acme", Limit: 100})
	if err != nil || len(page.Jobs) != 1 {
		t.Fatalf("%d jobs stored (%v), want 1", len(page.Jobs), err)
	}
}
