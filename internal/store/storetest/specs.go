package storetest

import (
	"testing"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// SpecJobs are jobs for the drivers' migration tests of job_specs (store
// doc.go, "The hot row and its indexes"): one with every field set
// (unique rule, result location and snoozes too), a minimal one, and two
// finished ones old enough for retention. A test writes them into the
// jobs table as it was before the migration (sqlstore.OldJobRow), then
// checks them with CheckSpecJobs.
func SpecJobs() []store.Job {
	full := fullJob("spec-full")
	full.Unique = &store.UniqueRule{By: []store.UniqueField{store.UniqueByPayload}, States: []store.State{store.StatePending},
		Period: time.Hour}
	full.ResultLocation, full.Snoozes, full.MaxSnoozes = "file:///srv/results", 1, 4
	minimal := store.Job{ID: "spec-min", Tenant: "t", Type: "x", State: store.StateBlocked, CreatedAt: T0}
	old := T0.Add(-48 * time.Hour)
	done := fullJob("spec-done")
	done.IdempotencyKey, done.CreatedAt = "req-done", old
	done.State, done.FinishedAt = store.StateSucceeded, old.Add(time.Minute)
	failed := newJob("spec-failed", "t", old)
	failed.Payload, failed.State, failed.FinishedAt = []byte(`{"n":1}`), store.StateFailed, old.Add(time.Minute)
	return []store.Job{full, minimal, done, failed}
}

// CheckSpecJobs checks that s reads the jobs of SpecJobs back as they
// were written, by id, together, among the unfinished and in a listing;
// then it deletes the finished ones by retention (the driver's test
// checks that their specs went with them).
func CheckSpecJobs(t *testing.T, s store.Store, jobs []store.Job) {
	t.Helper()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		diff(t, "JobGet "+j.ID, j.AsStored(), get(t, s, j.ID))
		ids[i] = j.ID
	}
	many, err := s.JobGetMany(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	var want []store.Job
	for _, j := range jobs {
		want = append(want, j.AsStored())
	}
	diff(t, "JobGetMany", want, many)
	unfinished, err := s.JobListUnfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "JobListUnfinished", []store.Job{jobs[1].AsStored(), jobs[0].AsStored()}, unfinished) // created T0, T0+2µs
	page, err := s.JobList(ctx, store.JobListParams{Tag: "nightly"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "JobList by tag", []store.Job{jobs[0].AsStored(), jobs[2].AsStored()}, page.Jobs)
	write(t, s, func(w store.Writer) error {
		p, err := w.JobDeleteFinished(ctx, T0.Add(-time.Hour), 10)
		if err == nil && p.Deleted != 2 {
			t.Errorf("retention deleted %d jobs, want 2", p.Deleted)
		}
		return err
	})
}
