package dispatch

import (
	"fmt"
	"time"

	"github.com/fairwayhq/fairway/internal/store"
)

// Preemption before delivery.
//
// A lease is made in a batch and leaves the server only once that batch is
// durable and its worker polls. Until then the job has not started
// anywhere, so its slot can still be given to a job of higher priority that
// arrived meanwhile and found every slot it could use taken: the lease is
// withdrawn (the job goes back to pending with the attempt and age it had,
// its fairness key stays charged; event "unleased") and the engine admits
// again. Without it, a high-priority job submitted just after a batch of
// leases went to low-priority jobs waits for the next slot to free, while
// those low jobs start after it was accepted.

// preempt gives undelivered slots to this batch's arrivals that wait only
// for a slot, one withdrawal per arrival, best arrival first.
func (d *Dispatcher) preempt(tx *txn) {
	for _, rec := range tx.arrivals {
		if tx.err != nil {
			return
		}
		if d.jobs[rec.job.ID] != rec || rec.job.State != store.StatePending || !d.eng.WaitsForSlot(rec.job.ID) {
			continue
		}
		victim := d.undeliveredBelow(rec)
		if victim == nil {
			continue
		}
		d.unlease(tx, victim, rec)
		d.admit(tx)
		markPreempting(rec)
	}
}

// markPreempting flags rec's lease, if the admission just made one, as
// having taken a withdrawn lease's slot.
func markPreempting(rec *jobRec) {
	if rec.worker == nil {
		return
	}
	box := rec.worker.mailbox
	for i := len(box) - 1; i >= 0; i-- {
		if box[i].lease.Job.ID == rec.job.ID {
			box[i].preempting = true
			return
		}
	}
}

// undeliveredBelow picks the lease to withdraw for rec: one still in a
// mailbox, in rec's lane, of strictly lower priority, on a worker that
// could run rec. The lowest priority goes first, then the latest admitted.
func (d *Dispatcher) undeliveredBelow(rec *jobRec) *jobRec {
	var best *jobRec
	var bestSeq uint64
	for _, wk := range d.workers {
		if wk.draining || wk.silent || !d.eng.CouldRun(rec.job.ID, wk.w.ID) {
			continue
		}
		for _, it := range wk.mailbox {
			v := d.mailRec(wk, it)
			if v == nil || v.job.Lane != rec.job.Lane || v.job.Priority >= rec.job.Priority {
				continue
			}
			if best == nil || v.job.Priority < best.job.Priority ||
				(v.job.Priority == best.job.Priority && (it.seq > bestSeq || (it.seq == bestSeq && v.job.ID > best.job.ID))) {
				best, bestSeq = v, it.seq
			}
		}
	}
	return best
}

// unlease withdraws rec's undelivered lease in favour of by: rec is
// pending again with the attempt it had before (the withdrawn attempt
// never left the server, so its number is free) and waits with its age.
func (d *Dispatcher) unlease(tx *txn, rec, by *jobRec) {
	d.withdrawLease(tx, rec, map[string]any{"worker": rec.worker.w.ID, "for_job": by.job.ID, "for_priority": by.job.Priority})
}

// withdrawLease takes back rec's lease that has not left the server: rec
// is pending again with the attempt it had before and waits with its
// age. detail says why, in the unleased event.
func (d *Dispatcher) withdrawLease(tx *txn, rec *jobRec, detail map[string]any) {
	wk := rec.worker
	withdrawn := rec.job.Attempt
	prev := withdrawn - 1
	set := store.JobSet{State: store.Ptr(store.StatePending), Attempt: &prev, WorkerID: store.Ptr(""), LeaseExpiresAt: &time.Time{},
		StartedAt: &time.Time{}}
	if !d.transition(tx, rec, []store.State{store.StateRunning, store.StateLeased}, set) {
		return
	}
	wk.mailbox = dropMail(wk.mailbox, rec.job.ID)
	delete(wk.jobs, rec.job.ID)
	rec.worker, rec.leasedAt = nil, time.Time{}
	if err := d.eng.Unadmit(rec.job.ID, tx.now); err != nil {
		tx.fatal(fmt.Errorf("engine unadmit %s: %w", rec.job.ID, err))
		return
	}
	tx.event(rec.job.ID, withdrawn, rec.job.Tenant, store.EventUnleased, "system", detail)
}

func dropMail(box []mailItem, jobID string) []mailItem {
	for i, it := range box {
		if it.lease.Job.ID == jobID {
			return append(box[:i], box[i+1:]...)
		}
	}
	return box
}

// urgent reports whether c brings a job that outranks a lease still in a
// mailbox of its lane: applying c now may let that job take the lease's
// slot (preempt); what the job's type and resources allow is checked then.
func (d *Dispatcher) urgent(c command) bool {
	if len(c.arriving) == 0 {
		return false
	}
	for _, wk := range d.workers {
		if wk.draining {
			continue
		}
		for _, it := range wk.mailbox {
			rec := d.mailRec(wk, it)
			if rec == nil {
				continue
			}
			for _, a := range c.arriving {
				if rec.job.Lane == a.lane && rec.job.Priority < a.priority {
					return true
				}
			}
		}
	}
	return false
}
