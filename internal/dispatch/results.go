package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/fairwayhq/fairway/internal/results"
	"github.com/fairwayhq/fairway/internal/store"
)

// resultPending marks an ended attempt's result upload pending, due now,
// when its job names a result location: the same transaction that records
// the end records that the upload is owed (package results).
func (d *Dispatcher) resultPending(tx *txn, rec *jobRec, e *store.Execution) {
	if rec.job.ResultLocation == "" {
		return
	}
	loc, err := results.ParseLocation(rec.job.ResultLocation)
	if err != nil {
		// Checked at submit; a location stored by an older build that no
		// longer parses is recorded as failed, not lost.
		e.ResultState, e.ResultError, e.ResultURL = store.ResultFailed, err.Error(), rec.job.ResultLocation
		return
	}
	e.ResultState, e.ResultNextAt = store.ResultPending, tx.now
	e.ResultURL = loc.AttemptURL(rec.job.ID, rec.job.Attempt)
	if d.resultsPending != nil {
		tx.then(d.resultsPending)
	}
}

// RecordResult records one try of an attempt's result upload with its
// audit event (result_written, or result_write_failed with the error and
// whether it is retried). store.ErrConflict: that try was recorded
// already; store.ErrNotFound: the execution is gone.
func (d *Dispatcher) RecordResult(ctx context.Context, u store.ResultUpdate, tenant string) error {
	var opErr error
	err := d.submit(ctx, func(tx *txn) {
		opErr = tx.w.ExecutionResultUpdate(tx.ctx, u)
		switch {
		case errors.Is(opErr, store.ErrConflict), errors.Is(opErr, store.ErrNotFound), errors.Is(opErr, store.ErrInvalid):
			return
		case opErr != nil:
			tx.fatal(fmt.Errorf("record result %s/%d: %w", u.JobID, u.Attempt, opErr))
			return
		}
		actor := "results"
		if u.State == store.ResultWritten {
			tx.event(u.JobID, u.Attempt, tenant, store.EventResultWritten, actor, map[string]any{"tries": u.Tries})
			return
		}
		detail := map[string]any{"tries": u.Tries, "error": u.Error, "final": u.State == store.ResultFailed}
		if u.State == store.ResultPending {
			detail["next_try_at"] = u.NextAt.UTC()
		}
		tx.event(u.JobID, u.Attempt, tenant, store.EventResultFailed, actor, detail)
	})
	if err != nil {
		return err
	}
	return opErr
}
