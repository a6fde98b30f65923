package dispatch

import (
	"fmt"

	"github.com/fairwayhq/fairway/internal/metrics"
	"github.com/fairwayhq/fairway/internal/store"
)

// Preemption of running jobs (docs/scheduling.md, "Preemption").
//
// After each admission pass the engine says which running jobs to stop
// for the jobs that hold a reservation and have waited past their
// preempt_after (policy.Engine.Preemptions). A victim still leased (its
// worker has not started it) goes back to the queue at once, uncharged.
// A running victim is marked: its worker's next heartbeat answer lists
// it under preempt, the worker stops it as it stops a cancel (SIGTERM,
// then SIGKILL after the kill grace; a command finds FAIRWAY_PREEMPTED_FILE
// written, a Go handler's context ends with worker.ErrPreempted) and
// reports the outcome preempted. The job is then queued again with its
// age and its attempt not charged (returned_leases + 1), its execution
// recorded with the failure class preempted, and events name who
// preempted whom: preempt_requested, then preempted.
//
// The mark lives in memory. After a restart or a failover the engine
// plans again from the store and chooses the same victim (the least
// progress, by the running jobs' start times); a worker that was already
// stopping it reports preempted, which is accepted whether or not this
// server asked.

// preemptRunning acts on the engine's preemption decisions.
func (d *Dispatcher) preemptRunning(tx *txn) {
	if tx.err != nil {
		return
	}
	for _, p := range d.eng.Preemptions(tx.now) {
		for _, id := range p.Victims {
			rec := d.jobs[id]
			if rec == nil || rec.worker == nil {
				tx.fatal(fmt.Errorf("dispatcher: engine preempts %s, which no worker holds", id))
				return
			}
			d.observe(tx, func(m *metrics.Metrics) { m.Preempted(rec.job.Lane) })
			if rec.job.State == store.StateLeased || rec.undelivered() {
				tx.nudge(rec.worker)
				d.handBack(tx, rec, "preempted for job "+p.JobID+" before it started")
				continue
			}
			rec.preemptFor = p.JobID
			tx.event(id, rec.job.Attempt, rec.job.Tenant, store.EventPreemptRequested, "system",
				map[string]any{"for": p.JobID, "worker": p.WorkerID, "grace_ends": p.GraceEnds.UTC()})
			tx.nudge(rec.worker)
		}
	}
}

// requeuePreempted records a preempted attempt and queues its job again
// with its age, the attempt not charged.
func (d *Dispatcher) requeuePreempted(tx *txn, rec *jobRec, end attemptEnd) {
	forJob, wk := rec.preemptFor, rec.worker
	end.outcome, end.class = store.OutcomeCancelled, store.FailPreempted
	if end.err == "" {
		end.err = "preempted for a job of higher priority"
	}
	if end.started.IsZero() {
		end.started = tx.now
	}
	d.writeEnd(tx, rec, end)
	if !d.requeueUncharged(tx, rec) {
		return
	}
	rec.preemptFor = ""
	tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventPreempted, end.actor,
		map[string]string{"for": forJob, "worker": wk.w.ID})
}
