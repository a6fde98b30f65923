package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// uniqueJob is a job of tenant acme, type report, with key and a rule on
// (type, key) over states and period.
func uniqueJob(id, key string, created time.Time, period time.Duration, states ...store.State) store.Job {
	j := newJob(id, "acme", created)
	j.Key = key
	if len(states) == 0 {
		states = []store.State{store.StatePending, store.StateRunning}
	}
	j.Unique = &store.UniqueRule{By: []store.UniqueField{store.UniqueByType, store.UniqueByKey}, States: states, Period: period}
	return j
}

// wantUniqueOf checks that err is a *UniqueError naming holder.
func wantUniqueOf(t *testing.T, err error, holder string) {
	t.Helper()
	var dup *store.UniqueError
	if !errors.As(err, &dup) || !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("got error %v, want a *store.UniqueError", err)
	}
	if dup.JobID != holder {
		t.Fatalf("UniqueError.JobID = %q, want %q", dup.JobID, holder)
	}
}

// tryInsert inserts j in a Write of its own and returns the insert's
// outcome (the Write commits in any case).
func tryInsert(t *testing.T, s store.Store, j store.Job) error {
	t.Helper()
	var got error
	write(t, s, func(w store.Writer) error {
		got = w.JobInsert(ctx, j)
		return nil
	})
	return got
}

func testUniqueRoundTrip(t *testing.T, s store.Store) {
	j := uniqueJob("u", "repo-1", T0, 10*time.Minute, store.StateBlocked, store.StatePending)
	insert(t, s, j)
	diff(t, "JobGet", j, get(t, s, "u"))
	if get(t, s, "u").Unique.Period != 10*time.Minute {
		t.Fatalf("period did not round trip")
	}
}

func testUniqueDuplicate(t *testing.T, s store.Store) {
	insert(t, s, uniqueJob("a", "repo-1", T0, 0))
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("b", "repo-1", T0.Add(time.Hour), 0)), "a")
	_, err := s.JobGet(ctx, "b")
	wantErr(t, "JobGet(b)", err, store.ErrNotFound)
	// Another key, another tenant, another type: no duplicate.
	insert(t, s, uniqueJob("c", "repo-2", T0, 0))
	other := uniqueJob("d", "repo-1", T0, 0)
	other.Tenant = "globex"
	insert(t, s, other)
	typed := uniqueJob("e", "repo-1", T0, 0)
	typed.Type = "build"
	insert(t, s, typed)
	// A rule on the key alone matches jobs of another type.
	byKey := uniqueJob("f", "repo-1", T0, 0)
	byKey.Type = "lint"
	byKey.Unique.By = []store.UniqueField{store.UniqueByKey}
	insert(t, s, byKey)
	wantUniqueOf(t, tryInsert(t, s, func() store.Job {
		j := uniqueJob("g", "repo-1", T0, 0)
		j.Unique.By = []store.UniqueField{store.UniqueByKey}
		return j
	}()), "f")
}

// A claim binds only while its job is in one of the new job's states: a
// job that moved on frees it, and the next job claims it in turn.
func testUniqueReleasedByState(t *testing.T, s store.Store) {
	insert(t, s, uniqueJob("a", "repo-1", T0, 0))
	write(t, s, func(w store.Writer) error {
		return w.JobTransition(ctx, store.JobTransitionParams{ID: "a", ExpectAttempt: store.AnyAttempt, At: T0,
			Set: store.JobSet{State: store.Ptr(store.StateSucceeded), FinishedAt: store.Ptr(T0)}})
	})
	insert(t, s, uniqueJob("b", "repo-1", T0.Add(time.Minute), 0))
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("c", "repo-1", T0.Add(2*time.Minute), 0)), "b")
	// A rule that counts succeeded jobs finds a (b holds the claim now,
	// and b is pending: it binds under this rule too).
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("d", "repo-1", T0.Add(2*time.Minute), 0,
		store.StatePending, store.StateSucceeded)), "b")
	// A rule that counts only running jobs does not bind on a pending b.
	insert(t, s, uniqueJob("e", "repo-1", T0.Add(3*time.Minute), 0, store.StateRunning))
	if got := get(t, s, "a"); got.State != store.StateSucceeded || got.Unique == nil {
		t.Fatalf("holder changed: %+v", got)
	}
}

func testUniquePeriod(t *testing.T, s store.Store) {
	insert(t, s, uniqueJob("a", "repo-1", T0, 10*time.Minute))
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("b", "repo-1", T0.Add(10*time.Minute-time.Millisecond), 10*time.Minute)), "a")
	insert(t, s, uniqueJob("c", "repo-1", T0.Add(10*time.Minute), 10*time.Minute)) // a is a period old: free
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("d", "repo-1", T0.Add(11*time.Minute), 10*time.Minute)), "c")
	// The new job's period decides: without one, a job of any age binds.
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("e", "repo-1", T0.Add(48*time.Hour), 0)), "c")
}

// A job that retention deleted holds nothing.
func testUniqueDeletedHolder(t *testing.T, s store.Store) {
	done := uniqueJob("a", "repo-1", T0.Add(-48*time.Hour), 0, store.StateSucceeded)
	done.State, done.FinishedAt = store.StateSucceeded, T0.Add(-47*time.Hour)
	insert(t, s, done)
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("b", "repo-1", T0, 0, store.StateSucceeded)), "a")
	write(t, s, func(w store.Writer) error {
		_, err := w.JobDeleteFinished(ctx, T0.Add(-time.Hour), 10)
		return err
	})
	insert(t, s, uniqueJob("c", "repo-1", T0, 0, store.StatePending))
	wantUniqueOf(t, tryInsert(t, s, uniqueJob("d", "repo-1", T0, 0)), "c")
}

func testUniqueSameBatch(t *testing.T, s store.Store) {
	write(t, s, func(w store.Writer) error {
		if err := w.JobInsert(ctx, uniqueJob("first", "k", T0, 0)); err != nil {
			return err
		}
		wantUniqueOf(t, w.JobInsert(ctx, uniqueJob("second", "k", T0, 0)), "first")
		wantUniqueOf(t, w.JobInsertBatched(ctx, uniqueJob("third", "k", T0, 0)), "first")
		return w.JobInsertBatched(ctx, uniqueJob("fourth", "other", T0, 0))
	})
	page, err := s.JobList(ctx, store.JobListParams{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "jobs", []string{"fourth", "first"}, ids(page.Jobs))
}

// A duplicate by its unique rule stores nothing, not even the claim of
// its idempotency key.
func testUniqueDuplicateKeepsKeyFree(t *testing.T, s store.Store) {
	insert(t, s, uniqueJob("a", "repo-1", T0, 0))
	dup := uniqueJob("b", "repo-1", T0, 0)
	dup.IdempotencyKey = "k1"
	wantUniqueOf(t, tryInsert(t, s, dup), "a")
	insert(t, s, keyed("c", "acme", "k1", T0))
}

func testUniquePayload(t *testing.T, s store.Store) {
	byPayload := func(id, payload string) store.Job {
		j := uniqueJob(id, "", T0, 0)
		j.Unique.By = []store.UniqueField{store.UniqueByPayload, store.UniqueByTenant}
		j.Payload = []byte(payload)
		return j
	}
	insert(t, s, byPayload("a", `{"repo": "x", "n": 1.50}`))
	wantUniqueOf(t, tryInsert(t, s, byPayload("b", `{"n":1.50,"repo":"x"}`)), "a")
	insert(t, s, byPayload("c", `{"n":1.5,"repo":"x"}`)) // another number as written
	insert(t, s, byPayload("d", `{"repo":"y"}`))
}

func testUniqueConcurrent(t *testing.T, s store.Store) {
	const n = 16
	winner := raceWrites(t, s, n, func(i int, w store.Writer) error {
		return w.JobInsert(ctx, uniqueJob(jobID("c", i), "same", T0.Add(time.Duration(i)*time.Millisecond), 0))
	}, wantUniqueOf)
	page, err := s.JobList(ctx, store.JobListParams{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "rows", []string{winner}, ids(page.Jobs))
}

func testUniqueInvalid(t *testing.T, s store.Store) {
	for name, rule := range map[string]store.UniqueRule{
		"no field":      {States: []store.State{store.StatePending}},
		"unknown field": {By: []store.UniqueField{"colour"}, States: []store.State{store.StatePending}},
		"no state":      {By: []store.UniqueField{store.UniqueByType}},
		"unknown state": {By: []store.UniqueField{store.UniqueByType}, States: []store.State{"asleep"}},
		"period < 0":    {By: []store.UniqueField{store.UniqueByType}, States: []store.State{store.StatePending}, Period: -time.Second},
		"period > max": {By: []store.UniqueField{store.UniqueByType}, States: []store.State{store.StatePending},
			Period: store.MaxUniquePeriod + time.Millisecond},
	} {
		j := newJob("bad", "acme", T0)
		j.Unique = &rule
		wantErr(t, name, tryInsert(t, s, j), store.ErrInvalid)
	}
}
