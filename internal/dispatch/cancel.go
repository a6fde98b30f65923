package dispatch

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/store"
)

// cancel applies DESIGN §4's cancel races: a job not yet running is
// cancelled at once, and so is one whose lease has not left the server
// (its attempt is no longer current, so the lease is dropped from the
// mailbox); a running one (from the lease on) is asked to stop through its
// worker's next heartbeat; a finished one is left alone. It returns false when the job is
// not in the index (finished, or unknown).
func (d *Dispatcher) cancel(tx *txn, id, actor string) (string, bool) {
	rec := d.jobs[id]
	if rec == nil {
		return api.ResultAlreadyFinished, false
	}
	switch {
	case rec.job.State == store.StateLeased || rec.undelivered():
		tx.nudge(rec.worker)
		end := attemptEnd{outcome: store.OutcomeCancelled, class: store.FailCancelled, err: "cancelled while leased", actor: actor}
		d.finish(tx, rec, store.StateCancelled, end)
	case rec.job.State == store.StateRunning:
		if !rec.job.CancelRequested {
			if d.transition(tx, rec, []store.State{store.StateRunning}, store.JobSet{CancelRequested: store.Ptr(true)}) {
				tx.event(id, rec.job.Attempt, rec.job.Tenant, store.EventCancelRequested, actor, nil)
				tx.nudge(rec.worker)
			}
		}
		return api.ResultCancelRequested, true
	default:
		d.finish(tx, rec, store.StateCancelled, attemptEnd{actor: actor})
	}
	return api.ResultCancelled, true
}

// reprioritize changes a pending job's priority; it keeps its age.
func (d *Dispatcher) reprioritize(tx *txn, id string, prio int, actor string) (string, bool) {
	rec := d.jobs[id]
	if rec == nil {
		return api.ResultAlreadyFinished, false
	}
	if rec.job.State == store.StateLeased || rec.job.State == store.StateRunning {
		return api.ResultAlreadyRunning, true
	}
	old := rec.job.Priority
	set := store.JobSet{Priority: &prio}
	if rec.job.SubmitPriority == nil && prio != old {
		// The job row's submitted event keeps the priority it was
		// submitted with (package store, "The submitted event in the
		// job row").
		set.SubmitPriority = &old
	}
	if !d.transition(tx, rec, []store.State{rec.job.State}, set) {
		return "", true
	}
	if err := d.eng.Reprioritize(id, prio, tx.now); err != nil {
		tx.fatal(fmt.Errorf("engine reprioritize %s: %w", id, err))
	}
	tx.event(id, rec.job.Attempt, rec.job.Tenant, store.EventReprioritized, actor, map[string]int{"from": old, "to": prio})
	if prio > old && rec.job.State == store.StatePending {
		tx.arrive(rec)
	}
	return api.ResultReprioritized, true
}

// extendSLA adds by to the job's max and expected time.
func (d *Dispatcher) extendSLA(tx *txn, id string, by time.Duration, actor string) bool {
	rec := d.jobs[id]
	if rec == nil {
		return false
	}
	set := store.JobSet{}
	if rec.job.Timeout > 0 {
		set.Timeout = store.Ptr(rec.job.Timeout + by)
	}
	if rec.job.Expected > 0 {
		set.Expected = store.Ptr(rec.job.Expected + by)
	}
	if set.Timeout == nil && set.Expected == nil {
		return true
	}
	if d.transition(tx, rec, []store.State{rec.job.State}, set) {
		tx.nudge(rec.worker)
		rec.slaWarned, rec.slaViolated = false, false
		tx.event(id, rec.job.Attempt, rec.job.Tenant, store.EventSLAExtended, actor, map[string]int64{"extend_ms": by.Milliseconds()})
	}
	return true
}
