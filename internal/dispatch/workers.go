package dispatch

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/api"
	"github.com/fairwayhq/fairway/internal/policy"
	"github.com/fairwayhq/fairway/internal/store"
)

// register adds a worker with a fresh identity.
func (d *Dispatcher) register(tx *txn, req api.RegisterRequest) (string, error) {
	w := store.Worker{
		ID: "w-" + store.NewID(tx.now), Name: req.Name, Types: req.Types, Handlers: req.Handlers, Labels: req.Labels, Slots: req.Slots,
		Resources: policy.Resources{MilliCPU: int64(req.CPU*1000 + 0.5), MemoryMB: req.MemoryMB, GPU: req.GPU},
		State:     store.WorkerActive, RegisteredAt: tx.now, LastSeenAt: tx.now,
	}
	if err := tx.w.WorkerUpsert(tx.ctx, w); err != nil {
		return "", err
	}
	if err := d.addWorker(w, tx.now); err != nil {
		return "", err
	}
	d.noteSeen(w)
	tx.event("", 0, "", store.EventWorkerRegistered, "worker:"+w.ID, map[string]any{"name": w.Name, "slots": w.Slots, "types": w.Types})
	return w.ID, nil
}

// deregister removes a leaving worker. It stops deliberately (a graceful
// stop, or a forced one), and it reports every attempt that ended: the
// ones it still holds either never started or were stopped by the
// shutdown, so they all go back to the queue uncharged.
func (d *Dispatcher) deregister(tx *txn, wk *workerRec) {
	for _, rec := range sortedRecs(wk.jobs) {
		if rec.job.State == store.StateLeased || rec.undelivered() {
			d.handBack(tx, rec, "worker drained before starting it")
			continue
		}
		if rec.job.CancelRequested {
			end := attemptEnd{outcome: store.OutcomeCancelled, class: store.FailCancelled, err: "cancelled; the worker shut down while stopping it",
				started: rec.job.StartedAt, actor: "worker:" + wk.w.ID}
			d.finish(tx, rec, store.StateCancelled, end)
			continue
		}
		d.handBack(tx, rec, "worker shut down while it ran; the job was stopped and goes back to the queue")
	}
	d.removeWorker(tx, wk, store.EventWorkerDrained)
}

// handBack returns a leased or running job to the queue without charging
// the attempt: the worker drained before starting it, never received it,
// or stopped it because it was shut down deliberately. The attempt number
// stays (the next lease is a new attempt, so a lease that did reach the
// worker after all stays fenced off), but the attempt is not charged
// against max_attempts: returned_leases grows by one. The job's start time
// is cleared (it is the current attempt's), and no error or run_at is
// recorded: nothing went wrong with the job.
func (d *Dispatcher) handBack(tx *txn, rec *jobRec, reason string) {
	wk := rec.worker
	if d.requeueUncharged(tx, rec) {
		tx.event(rec.job.ID, rec.job.Attempt, rec.job.Tenant, store.EventLeaseReturned, "system",
			map[string]string{"worker": wk.w.ID, "reason": reason})
	}
}

// requeueUncharged puts a leased or running job back in the queue with its
// age, the attempt not charged (returned_leases + 1, its start cleared),
// and frees its place on its worker and in the engine. It reports false
// when the store refused the transition.
func (d *Dispatcher) requeueUncharged(tx *txn, rec *jobRec) bool {
	returned := rec.job.ReturnedLeases + 1
	set := store.JobSet{State: store.Ptr(store.StatePending), WorkerID: store.Ptr(""), LeaseExpiresAt: &time.Time{},
		ReturnedLeases: &returned, StartedAt: &time.Time{}}
	if !d.transition(tx, rec, []store.State{store.StateLeased, store.StateRunning}, set) {
		return false
	}
	d.releaseFromWorker(tx, rec, policy.Released)
	rec.leasedAt, rec.deliveredAt, rec.preemptFor = time.Time{}, time.Time{}, ""
	if err := d.eng.Submit(policyJob(rec.job), tx.now); err != nil {
		tx.fatal(fmt.Errorf("requeue %s: %w", rec.job.ID, err))
	}
	return true
}

func (d *Dispatcher) removeWorker(tx *txn, wk *workerRec, ev store.EventType) {
	if _, err := d.eng.RemoveWorker(wk.w.ID); err != nil {
		tx.fatal(fmt.Errorf("engine remove worker %s: %w", wk.w.ID, err))
		return
	}
	wk.w.State, wk.w.LastSeenAt = store.WorkerGone, wk.lastSeen
	if err := tx.w.WorkerUpsert(tx.ctx, wk.w); err != nil {
		tx.fatal(err)
		return
	}
	delete(d.workers, wk.w.ID)
	tx.event("", 0, "", ev, "system", map[string]string{"worker": wk.w.ID})
	// Its waiting requests are answered empty now, not once the batch is
	// durable: an empty answer carries nothing that must not leave early,
	// and the worker is out of d.workers, where a rebuild after a failed
	// batch would look for requests to close.
	wk.closePolls()
}

// housekeep runs every batch: lost workers, SLA watch.
func (d *Dispatcher) housekeep(tx *txn) {
	ttl := d.leaseTTL()
	var lost map[string]*workerRec
	for id, wk := range d.workers {
		if tx.now.Sub(wk.lastSeen) > ttl {
			if lost == nil {
				lost = map[string]*workerRec{}
			}
			lost[id] = wk
		}
	}
	for _, wk := range sortedWorkers(lost) {
		d.log.Warn("worker lost", "worker", wk.w.ID, "name", wk.w.Name, "silent_for", tx.now.Sub(wk.lastSeen))
		for _, rec := range sortedRecs(wk.jobs) {
			d.leaseLost(tx, rec, fmt.Sprintf("worker %s silent for %s", wk.w.ID, tx.now.Sub(wk.lastSeen).Round(time.Millisecond)))
		}
		d.removeWorker(tx, wk, store.EventWorkerLost)
	}
	d.markSilent(tx)
	d.watchSLA(tx)
	d.fireSchedules(tx)
	d.purge(tx)
}

// watchSLA records SLA warnings (past expected time) and violations (past
// max time) of running attempts, once each; a strict violation asks the
// worker to stop the job.
func (d *Dispatcher) watchSLA(tx *txn) {
	for _, wk := range d.workers {
		for _, rec := range wk.jobs {
			d.checkSLA(tx, rec)
		}
	}
}

// The run time counts from the job's started_at: the real start once the
// worker reported it, the lease time before (never later than the real
// start, so a warning or violation can only come early, by the time the
// lease took to reach the worker). A lease still in the mailbox is not
// watched. The server's strict stop waits for the reported start: an
// alive worker reports it with its next heartbeat, so only one that has
// not within two heartbeat intervals past the limit is stopped on the
// lease time (startKnown).
func (d *Dispatcher) checkSLA(tx *txn, rec *jobRec) {
	j := &rec.job
	if j.State != store.StateRunning || j.StartedAt.IsZero() || rec.undelivered() {
		return
	}
	ran := tx.now.Sub(j.StartedAt)
	if j.Expected > 0 && ran > j.Expected && !rec.slaWarned {
		rec.slaWarned = true
		tx.event(j.ID, j.Attempt, j.Tenant, store.EventSLAWarning, "system", map[string]int64{"running_ms": ran.Milliseconds(), "expected_ms": j.Expected.Milliseconds()})
	}
	if j.Timeout == 0 || ran <= j.Timeout {
		return
	}
	d.recordSLAViolation(tx, rec, ran)
	// Strict: the worker kills at the deadline; if it has not reported a
	// grace period later, the server asks it to stop through the heartbeat,
	// and the attempt ends as a timeout.
	if strict(j.SLAPolicy) && ran > j.Timeout+slaGrace && !j.CancelRequested && d.startKnown(rec, ran-j.Timeout-slaGrace) {
		rec.timedOut = true
		d.transition(tx, rec, []store.State{store.StateRunning}, store.JobSet{CancelRequested: store.Ptr(true)})
	}
}

// recordSLAViolation writes the attempt's sla_violation event, once: when
// the server sees it run past its limit, or when the worker reports it
// killed at the limit, whichever comes first.
func (d *Dispatcher) recordSLAViolation(tx *txn, rec *jobRec, ran time.Duration) {
	if rec.slaViolated {
		return
	}
	j := &rec.job
	rec.slaViolated = true
	ev := store.EventSLAViolation
	if j.SLAPolicy == store.SLAWarningOnly {
		ev = store.EventSLAWarning // warning_only: warnings, never a violation (docs/operations.md)
	}
	tx.event(j.ID, j.Attempt, j.Tenant, ev, "system",
		map[string]any{"running_ms": ran.Milliseconds(), "timeout_ms": j.Timeout.Milliseconds(), "policy": j.SLAPolicy})
}

// startKnown says whether rec's run time may be trusted for a strict stop
// that is past due by over: its start was reported, or the worker had two
// heartbeat intervals to report it and did not.
func (d *Dispatcher) startKnown(rec *jobRec, over time.Duration) bool {
	return rec.startReported || over > 2*d.cfg.Server.HeartbeatInterval.D()
}

// slaGrace is how long past a strict deadline the server waits for the
// worker's own kill before it asks for one.
const slaGrace = 5 * time.Second

func strict(p store.SLAPolicy) bool { return p == "" || p == store.SLAStrict }
