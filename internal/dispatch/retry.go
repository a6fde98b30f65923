package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// Retry sends failed or cancelled jobs back to the queue by hand: each
// gets one more attempt (max_attempts becomes its charged attempts + 1, if
// that is more), its outcome fields are cleared, it is pending again with
// its priority and lane, and a "retried" event records who did it. Its
// executions, logs and events stay. Dependencies are not checked again
// (they were met when it first ran), and jobs that were cancelled because
// it failed stay cancelled.
//
// The results, in ids' order: api.ResultRetried, ResultNotFinished (the
// job has not ended), ResultNotRetriable (it succeeded), "" when it changed
// meanwhile, or ResultNotFound.
func (d *Dispatcher) Retry(ctx context.Context, ids []string, actor string) ([]string, error) {
	results := make([]string, len(ids))
	err := d.submit(ctx, func(tx *txn) {
		for i, id := range ids {
			if tx.err != nil {
				return
			}
			results[i] = d.retryByHand(tx, id, actor)
		}
	})
	return results, err
}

func (d *Dispatcher) retryByHand(tx *txn, id, actor string) string {
	if d.jobs[id] != nil {
		return api.ResultNotFinished
	}
	j, err := d.st.JobGet(tx.ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return api.ResultNotFound
	case err != nil:
		tx.fatal(fmt.Errorf("retry: read job %s: %w", id, err))
		return ""
	case j.State == store.StateSucceeded:
		return api.ResultNotRetriable
	case j.State != store.StateFailed && j.State != store.StateCancelled:
		return "" // it ended in this batch, or has not committed its end yet
	}
	from := j.State
	maxAttempts := max(j.MaxAttempts, j.ChargedAttempts()+1)
	rec := &jobRec{job: j}
	set := store.JobSet{
		State: store.Ptr(store.StatePending), EnqueuedAt: &tx.now, FinishedAt: &time.Time{}, // NULL
		CancelRequested: store.Ptr(false), LastError: store.Ptr(""), ClearExitCode: true,
		FailureClass: store.Ptr(store.FailureClass("")), MaxAttempts: &maxAttempts,
		Snoozes: store.Ptr(0), // its max_snoozes again (returned_leases keeps them)
		// The attempt the row held becomes an execution row, in this
		// operation (package store, "The finished attempt in the job
		// row"); the record keeps no event of it.
		LeaseEventID: store.Ptr(int64(0)), LeasedAt: &time.Time{}, StartEventID: store.Ptr(int64(0)), StartEventAt: &time.Time{},
	}
	if !d.transition(tx, rec, []store.State{from}, set) {
		return ""
	}
	pj := policyJob(rec.job)
	pj.DependsOn = nil
	if err := d.eng.Submit(pj, tx.now); err != nil {
		tx.fatal(fmt.Errorf("engine submit %s: %w", id, err))
		return ""
	}
	d.jobs[id] = rec
	d.byState.add(rec)
	d.byTenant[j.Tenant]++
	if rec.job.Held {
		if err := d.eng.Hold(id, tx.now); err != nil {
			tx.fatal(fmt.Errorf("engine hold %s: %w", id, err))
			return ""
		}
	} else {
		tx.arrive(rec)
	}
	tx.event(id, j.Attempt, j.Tenant, store.EventRetried, actor, map[string]any{
		"from": from, "max_attempts": maxAttempts, "previous_max_attempts": j.MaxAttempts,
	})
	return api.ResultRetried
}
