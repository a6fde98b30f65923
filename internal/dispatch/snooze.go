package dispatch

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// Snooze (docs/worker.md, "Snooze"): a handler that finds its job not
// ready ends the attempt with outcome snoozed and a delay. The job goes
// back to blocked until then, its attempt not charged (returned_leases
// + 1, as a preempted attempt) and counted apart (snoozes + 1, a snoozed
// event); the attempt's execution is stored as cancelled with the class
// snoozed. A job that has snoozed max_snoozes times and asks again fails
// with the class snooze_limit.

// checkSnooze refuses a snoozed completion whose delay is out of range
// (invalid_snooze); nothing of it is applied.
func checkSnooze(c api.Completion) *api.ItemResult {
	if c.Outcome == api.OutcomeSnoozed && c.SnoozeMS >= 1 && c.SnoozeMS <= api.MaxSnoozeMS {
		return nil
	}
	if c.Outcome != api.OutcomeSnoozed && c.SnoozeMS == 0 {
		return nil
	}
	msg := fmt.Sprintf("snooze_ms must be between 1 and %d (30 days) with outcome snoozed, got %d with outcome %s: "+
		"nothing was applied; report the attempt again with a delay in range, or as failed", api.MaxSnoozeMS, c.SnoozeMS, c.Outcome)
	return &api.ItemResult{JobID: c.JobID, Error: &api.ErrorBody{Code: api.CodeInvalidSnooze, Message: msg, Field: "snooze_ms"}}
}

// snooze ends a leased or running attempt snoozed for delay.
func (d *Dispatcher) snooze(tx *txn, rec *jobRec, end attemptEnd, delay time.Duration) {
	if rec.job.State == store.StateLeased {
		tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventStarted, end.actor, map[string]any{"started_at": end.started.UTC()})
		d.noteStarted(tx, rec, end.started)
	}
	if limit := d.snoozeCap(rec); rec.job.Snoozes >= limit {
		end.outcome, end.class = store.OutcomeFailed, store.FailSnoozeLimit
		end.err = fmt.Sprintf("asked to snooze for %s after %d snoozes, its max_snoozes: failed (raise max_snoozes on the job, or server.max_snoozes)",
			delay, rec.job.Snoozes)
		d.finish(tx, rec, store.StateFailed, end)
		return
	}
	end.outcome, end.class = store.OutcomeCancelled, store.FailSnoozed
	if end.err == "" {
		end.err = "snoozed for " + delay.String()
	}
	d.writeEnd(tx, rec, end)
	runAt := tx.now.Add(delay)
	returned, snoozes := rec.job.ReturnedLeases+1, rec.job.Snoozes+1
	set := store.JobSet{State: store.Ptr(store.StateBlocked), RunAt: &runAt, EnqueuedAt: &runAt,
		WorkerID: store.Ptr(""), LeaseExpiresAt: &time.Time{}, StartedAt: &time.Time{},
		ReturnedLeases: &returned, Snoozes: &snoozes}
	if !d.transition(tx, rec, []store.State{store.StateLeased, store.StateRunning}, set) {
		return
	}
	d.releaseFromWorker(tx, rec, policy.Released)
	rec.leasedAt, rec.deliveredAt = time.Time{}, time.Time{}
	tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventSnoozed, end.actor,
		map[string]any{"delay_ms": delay.Milliseconds(), "run_at": runAt.UTC(), "snoozes": snoozes})
	if err := d.eng.Submit(policyJob(rec.job), tx.now); err != nil {
		tx.fatal(fmt.Errorf("snooze %s: %w", rec.job.ID, err))
	}
}

// snoozeCap is the job's max_snoozes; a job stored before there was one
// takes the server's.
func (d *Dispatcher) snoozeCap(rec *jobRec) int {
	if rec.job.MaxSnoozes > 0 {
		return rec.job.MaxSnoozes
	}
	return d.cfg.Server.SnoozeCap()
}
