package storetest

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// testSubmitTokens: a job's submit token is written with its spec, read
// back with the job, and SubmitTokens lists the tokens of the jobs from
// an id on, in id order, skipping the jobs without one. Ids are made by
// NewID so that IDFloor's bound means what it does for the dispatcher.
func testSubmitTokens(t *testing.T, s store.Store) {
	var gen store.IDGenerator
	at := func(d time.Duration, tenant, token string) store.Job {
		j := newJob(gen.New(T0.Add(d)), tenant, T0.Add(d))
		j.SubmitToken = token
		return j
	}
	old := at(-10*time.Minute, "acme", "tok-old")
	a1, a2 := at(0, "acme", "tok-a"), at(0, "acme", "tok-a") // one submit, two jobs
	none := at(time.Second, "acme", "")
	b := at(2*time.Second, "globex", "tok-b")
	insert(t, s, old, a1)
	write(t, s, func(w store.Writer) error {
		for _, j := range []store.Job{a2, none, b} {
			if err := w.JobInsertBatched(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	diff(t, "JobGet", a2.AsStored(), get(t, s, a2.ID))
	if got := get(t, s, none.ID).SubmitToken; got != "" {
		t.Errorf("a job without a token read back token %q", got)
	}
	got, err := s.SubmitTokens(ctx, store.IDFloor(T0.Add(-time.Minute)))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "SubmitTokens", []store.SubmitToken{
		{Tenant: "acme", Token: "tok-a", JobID: a1.ID, CreatedAt: T0},
		{Tenant: "acme", Token: "tok-a", JobID: a2.ID, CreatedAt: T0},
		{Tenant: "globex", Token: "tok-b", JobID: b.ID, CreatedAt: T0.Add(2 * time.Second)},
	}, got)
	got, err = s.SubmitTokens(ctx, store.IDFloor(T0.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "SubmitTokens after every job", []store.SubmitToken(nil), got)
}
