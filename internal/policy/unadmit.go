package policy

import (
	"fmt"
	"time"
)

// Unadmit undoes the admission of a running job whose work has not begun
// anywhere: the server admitted it, but the lease never left the process.
// Its slot and resources go back to the pool (and what it blocked is
// released, as by Finish) and it waits again in its queue with the age it
// had. Nothing is observed as cost. The fairness cost charged at its
// admission stays charged: a key's accumulated cost only grows, which the
// lazily refreshed class heaps rely on, so a withdrawn admission costs its
// key one job's estimate. It is how a higher-priority arrival takes a slot
// promised to, but not yet delivered to, a lower-priority job. The rate
// limits' tokens it took stay spent (the simulator unadmits a preempted
// run that did start): a limit errs towards fewer starts, never more.
func (e *Engine) Unadmit(id string, now time.Time) error {
	en, ok := e.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if en.state != stateRunning {
		return fmt.Errorf("%w: %s is %s", ErrNotRunning, id, en.state)
	}
	e.release(en, now)
	en.wk, en.admittedAt, en.cost = nil, time.Time{}, 0
	en.grp, en.cls, en.heapIdx = nil, nil, -1
	en.ln.pending++
	e.enqueue(en, now)
	return nil
}

// CouldRun reports whether the worker could ever run the job: it supports
// the job's type and labels, and its whole capacity (not what is free now)
// covers the job's resources. False if either is unknown.
func (e *Engine) CouldRun(jobID, workerID string) bool {
	en, ok := e.jobs[jobID]
	w, wok := e.workers[workerID]
	if !ok || !wok || w.removed || w.Slots <= 0 {
		return false
	}
	return w.supports(en.typ.name, en.job.Labels) && w.Resources.Covers(en.job.Resources)
}
