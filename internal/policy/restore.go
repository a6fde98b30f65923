package policy

import (
	"fmt"
	"time"
)

// Restore puts a job straight into the running state on a worker, as it
// was before a restart: the server rebuilds its engine from the store and
// must account for leases that are still live. Caps and capacity are
// charged as for an admission, even beyond their limits (the work is
// already running); the fairness key is not charged again.
func (e *Engine) Restore(j Job, workerID string, admittedAt time.Time, cost float64) error {
	w, ok := e.workers[workerID]
	if !ok {
		return fmt.Errorf("%w: %s", ErrUnknownWorker, workerID)
	}
	j.DependsOn = nil
	en, err := e.newEntry(j, admittedAt)
	if err != nil {
		return err
	}
	e.jobs[j.ID] = en
	e.keyGained(en.fk)
	w.freeSlots--
	w.free = w.free.Sub(en.job.Resources)
	w.running++
	w.addJob(en)
	if !w.offline {
		e.free--
	}
	e.running++
	e.gen++
	en.ln.usage = en.ln.usage.Add(en.job.Resources)
	en.ln.slots++
	en.typ.running++
	if en.tr != nil {
		en.tr.running++
	}
	en.tnt.running++
	en.tnt.used = en.tnt.used.Add(en.job.Resources)
	if id := en.conflictID(); id.group != "" {
		e.holdKey(e.conflictSlot(id), en)
	}
	en.state, en.wk, en.admittedAt, en.cost = stateRunning, w, admittedAt, cost
	return nil
}
